package x86

// The differential test harness: every instruction in a table is executed
// on the host CPU (through testdata/native.c) and in the interpreter from
// the same random input states, and the complete resulting states are
// compared: the 16 general registers, RIP, the arithmetic flags and DF,
// XMM0-15, MXCSR, MM0-7 with the x87 status and tag words, a 512-byte data
// region and the signal (if any) with its si_code and address.
//
// A table entry is an instruction in GNU assembler syntax, assembled with
// `as` at test time, plus an optional generator for its inputs. Before the
// generator runs, every input is random: general registers (rsi points at
// the data region, rdi 256 bytes into it, rsp 384 bytes into it, so memory
// operands and pushes land in compared memory), flags, XMM, MM and the data
// region; MXCSR is 0x1f80. See diffGen for what generators can use.
//
// The test is skipped loudly when gcc or as is missing.

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"golang.org/x/arch/x86/x86asm"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"ttd/predict"
	"ttd/x86/f80"

	"golang.org/x/sys/cpu"
)

// Addresses of the test's memory layout, shared with testdata/native.c.
const (
	diffCodeAddr = 0x10000000
	diffCodeOff  = 0x800
	diffInstAddr = diffCodeAddr + diffCodeOff
	diffROPage   = 0x1ffff000
	diffDataPage = 0x20000000
	diffMemSize  = 512
	diffMemAddr  = diffDataPage + PageSize - diffMemSize

	diffDefaultN = 200
)

// diffState mirrors struct state in testdata/native.c.
type diffState struct {
	R      [16]uint64
	Rflags uint64
	RIP    uint64 // output only
	MXCSR  uint32
	FSW    uint16 // x87 status word with TOP; output only
	FTW    uint8  // abridged x87 tag word; output only
	X      [16]XMM
	MM     [8]uint64 // significands of ST0-7
	YH     [16]XMM   // bits 128-255 of YMM0-15
	Mem    [diffMemSize]byte
}

const diffStateSize = 16*8 + 8 + 8 + 4 + 2 + 1 + 1 + 16*16 + 8*8 + 16*16 + diffMemSize

// diffResult mirrors struct output in testdata/native.c.
type diffResult struct {
	Sig, Code int32
	Addr      uint64
	S         diffState
	Err       string // emulator only: an unimplemented instruction
	Pred      string // emulator with a prediction cache: what it did
	// Filled: the emulator's prediction cache started holding the data
	// region; Missed: the reads it did not predict (logged while
	// recording). A replay reads what the host read when a recording
	// from the same start missed none.
	Filled bool
	Missed uint64
}

// diffTest is one row of a differential test table.
type diffTest struct {
	asm string // one instruction, GNU syntax (or .byte ...)
	// gen adjusts the random input state; nil keeps it.
	gen func(g *diffGen, s *diffState)
	n   int // number of cases; 0 means diffDefaultN
	// undef are the RFLAGS bits the instruction leaves undefined.
	undef uint64
	// jit: the translator must translate the instruction (the table
	// sets it where the host has what the translation needs).
	jit bool
}

// diffTable is a differential test table under construction.
type diffTable []diffTest

func (t *diffTable) add(asm string, n int, gen func(*diffGen, *diffState)) {
	*t = append(*t, diffTest{asm: asm, n: n, gen: gen})
}

// addU adds a row whose instruction leaves the flags undef undefined.
func (t *diffTable) addU(asm string, n int, gen func(*diffGen, *diffState), undef uint64) {
	*t = append(*t, diffTest{asm: asm, n: n, gen: gen, undef: undef})
}

// both adds the 128- and 256-bit register forms of a three-operand VEX
// op and its memory forms (unaligned for the 256-bit one).
func (t *diffTable) both(op string, n int, gen func(*diffGen, *diffState)) {
	t.add(op+" %xmm2, %xmm3, %xmm1", n, gen)
	t.add(op+" %ymm2, %ymm3, %ymm1", n, gen)
	t.add(op+" 4(%rsi), %ymm3, %ymm1", n/4+1, gen) // no alignment
	t.add(op+" (%rsi), %xmm3, %xmm1", n/4+1, gen)
}

// diffGen is what input generators get: a random source and the index of
// the case, so that a generator can enumerate fixed edge cases first.
type diffGen struct {
	*rand.Rand
	I int
}

