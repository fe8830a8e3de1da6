package reader

import (
	"os"
	"testing"

	"ttd/emu"
	"ttd/recorder"
	"ttd/x86"
)

type acc struct {
	pos, addr, val uint64
	size           int
	write          bool
}

type spy struct {
	*recorder.Recorder
	log []acc
}

func TestDebugDivergence(t *testing.T) {
	prog := os.Getenv("TTD_DEBUG_PROG")
	if prog == "" {
		t.Skip()
	}
	path := t.TempDir() + "/t.ttd"
	var recLog []acc
	recorder.DebugAccess = func(pos uint64, addr uint64, size int, val uint64, write bool) {
		recLog = append(recLog, acc{pos, addr, val, size, write})
	}
	_, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog}}, recorder.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rp, _ := tr.NewReplay(0)
	var repLog []acc
	rp.Access = func(a *Access) {
		pos := a.Position
		if a.Source != AccessCPU {
			pos++ // the recorder logs kernel writes at the syscall's key frame
		}
		repLog = append(repLog, acc{pos, a.Addr, a.Value, a.Size, a.Write})
	}
	err = rp.RunTo(^uint64(0))
	t.Logf("replay: %v; %d vs %d accesses", err, len(recLog), len(repLog))
	for i := range repLog {
		if i >= len(recLog) || recLog[i] != repLog[i] {
			for j := max(0, i-5); j <= i && j < len(recLog); j++ {
				t.Logf("rec %d: %+v", j, recLog[j])
				t.Logf("rep %d: %+v", j, repLog[j])
			}
			_, c := rp.Current()
			t.Fatalf("first difference at access %d; cpu %v", i, c)
		}
	}
	_ = x86.RAX
}

func TestDebugInsts(t *testing.T) {
	prog := os.Getenv("TTD_DEBUG_PROG")
	if prog == "" {
		t.Skip()
	}
	path := t.TempDir() + "/t.ttd"
	recorder.DebugInst = func(pos uint64, c *x86.CPU, in *x86.Inst) {
		if pos >= 8940 && pos <= 8990 {
			t.Logf("rec %d %#x %v rax=%#x rcx=%#x rdx=%#x rsi=%#x rdi=%#x flags=%#x", pos, in.PC, in.Op, c.R[0], c.R[1], c.R[2], c.R[6], c.R[7], c.Rflags())
		}
	}
	recorder.Record(emu.Config{Path: prog, Args: []string{prog}}, recorder.Options{Path: path})
	tr, _ := Open(path)
	rp, _ := tr.NewReplay(0)
	rp.Hook = func(r *Replay, c *x86.CPU, in *x86.Inst) {
		pos := r.InstPosition(c)
		if pos >= 8940 && pos <= 8990 {
			t.Logf("rep %d %#x %v rax=%#x rcx=%#x rdx=%#x rsi=%#x rdi=%#x flags=%#x", pos, in.PC, in.Op, c.R[0], c.R[1], c.R[2], c.R[6], c.R[7], c.Rflags())
		}
	}
	rp.RunTo(9000)
}

func TestDebugChunks(t *testing.T) {
	prog := os.Getenv("TTD_DEBUG_PROG")
	if prog == "" {
		t.Skip()
	}
	path := t.TempDir() + "/t.ttd"
	recorder.Record(emu.Config{Path: prog, Args: []string{prog}}, recorder.Options{Path: path})
	tr, _ := Open(path)
	for _, c := range tr.Chunks() {
		t.Logf("%+v", c)
	}
}
