// gowork: a Go workload for the speed comparison: goroutines on several
// threads hashing, sorting and allocating (the garbage collector runs
// concurrently), talking over channels. The output is independent of the
// schedule.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
)

func job(n, seed int) [32]byte {
	keys := make([]string, n)
	x := uint64(seed)*0x9e3779b97f4a7c15 + 1
	for i := range keys {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		keys[i] = strconv.FormatUint(x%1000003, 36)
	}
	sort.Strings(keys)
	m := make(map[string]int, n)
	for i, k := range keys {
		m[k] += i
	}
	h := sha256.New()
	var b [8]byte
	for _, k := range keys {
		binary.LittleEndian.PutUint64(b[:], uint64(m[k]))
		h.Write([]byte(k))
		h.Write(b[:])
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func main() {
	jobs := 64
	if len(os.Args) > 1 {
		jobs, _ = strconv.Atoi(os.Args[1])
	}
	in := make(chan int)
	out := make(chan [2]uint64)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				s := job(20000, j)
				out <- [2]uint64{uint64(j), binary.LittleEndian.Uint64(s[:])}
			}
		}()
	}
	go func() {
		for j := 0; j < jobs; j++ {
			in <- j
		}
		close(in)
	}()
	go func() { wg.Wait(); close(out) }()
	var x uint64
	for r := range out {
		x ^= r[1] * (r[0] + 1)
	}
	fmt.Printf("%d jobs, digest %016x\n", jobs, x)
}
