package x86

import (
	"debug/elf"
	"fmt"
	"os"
	"testing"
)

// fastDecodeCorpus are the binaries whose code TestFastDecodeMatches
// decodes at every byte offset: python3 (libpython is linked into
// Debian's), the C library and the dynamic loader, and coreutils.
var fastDecodeCorpus = []string{
	"/usr/bin/python3.11",
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/lib64/ld-linux-x86-64.so.2",
	"/lib/x86_64-linux-gnu/libm.so.6",
	"/usr/bin/ls",
	"/usr/bin/perl",
}

// execCode returns the bytes of f's executable sections.
func execCode(t testing.TB, path string) [][]byte {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out [][]byte
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 {
			b, err := s.Data()
			if err != nil {
				t.Fatalf("%s: %s: %v", path, s.Name, err)
			}
			out = append(out, b)
		}
	}
	return out
}

// instDiff describes how two decodings differ, or returns "".
func instDiff(a, b *Inst) string {
	fa, fb := funcPC(a.Fn), funcPC(b.Fn)
	var ia, ib uintptr
	if h := syncInner(a.Fn); h != nil {
		ia = funcPC(h)
	}
	if h := syncInner(b.Fn); h != nil {
		ib = funcPC(h)
	}
	x, y := *a, *b
	x.Fn, y.Fn = nil, nil
	if fa == fb && ia == ib && fmt.Sprint(x) == fmt.Sprint(y) {
		return ""
	}
	return fmt.Sprintf("\n fast %+v fn %x inner %x\n slow %+v fn %x inner %x", x, fa, ia, y, fb, ib)
}

// checkFastDecode decodes code at pc both ways and fails if the fast
// decoder's result differs from x86asm's; it reports whether the fast
// decoder took the instruction.
func checkFastDecode(t testing.TB, pc uint64, code []byte) bool {
	var fast, slow Inst
	fast.PC = pc
	if !fastDecode(&fast, pc, code) {
		return false
	}
	decodeFinish(&fast)
	decodeSlow(&slow, pc, code)
	if d := instDiff(&fast, &slow); d != "" {
		t.Fatalf("% x (%s):%s", code[:min(len(code), 15)], Disasm(pc, code), d)
	}
	return true
}

// TestFastDecodeMatches decodes the byte offsets of the executable
// sections of the corpus binaries with the fast decoder and with x86asm:
// whenever the fast decoder takes an instruction, the result must be the
// same, handler included. (Offsets inside instructions give it byte
// sequences compilers do not emit, too.) It also reports the share of
// instructions, in a linear sweep, that the fast decoder takes.
func TestFastDecodeMatches(t *testing.T) {
	n := 0
	for _, path := range fastDecodeCorpus {
		secs := execCode(t, path)
		if secs == nil {
			t.Logf("%s: not found, skipped", path)
			continue
		}
		n++
		// Every fifth offset (every 31st with -short) keeps the test
		// within seconds; TTD_DECODE_EVERY=1 takes them all.
		step := 5
		if testing.Short() {
			step = 31
		}
		if os.Getenv("TTD_DECODE_EVERY") == "1" {
			step = 1
		}
		var offsets, taken, insts, fastInsts int
		for _, code := range secs {
			for off := 0; off < len(code); off += step {
				offsets++
				if checkFastDecode(t, uint64(0x400000+off), code[off:min(len(code), off+15)]) {
					taken++
				}
			}
			for off := 0; off < len(code); {
				in := decodeInst(uint64(off), code[off:min(len(code), off+15)])
				if in.Len == 0 {
					break
				}
				insts++
				var f Inst
				if fastDecode(&f, uint64(off), code[off:min(len(code), off+15)]) {
					fastInsts++
				}
				off += int(in.Len)
			}
		}
		t.Logf("%s: fast decoder took %d of %d offsets; %.1f%% of %d instructions of a linear sweep",
			path, taken, offsets, 100*float64(fastInsts)/float64(max(insts, 1)), insts)
	}
	if n == 0 {
		t.Skip("no corpus binary found")
	}
}

