package x86

import (
	"fmt"
	"os"
	"sync"
)

// TTD_PERFMAP=1 writes /tmp/perf-PID.map, the file through which Linux
// perf names code it cannot find in a binary: one line per translation,
// "START SIZE ttd:GUESTPC", so that `perf report` shows which guest
// blocks the time in translated code went to (for performance work).
var perfMap = struct {
	once sync.Once
	mu   sync.Mutex
	f    *os.File
}{}

var perfMapOn = os.Getenv("TTD_PERFMAP") == "1"

// perfMapAdd names the n bytes of host code at entry after the guest
// block at pc.
func perfMapAdd(entry uintptr, n int, pc uint64) {
	perfMap.once.Do(func() {
		perfMap.f, _ = os.OpenFile(fmt.Sprintf("/tmp/perf-%d.map", os.Getpid()), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	})
	if perfMap.f == nil {
		return
	}
	perfMap.mu.Lock()
	fmt.Fprintf(perfMap.f, "%x %x ttd:%#x\n", entry, n, pc)
	perfMap.mu.Unlock()
}