type diffCase struct {
	test *diffTest
	row  int // the test's index in its table
	code []byte
	in   diffState
}

func putState(b []byte, s *diffState) {
	le := binary.LittleEndian
	o := 0
	for _, v := range s.R {
		le.PutUint64(b[o:], v)
		o += 8
	}
	le.PutUint64(b[o:], s.Rflags)
	le.PutUint64(b[o+8:], s.RIP)
	le.PutUint32(b[o+16:], s.MXCSR)
	le.PutUint16(b[o+20:], s.FSW)
	b[o+22] = s.FTW
	o += 24
	for _, x := range s.X {
		le.PutUint64(b[o:], x[0])
		le.PutUint64(b[o+8:], x[1])
		o += 16
	}
	for _, v := range s.MM {
		le.PutUint64(b[o:], v)
		o += 8
	}
	for _, x := range s.YH {
		le.PutUint64(b[o:], x[0])
		le.PutUint64(b[o+8:], x[1])
		o += 16
	}
	copy(b[o:], s.Mem[:])
}

func getState(b []byte, s *diffState) {
	le := binary.LittleEndian
	o := 0
	for i := range s.R {
		s.R[i] = le.Uint64(b[o:])
		o += 8
	}
	s.Rflags = le.Uint64(b[o:])
	s.RIP = le.Uint64(b[o+8:])
	s.MXCSR = le.Uint32(b[o+16:])
	s.FSW = le.Uint16(b[o+20:])
	s.FTW = b[o+22]
	o += 24
	for i := range s.X {
		s.X[i] = XMM{le.Uint64(b[o:]), le.Uint64(b[o+8:])}
		o += 16
	}
	for i := range s.MM {
		s.MM[i] = le.Uint64(b[o:])
		o += 8
	}
	for i := range s.YH {
		s.YH[i] = XMM{le.Uint64(b[o:]), le.Uint64(b[o+8:])}
		o += 16
	}
	copy(s.Mem[:], b[o:])
}

// diffTools checks for gcc and as, skipping the test loudly without them.
func diffTools(t *testing.T) {
	for _, tool := range []string{"gcc", "as"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPING the differential test against the host CPU: %s not found", tool)
		}
	}
}

// buildNative compiles testdata/native.c into dir.
func buildNative(t *testing.T, dir string) string {
	exe := filepath.Join(dir, "native")
	out, err := exec.Command("gcc", "-O2", "-o", exe, "testdata/native.c").CombinedOutput()
	if err != nil {
		t.Fatalf("building testdata/native.c: %v\n%s", err, out)
	}
	return exe
}

var asErrLine = regexp.MustCompile(`\.s:(\d+): (.*)`)

