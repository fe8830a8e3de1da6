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
	alignHeapTop()
	b := make([]byte, n)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := lo &^ (arena - 1)
	end := (lo + uintptr(n)) &^ (hugePage - 1)
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	b = nil
	collectAlone()
	debug.SetGCPercent(gcPercent)
	// ENOMEM: part of the range is not mapped (heap reserved further on);
	// the mapped parts took the advice.
	if errno != 0 && errno != unix.ENOMEM {
		return 0
	}
	return int(end - start)
}

// collectAlone runs a collection with one P. runtime.GC sweeps span by
// span with a Gosched after each, and with other Ps idle each Gosched
// woke a thread to run the goroutine it queued (a futex wake and a
// context switch): 14% of `ttd run /bin/true`'s CPU. GOMAXPROCS goes
// back to what it was: the runtime's default (which follows the
// cgroup's CPU limit) unless the environment set it.
func collectAlone() {
	procs := runtime.GOMAXPROCS(1)
	runtime.GC()
	if os.Getenv("GOMAXPROCS") != "" {
		runtime.GOMAXPROCS(procs)
	} else {
		runtime.SetDefaultGOMAXPROCS()
	}
}

// padding keeps the allocations alignHeapTop made: they are never
// touched, so they cost address space, not memory.
var padding [][]byte

// padProbe is the size of alignHeapTop's first allocation: small
// against a huge page, but 16 pages of 8 KiB, the least the runtime
// takes from the lowest free run of the heap's pages rather than from a
// per-P cache of pages it took earlier (mheap.allocSpan, pageCachePages/4).
const padProbe = 128 << 10

// alignHeapTop makes the heap's next large allocation start at a huge
// page boundary. Why: the kernel gives a huge page only to a 2 MiB range
// none of whose 4 KiB pages has been touched yet. Without it, the part
// of the last 2 MiB the heap had begun before Reserve stayed in 4 KiB
// pages, and the first large object after Reserve went there: `ttd run
// sh -c true` took 256 page faults (about 4 ms of CPU) to touch its
// address space's 1 MiB of TLBs.
//
// It allocates padProbe bytes, which land at the lowest free run of
// pages that fits them, then pads from their end to a 2 MiB boundary.
// The pad lands right after the probe when the probe was at the top of
// the heap; if not (the probe filled a hole), it tries again, a few
// times. The allocations at the top are fresh memory the runtime does
// not clear, and nothing writes them, so they are never faulted in.
func alignHeapTop() {
	for range 8 {
		p := make([]byte, padProbe)
		end := uintptr(unsafe.Pointer(unsafe.SliceData(p))) + padProbe
		padding = append(padding, p)
		gap := -end & (hugePage - 1)
		if gap == 0 {
			return
		}
		if gap < padProbe {
			gap += hugePage // (a smaller one would be a small object, placed elsewhere)
		}
		q := make([]byte, gap)
		padding = append(padding, q)
		if uintptr(unsafe.Pointer(unsafe.SliceData(q))) == end {
			return
		}
	}
}

// thpMode is the kernel's setting for transparent huge pages.
const thpMode = "/sys/kernel/mm/transparent_hugepage/enabled"

// needsAdvice reports whether anonymous memory gets huge pages only where
// advised.
func needsAdvice() bool {
	b, err := os.ReadFile(thpMode)
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
}
