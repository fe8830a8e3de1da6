package x86

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"slices"
	"testing"
)

// useCodeDir points the code file cache at a test's directory and lets a
// file be written for n new blocks, until the test ends.
func useCodeDir(t *testing.T, n int) string {
	dir := t.TempDir()
	was, wasN := codeFileDir, minCodeFileNew
	codeFileDir, minCodeFileNew = func() string { return dir }, n
	t.Cleanup(func() {
		codeFileDir, minCodeFileNew = was, wasN
		codeFiles.Lock()
		codeFiles.m = nil
		codeFiles.Unlock()
	})
	return dir
}

// forgetCodeFiles makes the next OpenCodeFile map its file again.
func forgetCodeFiles() {
	codeFiles.Lock()
	codeFiles.m = nil
	codeFiles.Unlock()
}

func anyCode(uint64) bool { return true }

// codeMemory maps code at base, executable.
func codeMemory(code []byte, base uint64) *Memory {
	mem := NewMemory()
	for off := 0; off < len(code); off += PageSize {
		p := NewPage()
		copy(p.Data[:], code[off:])
		mem.SetPage((base+uint64(off))>>PageShift, p, PermRead|PermExec)
	}
	return mem
}

// sweep decodes the blocks of cc's memory from base up to end one after
// another (and one from the second byte of each, most of them not
// instruction boundaries), as a program that ran through its code
// would, and returns them.
func sweep(cc *CodeCache, base, end uint64) []*Block {
	var bs []*Block
	for pc := base; pc < end; {
		for _, at := range []uint64{pc, pc + 1} {
			if cc.lookup(at) != nil {
				continue
			}
			b := func() (b *Block) {
				defer func() { recover() }() // a fault at at: no block
				return cc.decodeBlock(at)
			}()
			if b != nil {
				cc.insert(b)
				bs = append(bs, b)
			}
		}
		if b := cc.lookup(pc); b != nil && b.End > pc {
			pc = b.End
		} else {
			pc++
		}
	}
	return bs
}

// TestCodeFileGivesDecodedBlocks: the blocks a code cache takes from a
// code file are, field by field, the blocks decoding gives, over the
// code of libc, ld.so and python3; nearly all blocks come from the file
// the first run left.
func TestCodeFileGivesDecodedBlocks(t *testing.T) {
	useCodeDir(t, 1)
	for _, path := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2", "/usr/bin/python3.11"} {
		secs := execCode(t, path)
		if secs == nil {
			t.Logf("%s not found", path)
			continue
		}
		code := secs[0]
		for _, s := range secs {
			if len(s) > len(code) {
				code = s
			}
		}
		code = code[:min(len(code), 1<<20)]
		const base = 0x10000
		end := uint64(base + len(code) - 16)
		mem := codeMemory(code, base)

		first := NewCodeCache(mem)
		first.UseCodeFile(OpenCodeFile(path, first.Features), anyCode)
		decoded := sweep(first, base, end)
		if first.FromFile != 0 {
			t.Fatalf("%s: the first run took %d blocks from an empty file", path, first.FromFile)
		}
		if err := first.SaveCodeFile(); err != nil {
			t.Fatal(err)
		}
		forgetCodeFiles()

		second := NewCodeCache(mem)
		second.UseCodeFile(OpenCodeFile(path, second.Features), anyCode)
		fresh := NewCodeCache(mem)
		var cacheable int
		for _, b := range decoded {
			if first.cacheable(b) {
				cacheable++
			}
			was := second.FromFile
			got := second.decodeBlock(b.PC)
			want := fresh.decodeBlock(b.PC)
			if !sameBlock(got, want) {
				t.Fatalf("%s: block at %#x from the file (%v) is not the decoded one", path, b.PC, second.FromFile > was)
			}
		}
		t.Logf("%s: %d blocks, %d cacheable, %d from the file", path, len(decoded), cacheable, second.FromFile)
		if second.FromFile != uint64(cacheable) || cacheable < len(decoded)*9/10 {
			t.Errorf("%s: %d of %d blocks from the file, want all %d cacheable ones (at least 90%%)", path, second.FromFile, len(decoded), cacheable)
		}
	}
}

// selfCode is `mov eax, 1; syscall` and then 13 bytes of nops: a block
// of two instructions whose fetch window ends 15 bytes after the
// syscall's start.
var selfCode = []byte{0xb8, 1, 0, 0, 0, 0x0f, 0x05, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}

