package main

import (
	"runtime"
	"testing"

	"ttd/x86"
)

// TestReserveHugeHeapOnce checks that run and record's early reservation
// and the first decoded block's (x86.OnFirstDecode) reserve the huge-page
// heap once between them: each reservation costs a collection.
func TestReserveHugeHeapOnce(t *testing.T) {
	saved := x86.OnFirstDecode
	defer func() { x86.OnFirstDecode = saved }()
	t.Setenv("TTD_HUGEPAGES", "")
	reserveHugeHeap()
	if x86.OnFirstDecode == nil {
		t.Fatal("reserveHugeHeap did not arm x86.OnFirstDecode")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	reserveHugeHeapNow()
	reserveHugeHeapNow()
	x86.OnFirstDecode()
	runtime.ReadMemStats(&after)
	if n := after.NumGC - before.NumGC; n > 1 {
		t.Errorf("three calls made %d collections, want at most 1 (one reservation)", n)
	}
}