// assemble assembles each instruction separately into its bytes.
func assemble(t *testing.T, dir string, asms []string) [][]byte {
	var src strings.Builder
	src.WriteString(".text\n")
	for i, a := range asms {
		fmt.Fprintf(&src, "__diff_%d: %s\n", i, a)
	}
	fmt.Fprintf(&src, "__diff_%d:\n", len(asms))
	sfile := filepath.Join(dir, "insns.s")
	ofile := filepath.Join(dir, "insns.o")
	if err := os.WriteFile(sfile, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("as", "--64", "-o", ofile, sfile).CombinedOutput(); err != nil {
		var msgs []string
		for _, m := range asErrLine.FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.Atoi(m[1])
			if n >= 2 && n-2 < len(asms) {
				msgs = append(msgs, fmt.Sprintf("%q: %s", asms[n-2], m[2]))
			}
		}
		t.Fatalf("as: %v\n%s", err, strings.Join(msgs, "\n"))
	}
	f, err := elf.Open(ofile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text, err := f.Section(".text").Data()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	off := make([]int, len(asms)+1)
	for _, s := range syms {
		if n, ok := strings.CutPrefix(s.Name, "__diff_"); ok {
			i, _ := strconv.Atoi(n)
			off[i] = int(s.Value)
		}
	}
	codes := make([][]byte, len(asms))
	for i := range asms {
		codes[i] = text[off[i]:off[i+1]]
		if n := len(codes[i]); n == 0 || n > 15 {
			t.Fatalf("%q assembles to %d bytes", asms[i], n)
		}
	}
	return codes
}

// diffBase fills s with the default random input.
func diffBase(r *rand.Rand, s *diffState) {
	for i := range s.R {
		switch r.Intn(4) {
		case 0:
			s.R[i] = uint64(r.Intn(256))
		case 1:
			s.R[i] = uint64(int64(int32(r.Uint32())))
		default:
			s.R[i] = r.Uint64()
		}
	}
	s.R[RSI] = diffMemAddr
	s.R[RDI] = diffMemAddr + 256
	s.R[RSP] = diffMemAddr + 384
	s.Rflags = 0x202 | uint64(r.Intn(1<<12))&ArithFlags
	s.MXCSR = 0x1f80
	for i := range s.X {
		s.X[i] = XMM{r.Uint64(), r.Uint64()}
	}
	for i := range s.MM {
		s.MM[i] = r.Uint64()
	}
	if diffYMM {
		for i := range s.YH {
			s.YH[i] = XMM{r.Uint64(), r.Uint64()}
		}
	}
	r.Read(s.Mem[:])
}

// diffYMM: the host saves YMM state in signal frames (it has AVX), so
// inputs get random upper halves and results compare them.
var diffYMM = cpu.X86.HasAVX && cpu.X86.HasOSXSAVE

// runNative runs the cases on the host CPU.
func runNative(exe string, cases []diffCase) ([]diffResult, error) {
	cmd := exec.Command(exe)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		w := bufio.NewWriterSize(stdin, 1<<16)
		buf := make([]byte, 24+diffStateSize)
		for i := range cases {
			c := &cases[i]
			clear(buf)
			buf[0] = byte(len(c.code))
			copy(buf[8:24], c.code)
			putState(buf[24:], &c.in)
			if _, err := w.Write(buf); err != nil {
				break
			}
		}
		w.Flush()
		stdin.Close()
	}()
	res := make([]diffResult, len(cases))
	r := bufio.NewReaderSize(stdout, 1<<16)
	buf := make([]byte, 16+diffStateSize)
	for i := range res {
		if _, err := io.ReadFull(r, buf); err != nil {
			cmd.Wait()
			return nil, fmt.Errorf("native helper died at case %d (%q): %v\n%s", i, cases[i].test.asm, err, stderr.String())
		}
		res[i].Sig = int32(binary.LittleEndian.Uint32(buf))
		res[i].Code = int32(binary.LittleEndian.Uint32(buf[4:]))
		res[i].Addr = binary.LittleEndian.Uint64(buf[8:])
		getState(buf[16:], &res[i].S)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("native helper: %v\n%s", err, stderr.String())
	}
	return res, nil
}

// diffEmu runs cases in the interpreter with native.c's memory layout.
type diffEmu struct {
	mem  *Memory
	cc   *CodeCache
	code *Page
	data *Page
	last []byte
	// pred runs with a prediction cache and an observer that logs what it
	// does not predict (predObserver), as a recording does (with log,
	// translated code logs it: logObserver), or with replay, takes the
	// cache's prediction, as a replay does.
	pred, log, replay bool
	n                 int
}

// predObserver does what the recorder does with the reads and writes the
// prediction cache leaves to it: it enters them into the cache, counts
// the reads, and "logs" a read by adding its value to a checksum. With
// replay, it does what the reader does with a read that is not a logged
// one: the read gets the value the cache predicts, which memory takes.
type predObserver struct {
	logged, sum, missed uint64
	replay              bool
}

func (o *predObserver) Instruction(c *CPU, in *Inst) {}
func (o *predObserver) WantInstructions() bool       { return false }
func (o *predObserver) MemRead(c *CPU, addr uint64, size int, val uint64) uint64 {
	orig, got, shift := val, uint64(0), uint(0)
	for size > 0 {
		n := predict.Split(addr, size)
		v := val & (1<<(8*uint(n)) - 1)
		if n == 8 {
			v = val
		}
		c.Pred.Reads++
		if o.replay {
			if p := c.Pred.Predict(addr, n); p != v {
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], p)
				c.Mem.Poke(addr, b[:n])
				v = p
			}
		} else {
			if n == 1 {
				if w, hit := c.Pred.ReadWord(addr, 1, v, c.Mem.Read64(addr&^7)); !hit {
					o.logRead(c.Pred.Reads, w)
				}
			} else if !c.Pred.Read(addr, n, v) {
				o.logRead(c.Pred.Reads, v)
			}
		}
		got |= v << shift
		shift += 8 * uint(n)
		addr += uint64(n)
		size -= n
		val >>= 8 * uint(n)
	}
	if o.replay {
		return got
	}
	return orig
}