// saveOne runs code at testCode with a code file and saves the file.
func saveOne(t *testing.T, code []byte) {
	t.Helper()
	c := newTestCPU(t, code)
	c.cache.UseCodeFile(OpenCodeFile("self", c.cache.Features), anyCode)
	if got := runCode(t, "first", c); got != 1 {
		t.Fatalf("first run: eax %d, want 1", got)
	}
	if err := c.cache.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	forgetCodeFiles()
}

// TestCodeFileOnlyForTheSameBytes: a block is taken from the file only
// where guest memory holds its bytes and the rest of its fetch window,
// executable: a program whose code was written, or another program
// mapped at the same address, decodes afresh and runs its own code.
func TestCodeFileOnlyForTheSameBytes(t *testing.T) {
	useCodeDir(t, 1)
	saveOne(t, selfCode)
	for _, tc := range []struct {
		name     string
		at       int  // byte to change (-1: none)
		fromFile bool // the block comes from the file
		eax      uint64
	}{
		{"same code", -1, true, 1},
		{"immediate written", 1, false, 2},
		{"first byte of the window", 7, false, 1},
		{"last byte of the window", 5 + 14, false, 1},
		{"past the window", 5 + 15, true, 1},
	} {
		code := append([]byte(nil), selfCode...)
		code = append(code, 0x90)
		if tc.at >= 0 {
			code[tc.at] = 2
			if tc.at != 1 {
				code[tc.at] = 0x91 // xchg eax, ecx: not run
			}
		}
		for _, jit := range []bool{false, true} {
			wasOn, was := SetJIT(jit, 0)
			c := newTestCPU(t, code)
			c.cache.UseCodeFile(OpenCodeFile("self", c.cache.Features), anyCode)
			if got := runCode(t, tc.name, c); got != tc.eax {
				t.Errorf("%s: eax %d, want %d", tc.name, got, tc.eax)
			}
			if got := c.cache.FromFile == 1; got != tc.fromFile {
				t.Errorf("%s: block from the file %v, want %v", tc.name, got, tc.fromFile)
			}
			SetJIT(wasOn, was)
		}
	}

	// The same bytes, not executable: a fault, not the file's block.
	c := newTestCPU(t, selfCode)
	c.Mem.Protect(testCode>>PageShift, testCode>>PageShift+1, PermRead, nil)
	c.cache.UseCodeFile(OpenCodeFile("self", c.cache.Features), anyCode)
	c.RIP = testCode
	if exit := c.Run(100); exit.Reason == ExitSyscall || c.cache.FromFile != 0 {
		t.Errorf("code not executable: exit %v, %d blocks from the file; want a fault and none", exit.Reason, c.cache.FromFile)
	}

	// Written after it was taken: the write drops the block, and the
	// file's is not taken again for the new bytes.
	c = newTestCPU(t, selfCode)
	addWrite(c.Mem, testCode>>PageShift)
	c.cache.UseCodeFile(OpenCodeFile("self", c.cache.Features), anyCode)
	if got := runCode(t, "before the write", c); got != 1 || c.cache.FromFile != 1 {
		t.Fatalf("before the write: eax %d, %d blocks from the file; want 1 and 1", got, c.cache.FromFile)
	}
	c.Mem.Write32(testCode+1, 3)
	if got := runCode(t, "after the write", c); got != 3 || c.cache.FromFile != 1 {
		t.Errorf("after the write: eax %d, %d blocks from the file; want 3 and still 1", got, c.cache.FromFile)
	}
}

// TestCodeFileCut: a block whose fetch window was cut by an unmapped
// page is taken only while that page is still not fetchable.
func TestCodeFileCut(t *testing.T) {
	useCodeDir(t, 1)
	// mov eax, 1; syscall, ending 3 bytes before the end of the page.
	code := make([]byte, PageSize)
	at := PageSize - 10
	copy(code[at:], selfCode[:7])
	mem := codeMemory(code, testCode)
	cc := NewCodeCache(mem)
	cc.UseCodeFile(OpenCodeFile("cut", cc.Features), anyCode)
	pc := uint64(testCode + at)
	cc.insert(cc.decodeBlock(pc))
	if err := cc.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	forgetCodeFiles()
	for _, next := range []bool{false, true} {
		mem := codeMemory(code, testCode)
		if next {
			mem.SetPage(testCode>>PageShift+1, NewPage(), PermRead|PermExec)
		}
		cc := NewCodeCache(mem)
		cc.UseCodeFile(OpenCodeFile("cut", cc.Features), anyCode)
		cc.decodeBlock(pc)
		if got := cc.FromFile == 1; got == next {
			t.Errorf("next page mapped %v: block from the file %v, want %v", next, got, !next)
		}
	}
}

