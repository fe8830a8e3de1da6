package tracefile_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"ttd/tracefile"
)

// A recorder appends records from the goroutine that runs the guest; a
// reader finds the chunk to start from and iterates its records.
func Example() {
	dir, _ := os.MkdirTemp("", "ttd")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello.ttd")

	// Recording.
	w, err := tracefile.Create(path, tracefile.Header{ProgramPath: "/bin/hello", Args: []string{"hello"}}, tracefile.Options{})
	if err != nil {
		log.Fatal(err)
	}
	w.ThreadStart(100, 0)
	w.Checkpoint(&tracefile.Checkpoint{Position: 0, CurrentTid: 100,
		Threads: []tracefile.ThreadState{{Tid: 100, Regs: []byte("registers")}}})
	w.CodeBytes(0x401000, []byte{0x0f, 0x05})
	w.MemRead(3, 0x2a, 4) // the 4th read since the last logged one read 42
	w.KeyFrame(tracefile.KeyFrameSyscall, 100, 1, 1234)
	w.Syscall(&tracefile.Syscall{Tid: 100, Nr: 1, Args: [6]uint64{1, 0x402000, 6}, Result: 6})
	w.Exit(&tracefile.Exit{Kind: tracefile.ExitExited, Code: 0, Position: 1240})
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// Replaying.
	r, err := tracefile.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	it := r.RecordsFrom(r.ChunkAt(1000))
	for {
		rec, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		switch rec.Kind {
		case tracefile.KindMemRead:
			fmt.Printf("MemRead delta=%d value=%#x size=%d\n", rec.MemRead.ReadDelta, rec.MemRead.Value, rec.MemRead.Size)
		case tracefile.KindKeyFrame:
			fmt.Printf("KeyFrame %v tid=%d seq=%d position=%d\n", rec.KeyFrame.Kind, rec.KeyFrame.Tid, rec.KeyFrame.Seq, rec.KeyFrame.Position)
		default:
			fmt.Println(rec.Kind)
		}
	}
	s := r.Summary()
	fmt.Printf("%d instructions, %d thread, %d syscall, %v with code %d, truncated %v\n",
		s.Instructions, s.Threads, s.Syscalls, s.Exit.Kind, s.Exit.Code, s.Truncated)
	// Output:
	// ThreadStart
	// Checkpoint
	// CodeBytes
	// MemRead delta=3 value=0x2a size=4
	// KeyFrame Syscall tid=100 seq=1 position=1234
	// Syscall
	// Exit
	// 1240 instructions, 1 thread, 1 syscall, exited with code 0, truncated false
}