func (o *predObserver) logRead(n, v uint64) {
	o.logged++
	o.missed++
	o.sum = o.sum*31 + v + n<<40
}

// logObserver is predObserver as the recorder is: translated code logs the
// reads it does not predict itself (ReadLogger).
type logObserver struct{ predObserver }

func (o *logObserver) LoggedReads(c *CPU, reads []LoggedRead) {
	for _, e := range reads {
		if e.Size == 0 {
			o.logSync(e.Reads, e.Val)
			continue
		}
		o.logRead(e.Reads+1, e.Val)
	}
}

// logSync "logs" a key frame: the position and kind of a synchronising
// instruction.
func (o *predObserver) logSync(pos, kind uint64) {
	o.logged++
	o.sum = o.sum*37 + pos<<8 + kind
}

func (o *predObserver) MemWrite(c *CPU, addr uint64, size int, val uint64) {
	for size > 0 {
		n := predict.Split(addr, size)
		c.Pred.Update(addr, n, val)
		addr += uint64(n)
		size -= n
		val >>= 8 * uint(n)
	}
}
func (o *predObserver) NonDet(c *CPU, in *Inst, vals []uint64) []uint64 { return vals }
func (o *predObserver) Decoded(c *CPU, b *Block)                        {}
func (o *predObserver) Sync(c *CPU, in *Inst) {
	kind := uint64(LogLocked)
	switch in.Op {
	case x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE:
		kind = LogFence
	}
	o.logSync(c.Retired(), kind)
}

func newDiffEmu() *diffEmu {
	e := &diffEmu{mem: NewMemory()}
	e.cc = NewCodeCache(e.mem)
	e.code = NewPage()
	for i := range e.code.Data {
		e.code.Data[i] = 0xcc
	}
	e.mem.SetPage(diffCodeAddr>>PageShift, e.code, PermRead|PermExec)
	ro := NewPage()
	for i := range ro.Data {
		ro.Data[i] = byte(i * 7)
	}
	e.mem.SetPage(diffROPage>>PageShift, ro, PermRead)
	e.data = NewPage()
	e.mem.SetPage(diffDataPage>>PageShift, e.data, PermRead|PermWrite)
	return e
}

// Linux signal numbers and si_codes the harness reports.
const (
	sigILL  = 4
	sigTRAP = 5
	sigFPE  = 8
	sigSEGV = 11
)