// TestCodeFileIgnoresBadFiles: a file cut short, with a flipped byte,
// from another ttd binary (another stamp) or for other CPU features is
// not used; the next save writes it anew.
func TestCodeFileIgnoresBadFiles(t *testing.T) {
	dir := useCodeDir(t, 1)
	saveOne(t, selfCode)
	cf := OpenCodeFile("self", FeaturesImplemented)
	if cf.nblocks != 1 {
		t.Fatalf("the file has %d blocks, want 1", cf.nblocks)
	}
	good, err := os.ReadFile(cf.path)
	if err != nil {
		t.Fatal(err)
	}
	forgetCodeFiles()
	restamp := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[codeFileHeaderSize-4:], crc32.Checksum(b[:codeFileHeaderSize-4], castagnoliTab))
		return b
	}
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"whole", func(b []byte) []byte { return b }},
		{"cut short", func(b []byte) []byte { return b[:len(b)-8] }},
		{"flipped byte", func(b []byte) []byte { b[len(b)-20] ^= 1; return b }},
		{"flipped header", func(b []byte) []byte { b[40] ^= 1; return b }},
		{"flipped slot", func(b []byte) []byte { b[codeFileHeaderSize+1] ^= 1; return b }},
		{"flipped record head", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"other stamp", func(b []byte) []byte { b[8] ^= 1; return restamp(b) }},
		{"other instruction size", func(b []byte) []byte { b[28]++; return restamp(b) }},
		{"empty", func(b []byte) []byte { return nil }},
	} {
		b := tc.edit(append([]byte(nil), good...))
		if err := os.WriteFile(cf.path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c := newTestCPU(t, selfCode)
		c.cache.UseCodeFile(OpenCodeFile("self", c.cache.Features), anyCode)
		runCode(t, tc.name, c)
		forgetCodeFiles()
		if want := tc.name == "whole"; (c.cache.FromFile == 1) != want {
			t.Errorf("%s: %d blocks from the file, want the file used %v", tc.name, c.cache.FromFile, want)
		}
	}
	if n := OpenCodeFile("self", FeaturesImplemented&^FeatSSE3).nblocks; n != 0 {
		t.Errorf("other features: %d blocks, want none", n)
	}
	forgetCodeFiles()
	// The bad file is written anew by the next run.
	saveOne(t, selfCode)
	if n := OpenCodeFile("self", FeaturesImplemented).nblocks; n != 1 {
		t.Errorf("after a save over a bad file: %d blocks, want 1", n)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the cache directory, want 1 (no temporary file left)", len(ents))
	}
}

// TestCodeFileOnlyStaticHandlers: a handler made at run time (a closure
// that captures) is never written to a file; top-level handlers are,
// and so is a locked instruction's static wrapper (wrapSync), whose
// block the second run takes from the file.
func TestCodeFileOnlyStaticHandlers(t *testing.T) {
	if !staticHandler(opNop) || !staticHandler(illegal) {
		t.Fatal("opNop and illegal are not static")
	}
	if staticHandler(syncWrap(opNop)) {
		t.Error("syncWrap's closure is static")
	}
	// lock xadd [rsp], eax; syscall
	code := []byte{0xf0, 0x0f, 0xc1, 0x04, 0x24, 0x0f, 0x05}
	in := Decode(0x1000, code)
	if !allStatic([]Inst{in}) || funcPC(in.Fn) != funcPC(syncStatic) {
		t.Error("lock xadd's handler is not the static wrapper")
	}
	useCodeDir(t, 1)
	for run := range 2 {
		c := newTestCPU(t, code)
		c.cache.UseCodeFile(OpenCodeFile("locked", c.cache.Features), anyCode)
		c.cache.insert(c.cache.decodeBlock(testCode))
		if got, want := c.cache.FromFile, uint64(run); got != want {
			t.Errorf("run %d: %d blocks from the file, want %d", run, got, want)
		}
		if err := c.cache.SaveCodeFile(); err != nil {
			t.Fatal(err)
		}
		forgetCodeFiles()
	}
}

