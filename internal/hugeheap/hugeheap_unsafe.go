//go:build linux

package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// hugePage is the size of an x86-64 transparent huge page.
	hugePage = 2 << 20
	// arena is the unit in which the Go runtime reserves heap address
	// space on linux/amd64 (heapArenaBytes): the heap ttd allocated
	// before Reserve is in the arena that holds the reservation, or in
	// one before it.
	arena = 64 << 20
)

// Reserve makes the Go heap map n bytes at once and advises the kernel to
// back that range, and the part of its arena below it, with huge pages;
// it returns the advised range's length, 0 if the kernel refused.
//
// The runtime maps heap memory a few MiB at a time with mmap(MAP_FIXED),
// which makes a new mapping without the advice, so the advice must come
// after the mapping and before the memory is used: Reserve allocates n
// bytes (the runtime maps them, untouched), advises, and lets a
// collection free them, so the heap's next n bytes of allocations reuse
// that advised range (the runtime takes the lowest free addresses
// first). Allocations beyond it get ordinary pages.
//
// The allocation would start a collection of its own (it passes the
// heap's goal), before the one that frees it: collection is off while
// Reserve allocates, so it costs one collection, not two (`ttd run
// /bin/true` made 2 collections there, 2-3 ms of CPU).
//
// It does nothing unless the kernel's THP mode is "madvise": with
// "always" the heap has huge pages without asking, with "never" asking
// is in vain.
func Reserve(n int) int {
	if n <= 0 || !needsAdvice() {
		return 0
	}
	gcPercent := debug.SetGCPercent(-1)
	b := make([]byte, n)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := lo &^ (arena - 1)
	end := (lo + uintptr(n)) &^ (hugePage - 1)
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
	debug.SetGCPercent(gcPercent)
	// ENOMEM: part of the range is not mapped (heap reserved further on);
	// the mapped parts took the advice.
	if errno != 0 && errno != unix.ENOMEM {
		return 0
	}
	return int(end - start)
}

// thpMode is the kernel's setting for transparent huge pages.
const thpMode = "/sys/kernel/mm/transparent_hugepage/enabled"

// needsAdvice reports whether anonymous memory gets huge pages only where
// advised.
func needsAdvice() bool {
	b, err := os.ReadFile(thpMode)
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
}
