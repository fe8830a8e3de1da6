package predict

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of an x86-64 transparent huge page.
const hugePage = 2 << 20

// allocSlots gives c n zeroed slots that the process owns already.
//
// Fresh from the kernel, a page that is read first maps the shared zero
// page, and the first write to it then copies it and flushes the TLB of
// every CPU that runs one of the process's threads (the trace writer's,
// say): with one cache per guest thread, threaded programs recorded 40%
// slower for it. So every page is written once here.
//
// A cache of a multiple of 2 MiB is placed at a 2 MiB boundary in a
// larger allocation and advised to be transparent huge pages: writing it
// then faults once per 2 MiB, not 512 times (a 2 MiB cache cost 1.1 ms
// more than a 512 KiB one to start recording with, now 0.1 ms), and its
// random accesses miss the TLB far less. The allocation stays on Go's
// heap, so the collector counts and frees it.
func (c *Cache) allocSlots(n int) {
	if s := free.take(n); s != nil {
		clear(s)
		c.slots = s
		return
	}
	size := uintptr(n) * 8
	if size%hugePage != 0 {
		c.slots = make([]uint64, n)
		touch(c.slots)
		return
	}
	all := make([]uint64, n+hugePage/8)
	p := unsafe.Pointer(unsafe.SliceData(all))
	off := (hugePage - uintptr(p)%hugePage) % hugePage / 8
	c.slots = all[off : off+uintptr(n) : off+uintptr(n)]
	unix.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.slots))), size), unix.MADV_HUGEPAGE)
	touch(c.slots)
}

// touch writes every page of s.
func touch(s []uint64) {
	for i := 0; i < len(s); i += 4096 / 8 {
		s[i] = 0
	}
}

// Release gives the cache's memory back for the next New to reuse: c
// must not be used again. A thread that ends releases its cache, so a
// program that starts and joins threads all day reuses a few caches'
// memory instead of leaving the collector a heap of 4 MiB holes.
func (c *Cache) Release() {
	free.put(c.slots)
	c.slots = nil
}

// free holds released slots, up to maxFree bytes of them.
var free freeList

type freeList struct {
	mu    sync.Mutex
	slots [][]uint64
	bytes int
}

// maxFree bounds the memory the free list keeps: the caches of a few
// replays' threads, which a reader that re-simulates checkpoint intervals
// one after the other (ttd replay --segments, the index build) releases
// and takes again at every interval.
const maxFree = 64 << 20

func (f *freeList) take(n int) []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.slots) - 1; i >= 0; i-- {
		if s := f.slots[i]; len(s) == n {
			f.slots = append(f.slots[:i], f.slots[i+1:]...)
			f.bytes -= 8 * n
			return s
		}
	}
	return nil
}

func (f *freeList) put(s []uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.slots) > 0 && f.bytes+8*len(s) > maxFree {
		f.bytes -= 8 * len(f.slots[0])
		f.slots = f.slots[1:]
	}
	if 8*len(s) <= maxFree {
		f.slots = append(f.slots, s)
		f.bytes += 8 * len(s)
	}
}