// TestCodeFileOtherFeatures: a cache whose CPU features changed after
// it opened its file (SetFeatures) takes nothing from it.
func TestCodeFileOtherFeatures(t *testing.T) {
	useCodeDir(t, 1)
	saveOne(t, selfCode)
	c := newTestCPU(t, selfCode)
	c.cache.UseCodeFile(OpenCodeFile("self", c.cache.Features), anyCode)
	c.SetFeatures(c.cache.Features &^ FeatSSE3)
	runCode(t, "other features", c)
	if c.cache.FromFile != 0 {
		t.Errorf("%d blocks from a file of other features", c.cache.FromFile)
	}
}

// TestCodeFileNotForFewNewBlocks: a run that decoded fewer new blocks
// than minCodeFileNew leaves the file as it was.
func TestCodeFileNotForFewNewBlocks(t *testing.T) {
	dir := useCodeDir(t, 2)
	c := newTestCPU(t, selfCode)
	c.cache.UseCodeFile(OpenCodeFile("few", c.cache.Features), anyCode)
	runCode(t, "one block", c)
	if err := c.cache.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files written for 1 new block (2 needed)", len(ents))
	}
	minCodeFileNew = 1
	if err := c.cache.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files written for 1 new block (1 needed)", len(ents))
	}
}

// sumLoopCode sums 1..1000 into eax in a loop hot enough to be translated,
// then makes a syscall.
var sumLoopCode = []byte{0x31, 0xc0, 0xb9, 0xe8, 0x03, 0, 0, 0x01, 0xc8, 0xff, 0xc9, 0x75, 0xfa, 0x0f, 0x05}

// runLoop runs c from testCode to its syscall and returns eax.
func runLoop(t *testing.T, who string, c *CPU) uint64 {
	t.Helper()
	c.RIP = testCode
	for n := 0; ; n++ {
		exit := c.Run(1 << 20)
		if exit.Reason == ExitSyscall {
			return c.R[RAX]
		}
		if exit.Reason != ExitBudget || n > 10 {
			t.Fatalf("%s: exit %v (%v), want the syscall", who, exit.Reason, exit.Err)
		}
	}
}

// TestCodeFileTranslations: a block translated in one run is adopted
// from the code file in the next at its first run (no translation, no
// runs in the interpreter before), and computes the same; code that
// differs from the file's takes neither block nor translation.
func TestCodeFileTranslations(t *testing.T) {
	if !jitSupported {
		t.Skip("no JIT on this architecture")
	}
	useCodeDir(t, 1)
	wasOn, was := SetJIT(true, 5)
	defer SetJIT(wasOn, was)
	first := newTestCPU(t, sumLoopCode)
	first.cache.UseCodeFile(OpenCodeFile("loop", first.cache.Features), anyCode)
	if got := runLoop(t, "first", first); got != 500500 {
		t.Fatalf("first run: eax %d, want 500500", got)
	}
	if first.cache.Translated == 0 || first.cache.FileXlats == 0 {
		t.Fatalf("first run: %d translations, %d kept for the file; want some", first.cache.Translated, first.cache.FileXlats)
	}
	if err := first.cache.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	forgetCodeFiles()

	second := newTestCPU(t, sumLoopCode)
	second.cache.UseCodeFile(OpenCodeFile("loop", second.cache.Features), anyCode)
	if got := runLoop(t, "second", second); got != 500500 {
		t.Errorf("second run: eax %d, want 500500", got)
	}
	if second.cache.Translated != 0 || second.cache.Adopted != first.cache.Translated {
		t.Errorf("second run: %d translated, %d adopted; want 0 and %d", second.cache.Translated, second.cache.Adopted, first.cache.Translated)
	}
	// Taken from the file, the loop's block is hot at once.
	loop := NewCodeCache(second.Mem)
	loop.UseCodeFile(OpenCodeFile("loop", loop.Features), anyCode)
	if b := loop.decodeBlock(testCode + 7); b.jit == nil || b.jit.fileXl == nil || b.heat != jitThreshold {
		t.Errorf("the loop's block from the file: heat %d, jit %+v; want heat %d and the file's translation", b.heat, b.jit, jitThreshold)
	}

	// Other code at the same address (sub, not add, in the loop):
	// decoded and translated afresh.
	other := append([]byte(nil), sumLoopCode...)
	other[7] = 0x29
	third := newTestCPU(t, other)
	third.cache.UseCodeFile(OpenCodeFile("loop", third.cache.Features), anyCode)
	if got := runLoop(t, "other code", third); got != 1<<32-500500 {
		t.Errorf("other code: eax %d, want %d", got, 1<<32-500500)
	}
	if third.cache.Adopted != 0 || third.cache.Translated == 0 {
		t.Errorf("other code: %d adopted, %d translated; want none and some", third.cache.Adopted, third.cache.Translated)
	}
}

