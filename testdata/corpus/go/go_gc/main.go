// Heavy allocation with the garbage collector running concurrently in
// several goroutines: maps, slices, pointer-rich trees, strings, and
// explicit runtime.GC calls, then a checksum of what survived.
package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

type node struct {
	left, right *node
	val         int
	name        string
}

func build(depth, v int) *node {
	if depth == 0 {
		return &node{val: v, name: fmt.Sprint("leaf", v)}
	}
	return &node{left: build(depth-1, 2*v), right: build(depth-1, 2*v+1), val: v}
}

func (n *node) sum() int {
	if n == nil {
		return 0
	}
	return n.val + len(n.name) + n.left.sum() + n.right.sum()
}

func main() {
	debug.SetGCPercent(50)
	var wg sync.WaitGroup
	results := make([]int, 6)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			total := 0
			keep := map[int][]byte{}
			for i := 0; i < 400; i++ {
				t := build(6, i+g)
				total += t.sum()
				b := make([]byte, 1000+i%4000)
				b[i%len(b)] = byte(i)
				keep[i%50] = b
				if i%100 == 0 {
					runtime.GC()
				}
			}
			var sb strings.Builder
			for i := 0; i < 500; i++ {
				sb.WriteString(fmt.Sprint(i % 7))
			}
			results[g] = total + len(keep) + len(sb.String())
		}(g)
	}
	wg.Wait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("results:", results)
	fmt.Println("collections happened:", ms.NumGC > 5)
}
