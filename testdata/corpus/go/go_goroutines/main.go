// Goroutines on several threads: a worker pool over channels, select with
// timers and a default case, sync.Mutex, sync.WaitGroup, sync.Once,
// sync/atomic, a context with a deadline, and time.Sleep in many
// goroutines at once. Everything printed is independent of the schedule.
package main

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

func worker(id int, jobs <-chan int, results chan<- [2]int, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs {
		s := 0
		for i := 0; i <= j*1000; i++ {
			s += i % (id + 2)
		}
		results <- [2]int{j, s % 1000}
	}
}

func main() {
	fmt.Println("GOMAXPROCS >= 1:", runtime.GOMAXPROCS(0) >= 1)

	jobs := make(chan int, 10)
	results := make(chan [2]int, 100)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go worker(w, jobs, results, &wg)
	}
	go func() {
		for j := 1; j <= 40; j++ {
			jobs <- j
		}
		close(jobs)
	}()
	go func() { wg.Wait(); close(results) }()
	var got []int
	for r := range results {
		got = append(got, r[0])
	}
	sort.Ints(got)
	fmt.Println("jobs done:", len(got), "first", got[0], "last", got[len(got)-1])

	var mu sync.Mutex
	var once sync.Once
	var counter, onceRuns int
	var atomicCounter atomic.Int64
	var wg2 sync.WaitGroup
	for g := 0; g < 50; g++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			once.Do(func() { onceRuns++ })
			for i := 0; i < 1000; i++ {
				mu.Lock()
				counter++
				mu.Unlock()
				atomicCounter.Add(2)
				if i%100 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg2.Wait()
	fmt.Println("counter", counter, "atomic", atomicCounter.Load(), "once", onceRuns)

	// select with a timer that fires and one that does not.
	ch := make(chan string)
	go func() {
		time.Sleep(20 * time.Millisecond)
		ch <- "message"
	}()
	select {
	case m := <-ch:
		fmt.Println("select got", m)
	case <-time.After(10 * time.Second):
		fmt.Println("select timed out (wrong)")
	}
	select {
	case m := <-ch:
		fmt.Println("unexpected", m)
	case <-time.After(15 * time.Millisecond):
		fmt.Println("select timed out as expected")
	}
	select {
	case <-ch:
		fmt.Println("unexpected")
	default:
		fmt.Println("select default")
	}

	// Many sleeping goroutines.
	var slept atomic.Int32
	var wg3 sync.WaitGroup
	start := time.Now()
	for i := 0; i < 100; i++ {
		wg3.Add(1)
		go func(i int) {
			defer wg3.Done()
			time.Sleep(time.Duration(i%10) * time.Millisecond)
			slept.Add(1)
		}(i)
	}
	wg3.Wait()
	fmt.Println("slept:", slept.Load(), "took at least 9ms:", time.Since(start) >= 9*time.Millisecond)

	// A ticker and a context deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	ticks := 0
loop:
	for {
		select {
		case <-tick.C:
			ticks++
		case <-ctx.Done():
			break loop
		}
	}
	tick.Stop()
	fmt.Println("ticked before the deadline:", ticks > 0, ctx.Err())

	// Unbuffered ping-pong between two goroutines.
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	v := 0
	for i := 0; i < 10000; i++ {
		ping <- v
		v = <-pong
	}
	close(ping)
	fmt.Println("ping-pong", v)
}