// TestCodeFileTranslationsThroughTheStore: a block an address space took
// from the file gives its translation to the caches that take the block
// from the code store (bash's exec'd children): they adopt it, and
// translate nothing.
func TestCodeFileTranslationsThroughTheStore(t *testing.T) {
	if !jitSupported {
		t.Skip("no JIT on this architecture")
	}
	useCodeDir(t, 1)
	wasOn, was := SetJIT(true, 5)
	defer SetJIT(wasOn, was)
	first := newTestCPU(t, sumLoopCode)
	first.cache.UseCodeFile(OpenCodeFile("loop", first.cache.Features), anyCode)
	runLoop(t, "first", first)
	if err := first.cache.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	forgetCodeFiles()

	parent := newTestCPU(t, sumLoopCode)
	parent.cache.ShareWith(NewCodeStore())
	parent.cache.UseCodeFile(OpenCodeFile("loop", parent.cache.Features), anyCode)
	runLoop(t, "parent", parent)
	child := forkCPU(parent)
	if got := runLoop(t, "child", child); got != 500500 {
		t.Errorf("child: eax %d, want 500500", got)
	}
	if child.cache.Shared == 0 || child.cache.Translated != 0 || child.cache.Adopted == 0 {
		t.Errorf("child: %d blocks from the store, %d translated, %d adopted; want some, none, some",
			child.cache.Shared, child.cache.Translated, child.cache.Adopted)
	}
}

// TestFileBlocksTranslateSooner: a block the code file keeps is
// translated after jitFileThreshold runs, any other after jitThreshold.
func TestFileBlocksTranslateSooner(t *testing.T) {
	if jitFileThreshold >= jitThreshold {
		t.Skipf("thresholds %d (file) and %d: nothing to test", jitFileThreshold, jitThreshold)
	}
	for _, tc := range []struct {
		forFile bool
		mode    uint8
		heat    uint32
		cold    bool
	}{
		{true, jitModeRun, jitFileThreshold - 1, true},
		{true, jitModeRun, jitFileThreshold, false},
		{false, jitModeRun, jitFileThreshold, true},
		{true, jitModeRecord, jitFileThreshold, true}, // (not while recording)
		{false, jitModeRun, jitThreshold - 1, true},
		{false, jitModeRun, jitThreshold, false},
		{true, jitModeRun, jitThreshold, false},
		{true, jitModeRecord, jitThreshold, false},
	} {
		c := &CPU{jitMode: tc.mode}
		b := &Block{forFile: tc.forFile, heat: tc.heat}
		if got := c.cold(b); got != tc.cold {
			t.Errorf("forFile %v, mode %d, heat %d: cold %v, want %v", tc.forFile, tc.mode, tc.heat, got, tc.cold)
		}
	}
	was, thr := SetJIT(jitEnabled, 0)
	defer SetJIT(was, thr)
	if c := (&CPU{}); c.cold(&Block{forFile: true}) || c.cold(&Block{}) {
		t.Error("threshold 0: a block is cold")
	}
}

// TestFileBlocksTranslateSoonerInRun: with a code file, the loop's block
// (which the file keeps) is translated after jitFileThreshold runs, though
// it runs fewer than jitThreshold times; without one it is not.
func TestFileBlocksTranslateSoonerInRun(t *testing.T) {
	if !jitSupported {
		t.Skip("no JIT on this architecture")
	}
	useCodeDir(t, 1)
	wasOn, was := SetJIT(true, 5000) // above the loop's 1,000 runs
	defer SetJIT(wasOn, was)
	for _, file := range []bool{false, true} {
		c := newTestCPU(t, sumLoopCode)
		if file {
			c.cache.UseCodeFile(OpenCodeFile("loop", c.cache.Features), anyCode)
		}
		if got := runLoop(t, "loop", c); got != 500500 {
			t.Fatalf("file %v: eax %d, want 500500", file, got)
		}
		if got := c.cache.Translated > 0; got != file {
			t.Errorf("file %v: %d blocks translated", file, c.cache.Translated)
		}
	}
}

