package syscalls

import (
	"bytes"
	"testing"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/tracefile"
)

type callLog struct{ calls []Call }

func (l *callLog) Call(c *Call) error {
	k := *c
	k.Buffers = nil
	for _, b := range c.Buffers {
		b.Data = append([]byte(nil), b.Data...)
		k.Buffers = append(k.Buffers, b)
	}
	k.Text = append([]byte(nil), c.Text...)
	l.calls = append(l.calls, k)
	return nil
}
func (l *callLog) End(*tracefile.Exit) error { return nil }

// TestBrkKeepsHeap records a program that writes heap bytes stored
// before the heap grew eight times, and bytes an mremap moved: the
// trace must not unmap the heap when brk grows it (the recorder logged
// every brk as an unmap of the whole heap and a new map), and the
// export must know both buffers in full.
func TestBrkKeepsHeap(t *testing.T) {
	prog := buildC(t, "testdata/brk.c")
	trace := record(t, prog, t.TempDir())
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var heap []tracefile.Mmap
	heapUnmaps := 0
	brks := 0
	if err := tr.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		switch ev.Kind {
		case reader.EventSyscall:
			if ev.Record.Syscall.Nr == linux.SysBrk {
				brks++
			}
		case reader.EventMmap:
			if string(ev.Record.Mmap.Path) == "[heap]" {
				heap = append(heap, ev.Record.Mmap)
			}
		case reader.EventMunmap:
			u := ev.Record.Munmap
			for _, h := range heap {
				if u.Addr < h.Addr+h.Len && h.Addr < u.Addr+u.Len {
					heapUnmaps++
				}
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if brks < 9 || len(heap) < 2 {
		t.Fatalf("%d brk calls and %d heap mappings: the program did not grow its heap", brks, len(heap))
	}
	if heapUnmaps != 0 {
		t.Errorf("the trace unmaps the heap %d times (brk only grew it)", heapUnmaps)
	}
	var l callLog
	if _, err := Export(tr, Options{StrSize: -1}, &l); err != nil {
		t.Fatal(err)
	}
	want := []string{"stored before the heap grew", "stored before mremap moved it"}
	for _, c := range l.calls {
		if c.Nr != linux.SysWrite || len(want) == 0 {
			continue
		}
		if len(c.Buffers) != 1 || c.Buffers[0].Missing != 0 || !bytes.Equal(c.Buffers[0].Data, []byte(want[0])) {
			t.Errorf("%s: buffers %+v, want %q known", c.Text, c.Buffers, want[0])
		}
		want = want[1:]
	}
	if len(want) != 0 {
		t.Errorf("calls writing %q not exported", want)
	}
}