// run runs code from state in. With jit, it runs the snippet as a whole
// block through the block translator (jit.go) with a threshold of 0, so
// the translated code runs it the first time: the int3 after the snippet
// ends the block unless the snippet's last instruction did.
func (e *diffEmu) run(code []byte, in *diffState, jit bool) (res diffResult) {
	if !bytes.Equal(code, e.last) {
		var buf [16]byte
		for i := range buf {
			buf[i] = 0xcc
		}
		copy(buf[:], code)
		if err := e.mem.Poke(diffInstAddr, buf[:]); err != nil {
			panic(err)
		}
		e.last = code
	}
	*e.data.Data = [PageSize]byte{}
	copy(e.data.Data[PageSize-diffMemSize:], in.Mem[:])
	c := NewCPU(e.mem, e.cc)
	var obs *predObserver
	if e.pred {
		// Every other case starts with the cache holding the data, so
		// that reads are predicted; the others miss.
		obs = &predObserver{replay: e.replay}
		c.Pred, c.Obs = predict.New(6), obs
		if e.log {
			lo := &logObserver{}
			obs, c.Obs = &lo.predObserver, lo
		}
		if e.n++; e.n%2 == 0 {
			c.Pred.Fill(diffMemAddr, in.Mem[:])
			res.Filled = true
		}
	}
	c.R = in.R
	c.SetRflags(in.Rflags)
	c.RIP = diffInstAddr
	c.MXCSR = in.MXCSR
	c.X = in.X
	c.YH = in.YH
	c.FPU.CW = 0x37f
	for i, v := range in.MM {
		c.FPU.Regs[i] = f80.F80{Mant: v, SE: 0xffff}
	}
	// Run every instruction of the snippet (most are one instruction)
	// up to its end, following a jump or call forward over the bytes it
	// skips (which the host does not run either).
	n := uint64(0)
	for off := 0; off < len(code); n++ {
		in := Decode(diffInstAddr+uint64(off), code[off:])
		if in.Len == 0 {
			break
		}
		off += int(in.Len)
		if a := in.Args[0]; a.Kind == KRel && (in.Op == x86asm.JMP || in.Op == x86asm.CALL) && a.Imm > diffInstAddr+uint64(off) {
			off = int(a.Imm - diffInstAddr)
		}
	}
	end := diffInstAddr + uint64(len(code))
	if !jit {
		// The interpreter: the blocks of rows that end in a jump run
		// whole (runBlock), and would be translated at the threshold.
		defer SetJIT(SetJIT(false, 0))
	}
	if jit {
		defer SetJIT(SetJIT(true, 0))
		if b := e.cc.decodeBlock(diffInstAddr); len(b.Insts) > int(n) {
			n++ // the int3
		}
	}
	ex := c.Run(n)
	if jit && ex.Reason == ExitBreakpoint && c.RIP == end+1 {
		ex.Reason, c.RIP = ExitBudget, end
	}
	if obs != nil {
		// The interpreter's count of reads, the reads it logged and the
		// cache's contents must not depend on how the code ran.
		var h uint64
		for i := uint64(0); i < uint64(c.Pred.Slots()); i++ {
			h = h*31 + c.Pred.Predict(i*8, 8)
		}
		res.Missed = obs.missed
		res.Pred = fmt.Sprintf("reads %d, logged %d (%#x), cache %#x", c.Pred.Reads, obs.logged, obs.sum, h)
	}
	s := &res.S
	s.R = c.R
	s.Rflags = c.Rflags()
	s.RIP = c.RIP
	s.MXCSR = c.MXCSR
	s.FSW = c.FPU.SW&^0x3800 | uint16(c.FPU.Top&7)<<11
	s.FTW = c.FPU.Tag
	s.X = c.X
	s.YH = c.YH
	for i := range s.MM {
		s.MM[i] = c.FPU.Regs[(int(c.FPU.Top)+i)&7].Mant
	}
	copy(s.Mem[:], e.data.Data[PageSize-diffMemSize:])
	switch ex.Reason {
	case ExitNone, ExitBudget:
	case ExitFault:
		res.Sig, res.Code, res.Addr = sigSEGV, ex.Code, ex.Addr
	case ExitGP:
		res.Sig, res.Code = sigSEGV, SIKernel
	case ExitFPE, ExitDivide:
		res.Sig, res.Code, res.Addr = sigFPE, ex.Code, c.RIP
	case ExitIllegal:
		res.Sig, res.Code, res.Addr = sigILL, ex.Code, c.RIP
	case ExitBreakpoint:
		res.Sig = sigTRAP
	default:
		res.Sig = -1
		res.Err = ex.Reason.String()
		if ex.Err != nil {
			res.Err = ex.Err.Error()
		}
	}
	return res
}