// TestFastDecodeCases covers forms and boundaries by hand: the byte
// registers with and without REX, rip-relative and SIB addressing with
// and without base and index, truncated instructions (deferred).
func TestFastDecodeCases(t *testing.T) {
	cases := []struct {
		hex  string
		fast bool
	}{
		{"89 e5", true},                   // mov ebp, esp
		{"48 89 e5", true},                // mov rbp, rsp
		{"66 89 e5", true},                // mov bp, sp
		{"88 e0", true},                   // mov al, ah
		{"40 88 e0", true},                // mov al, spl
		{"44 88 c7", true},                // mov dil, r8b
		{"48 8b 05 10 00 00 00", true},    // mov rax, [rip+0x10]
		{"48 8b 04 24", true},             // mov rax, [rsp]
		{"48 8b 04 25 10 00 00 00", true}, // mov rax, [0x10]
		{"4a 8b 04 e5 10 00 00 00", true}, // mov rax, [r12*8+0x10]
		{"42 8b 44 a5 f0", true},          // mov eax, [rbp+r12*4-0x10]
		{"41 8b 45 00", true},             // mov eax, [r13]
		{"48 8d 04 80", true},             // lea rax, [rax+rax*4]
		{"48 8d c0", false},               // lea with a register: #UD
		{"83 c0 ff", true},                // add eax, -1
		{"80 c1 ff", true},                // add cl, 0xff
		{"48 81 e4 f0 ff ff ff", true},
		{"c1 e0 04", true},
		{"d1 e8", true},
		{"d3 e0", true},
		{"f6 c1 80", true},             // test cl, 0x80
		{"f7 d8", true},                // neg eax
		{"ff d0", true},                // call rax
		{"ff 24 c5 00 10 00 00", true}, // jmp [rax*8+0x1000]
		{"ff 35 00 10 00 00", true},    // push [rip+0x1000]
		{"66 ff d0", false},            // call ax: deferred
		{"48 b8 88 77 66 55 44 33 22 11", true},
		{"b8 ff ff ff ff", true},
		{"66 b8 ff ff", true},
		{"b0 ff", true},
		{"e8 00 00 00 00", true},
		{"e9 fb ff ff ff", true},
		{"74 fe", true},
		{"0f 84 00 01 00 00", true},
		{"0f 94 c0", true},
		{"0f 44 c1", true},
		{"48 0f af c1", true},
		{"48 63 c7", true},
		{"63 c7", true},
		{"0f b6 c4", true},
		{"40 0f b6 c7", true},
		{"48 0f bf 07", true},
		{"6a ff", true},
		{"68 00 10 00 00", true},
		{"6b c0 0c", true},
		{"69 c0 00 01 00 00", true},
		{"c3", true},
		{"c9", true},
		{"90", true},
		{"0f 05", true},
		{"f3 c3", false},                      // rep ret: deferred
		{"f0 48 01 07", false},                // lock add: deferred
		{"64 48 8b 04 25 28 00 00 00", false}, // fs: deferred
		{"48 8b 04", false},                   // truncated
		{"48 8b 04 25 10 00 00", false},
		{"e8 00 00 00", false},
		{"0f", false},
		{"66", false},
		{"48", false},
	}
	for _, c := range cases {
		code := parseHex(t, c.hex)
		if got := checkFastDecode(t, 0x401000, code); got != c.fast {
			t.Errorf("% x: fast decoder took it: %v, want %v", code, got, c.fast)
		}
	}
}

func parseHex(t *testing.T, s string) []byte {
	var b []byte
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		var v byte
		if _, err := fmt.Sscanf(s[i:i+2], "%02x", &v); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		b = append(b, v)
		i += 2
	}
	return b
}

// FuzzFastDecode checks the fast decoder against x86asm on any bytes.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{"\x48\x8b\x04\x24", "\x66\x89\xe5", "\x40\x88\xe0", "\xff\x24\xc5\x00\x10\x00\x00", "\xf6\xc1\x80"} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile("/lib/x86_64-linux-gnu/libc.so.6"); err == nil && len(b) > 0x30000 {
		for off := 0x28000; off < 0x28400; off += 64 {
			f.Add(b[off : off+15])
		}
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		checkFastDecode(t, 0x7000_0000, code[:min(len(code), 15)])
	})
}

// decodeBench returns the instructions of a linear sweep of libc's code
// (the first n), as byte slices.
func decodeBench(b *testing.B, n int) [][]byte {
	secs := execCode(b, "/lib/x86_64-linux-gnu/libc.so.6")
	if secs == nil {
		b.Skip("libc.so.6 not found")
	}
	var out [][]byte
	for _, code := range secs {
		for off := 0; off < len(code) && len(out) < n; {
			in := decodeInst(uint64(off), code[off:min(len(code), off+15)])
			if in.Len == 0 {
				break
			}
			out = append(out, code[off:min(len(code), off+15)])
			off += int(in.Len)
		}
	}
	return out
}

// BenchmarkDecode measures decoding libc's instructions (ns/op is per
// instruction): Fast with the fast decoder in front of x86asm, as ttd
// decodes, X86asm through x86asm alone.
func BenchmarkDecode(b *testing.B) {
	code := decodeBench(b, 20000)
	for _, c := range []struct {
		name string
		fn   func(*Inst, uint64, []byte)
	}{{"Fast", decodeInto}, {"X86asm", decodeSlow}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var in Inst
			for i := 0; i < b.N; i++ {
				c.fn(&in, 0x1000, code[i%len(code)])
			}
		})
	}
}

// BenchmarkDecodeBlocks measures decoding libc's code as blocks into a
// code cache, as a program's start-up does: the instructions' decoding,
// and the block's allocation and copy (ns/op is per instruction).
func BenchmarkDecodeBlocks(b *testing.B) {
	secs := execCode(b, "/lib/x86_64-linux-gnu/libc.so.6")
	if secs == nil {
		b.Skip("libc.so.6 not found")
	}
	code := secs[0]
	for _, s := range secs {
		if len(s) > len(code) {
			code = s
		}
	}
	const base = 0x10000
	code = code[:min(len(code), 4<<20)]
	mem := NewMemory()
	for off := 0; off < len(code); off += PageSize {
		p := NewPage()
		copy(p.Data[:], code[off:])
		mem.SetPage((base+uint64(off))>>PageShift, p, PermRead|PermExec)
	}
	b.ReportAllocs()
	var cc *CodeCache
	pc, insts := uint64(base), 0
	for i := 0; i < b.N; {
		if cc == nil || pc >= base+uint64(len(code))-16 {
			cc, pc = NewCodeCache(mem), base
		}
		blk := cc.decodeBlock(pc)
		pc = blk.End
		i += len(blk.Insts)
		insts += len(blk.Insts)
	}
	if insts == 0 {
		b.Fatal("decoded nothing")
	}
}