// fileOrder returns the addresses of the records of cf's file in the
// order of the file.
func fileOrder(t *testing.T, cf *CodeFile) []uint64 {
	t.Helper()
	var pcs []uint64
	for off := uint64(codeFileHeaderSize) + slotBytes(cf.nblocks); off < uint64(len(cf.data)); {
		e, _, _, _ := cf.record(off)
		if e == nil {
			t.Fatalf("bad record at %#x", off)
		}
		pcs = append(pcs, e.PC)
		off += uint64(e.Size)
	}
	return pcs
}

// TestCodeFileInFirstRunOrder: the file keeps its blocks in the order
// they were first inserted, so that the next run reads its records one
// after another: a second run's blocks first, in its order, then the
// file's blocks it did not take, in the file's order.
func TestCodeFileInFirstRunOrder(t *testing.T) {
	useCodeDir(t, 1)
	secs := execCode(t, "/lib/x86_64-linux-gnu/libc.so.6")
	if secs == nil {
		t.Skip("no libc")
	}
	code := secs[0][:min(len(secs[0]), 64<<10)]
	const base = 0x10000
	mem := codeMemory(code, base)
	var pcs []uint64
	for _, b := range sweep(NewCodeCache(mem), base, uint64(base+len(code)-16)) {
		if b.PC%3 == 0 && !b.truncated { // (a few of them, not all neighbours)
			pcs = append(pcs, b.PC)
		}
	}
	if len(pcs) < 20 {
		t.Fatalf("%d blocks", len(pcs))
	}
	// Run them in an order that is not the addresses': odd places
	// first, then the even ones backwards.
	var order []uint64
	for i := 1; i < len(pcs); i += 2 {
		order = append(order, pcs[i])
	}
	for i := (len(pcs) - 1) &^ 1; i >= 0; i -= 2 {
		order = append(order, pcs[i])
	}
	run := func(pcs []uint64) *CodeCache {
		cc := NewCodeCache(mem)
		cc.UseCodeFile(OpenCodeFile("order", cc.Features), anyCode)
		for _, pc := range pcs {
			if cc.lookup(pc) == nil {
				cc.insert(cc.decodeBlock(pc))
			}
		}
		return cc
	}
	first := run(order)
	if err := first.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	forgetCodeFiles()
	cf := OpenCodeFile("order", first.Features)
	if got := fileOrder(t, cf); !slices.Equal(got, order) {
		t.Fatalf("records in the order %#x, want the first run's %#x", got, order)
	}

	// A second run takes the last third, backwards, and one more.
	third := order[2*len(order)/3:]
	again := slices.Clone(third)
	slices.Reverse(again)
	second := run(again)
	if second.FromFile != uint64(len(again)) {
		t.Fatalf("second run took %d blocks from the file, want %d", second.FromFile, len(again))
	}
	second.FileMisses = uint64(minCodeFileNew) // (as if it decoded new ones)
	if err := second.SaveCodeFile(); err != nil {
		t.Fatal(err)
	}
	forgetCodeFiles()
	want := append(again, order[:2*len(order)/3]...)
	if got := fileOrder(t, OpenCodeFile("order", first.Features)); !slices.Equal(got, want) {
		t.Errorf("records in the order %#x, want the second run's then the rest %#x", got, want)
	}
}

// TestCodeFileOrderStaysBounded: a block dropped and decoded again, over
// and over (a program that loads and unloads a library in a loop), does
// not grow the order the code file keeps without bound, and the last
// decoding is the one kept.
func TestCodeFileOrderStaysBounded(t *testing.T) {
	useCodeDir(t, 1)
	const base = 0x10000
	cc := NewCodeCache(codeMemory(selfCode, base))
	cc.UseCodeFile(OpenCodeFile("bounded", cc.Features), anyCode)
	var last *Block
	for range 10000 {
		cc.InvalidatePage(base >> PageShift)
		last = cc.decodeBlock(base)
		cc.insert(last)
	}
	if n := len(cc.fileOrder); n > 2*len(cc.blocks)+1024 {
		t.Errorf("%d blocks in the order for %d in the cache", n, len(cc.blocks))
	}
	cc.compactFileOrder()
	if len(cc.fileOrder) != 1 || cc.fileOrder[0] != last {
		t.Errorf("after compacting: %d blocks, want the last decoding only", len(cc.fileOrder))
	}
}