// diffCompare describes how got (emulator) differs from want (host).
func diffCompare(want, got *diffResult, undef uint64) string {
	var b strings.Builder
	if got.Err != "" {
		return got.Err
	}
	if want.Sig != got.Sig || want.Code != got.Code || want.Addr != got.Addr {
		fmt.Fprintf(&b, " signal: host %d/%#x@%#x emu %d/%#x@%#x;", want.Sig, want.Code, want.Addr, got.Sig, got.Code, got.Addr)
	}
	w, g := &want.S, &got.S
	for i := range w.R {
		if w.R[i] != g.R[i] {
			fmt.Fprintf(&b, " %s: host %#x emu %#x;", RegNames[i], w.R[i], g.R[i])
		}
	}
	if w.RIP != g.RIP {
		fmt.Fprintf(&b, " rip: host %#x emu %#x;", w.RIP, g.RIP)
	}
	mask := uint64(ArithFlags|FlagDF) &^ undef
	if (w.Rflags^g.Rflags)&mask != 0 {
		fmt.Fprintf(&b, " rflags: host %#x emu %#x (mask %#x);", w.Rflags&mask, g.Rflags&mask, mask)
	}
	if w.MXCSR != g.MXCSR {
		fmt.Fprintf(&b, " mxcsr: host %#x emu %#x;", w.MXCSR, g.MXCSR)
	}
	for i := range w.X {
		if w.X[i] != g.X[i] {
			fmt.Fprintf(&b, " xmm%d: host %016x_%016x emu %016x_%016x;", i, w.X[i][1], w.X[i][0], g.X[i][1], g.X[i][0])
		}
		if w.YH[i] != g.YH[i] {
			fmt.Fprintf(&b, " ymm%d.hi: host %016x_%016x emu %016x_%016x;", i, w.YH[i][1], w.YH[i][0], g.YH[i][1], g.YH[i][0])
		}
	}
	if w.FSW != g.FSW || w.FTW != g.FTW {
		fmt.Fprintf(&b, " x87 sw/tag: host %#x/%#x emu %#x/%#x;", w.FSW, w.FTW, g.FSW, g.FTW)
	}
	for i := range w.MM {
		if w.MM[i] != g.MM[i] {
			fmt.Fprintf(&b, " mm%d: host %#x emu %#x;", i, w.MM[i], g.MM[i])
		}
	}
	for i := range w.Mem {
		if w.Mem[i] != g.Mem[i] {
			j := i &^ 7
			fmt.Fprintf(&b, " mem[%#x]: host % x emu % x;", j, w.Mem[j:j+8], g.Mem[j:j+8])
			break
		}
	}
	return b.String()
}

// diffMode describes how a mode's interpreter and translated code
// (interp, jit) differ from the host, after the label.
func diffMode(label string, want, interp, jit *diffResult, undef uint64) string {
	d := ""
	if e := diffCompare(want, interp, undef); e != "" {
		d += label + " interpreter" + e
	}
	if e := diffCompare(want, jit, undef); e != "" {
		d += label + " translated" + e
	}
	return d
}

// describeInput formats the parts of an input state worth showing.
func describeInput(s *diffState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mxcsr=%#x rflags=%#x", s.MXCSR, s.Rflags)
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, " xmm%d=%016x_%016x", i, s.X[i][1], s.X[i][0])
	}
	fmt.Fprintf(&b, " rax=%#x rcx=%#x rdx=%#x mem[0:16]=% x", s.R[RAX], s.R[RCX], s.R[RDX], s.Mem[:16])
	return b.String()
}

// runDiff runs a differential test table: one subtest per row.
func runDiff(t *testing.T, seed int64, tests []diffTest) {
	t.Helper()
	diffTools(t)
	dir := t.TempDir()
	exe := buildNative(t, dir)
	asms := make([]string, len(tests))
	for i := range tests {
		asms[i] = tests[i].asm
	}
	codes := assemble(t, dir, asms)
	r := rand.New(rand.NewSource(seed))
	var cases []diffCase
	first := make([]int, len(tests)+1)
	for i := range tests {
		tt := &tests[i]
		first[i] = len(cases)
		n := tt.n
		if n == 0 {
			n = diffDefaultN
		}
		for k := 0; k < n; k++ {
			c := diffCase{test: tt, row: i, code: codes[i]}
			diffBase(r, &c.in)
			if tt.gen != nil {
				tt.gen(&diffGen{Rand: r, I: k}, &c.in)
			}
			cases = append(cases, c)
		}
	}
	first[len(tests)] = len(cases)

	// The host runs in its process while the interpreter runs here.
	var nativeErr error
	nativeDone := make(chan []diffResult, 1)
	go func() {
		res, err := runNative(exe, cases)
		nativeErr = err
		nativeDone <- res
	}()
	emu, jemu, pemu, pjemu, ljemu, remu := newDiffEmu(), newDiffEmu(), newDiffEmu(), newDiffEmu(), newDiffEmu(), newDiffEmu()
	pemu.pred, ljemu.pred, ljemu.log = true, true, true
	remu.pred, remu.replay, pjemu.pred, pjemu.replay = true, true, true, true
	// Each translating emulator has a twin with the same code cache
	// store that runs every other case: the twin takes the block the
	// other decoded and adopts its translation (codestore.go).
	store := NewCodeStore()
	var twins [3]*diffEmu
	for i, e := range []*diffEmu{jemu, pjemu, ljemu} {
		twins[i] = newDiffEmu()
		twins[i].pred, twins[i].replay, twins[i].log = e.pred, e.replay, e.log
		e.cc.ShareWith(store)
		twins[i].cc.ShareWith(store)
	}
	twin := func(i, k int, e *diffEmu, jit bool) diffResult {
		x := e
		if k%2 == 1 {
			x = twins[i]
			x.n = e.n // the same cases start with a filled cache
		}
		r := x.run(cases[k].code, &cases[k].in, jit)
		e.n = x.n
		return r
	}
	got := make([]diffResult, len(cases))
	jit := make([]diffResult, len(cases))
	pgot := make([]diffResult, len(cases))
	pjit := make([]diffResult, len(cases))
	ljit := make([]diffResult, len(cases))
	rgot := make([]diffResult, len(cases))
	translated := make([]bool, len(tests))
	for i := range cases {
		got[i] = emu.run(cases[i].code, &cases[i].in, false)
		if jitSupported {
			n := jemu.cc.Translated + twins[0].cc.Translated + twins[0].cc.Adopted
			jit[i] = twin(0, i, jemu, true)
			if jemu.cc.Translated+twins[0].cc.Translated+twins[0].cc.Adopted > n {
				translated[cases[i].row] = true
			}
			pgot[i] = pemu.run(cases[i].code, &cases[i].in, false)
			pjit[i] = twin(1, i, pjemu, true)
			rgot[i] = remu.run(cases[i].code, &cases[i].in, false)
			ljit[i] = twin(2, i, ljemu, true)
		}
	}
	for i, e := range twins {
		if jitSupported && len(cases) > 1 && jemu.cc.Translated > 0 && e.cc.Adopted == 0 {
			t.Errorf("twin %d adopted no translation", i)
		}
	}
	want := <-nativeDone
	if nativeErr != nil {
		t.Fatal(nativeErr)
	}

	total := 0
	for i := range tests {
		tt := &tests[i]
		t.Run(tt.asm, func(t *testing.T) {
			bad := 0
			for k := first[i]; k < first[i+1]; k++ {
				d := diffCompare(&want[k], &got[k], tt.undef)
				if jitSupported {
					// Recording does not change what the program
					// computes; a replay neither, when the cache held
					// every value the recording read.
					d += diffMode(" recording:", &want[k], &pgot[k], &ljit[k], tt.undef)
					if rgot[k].Filled && pgot[k].Filled && pgot[k].Missed == 0 {
						d += diffMode(" replaying:", &want[k], &rgot[k], &pjit[k], tt.undef)
					}
				}
				if d == "" {
					continue
				}
				bad++
				if bad <= 3 {
					t.Errorf("case %d: %s\n\tinput: %s", k-first[i], d, describeInput(&cases[k].in))
				}
			}
			if bad > 0 {
				t.Errorf("%q (% x): %d of %d cases differ from the host", tt.asm, codes[i], bad, first[i+1]-first[i])
			}
			// Translated code must do exactly what the interpreter
			// does, the flags the hardware leaves undefined included
			// (a recording and its replay may run a block either way).
			jbad := 0
			for k := first[i]; jitSupported && k < first[i+1]; k++ {
				d := diffCompare(&got[k], &jit[k], 0) + diffCompare(&rgot[k], &pjit[k], 0) + diffCompare(&pgot[k], &ljit[k], 0)
				if rgot[k].Pred != pjit[k].Pred {
					d += fmt.Sprintf(" replaying: interpreter %s, translated %s;", rgot[k].Pred, pjit[k].Pred)
				}
				if pgot[k].Pred != ljit[k].Pred {
					d += fmt.Sprintf(" recording: interpreter %s, translated %s;", pgot[k].Pred, ljit[k].Pred)
				}
				if d == "" {
					continue
				}
				jbad++
				if jbad <= 3 {
					t.Errorf("case %d: translated code differs from the interpreter:%s\n\tinput: %s", k-first[i], d, describeInput(&cases[k].in))
				}
			}
			if tt.jit && !translated[i] {
				t.Errorf("%q (% x) was not translated", tt.asm, codes[i])
				jbad++
			}
			bad += jbad
			total += bad
		})
	}
	t.Logf("differential test: %d instructions, %d cases, %d mismatches", len(tests), len(cases), total)
}
