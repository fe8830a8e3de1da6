// Runtime panics turned into recoverable errors by the Go runtime's
// signal handling (a nil-pointer dereference is a SIGSEGV the runtime
// catches), run time errors, and asynchronous preemption: a goroutine
// spinning in a loop without function calls must be preempted (the
// runtime sends SIGURG to its thread) for the others to run.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
)

type point struct{ x, y int }

func try(name string, f func()) {
	defer func() {
		r := recover()
		var re runtime.Error
		if e, ok := r.(error); ok && errors.As(e, &re) {
			fmt.Printf("%s: %v\n", name, re)
			return
		}
		fmt.Printf("%s: %v\n", name, r)
	}()
	f()
}

var sink int

func main() {
	var p *point
	try("nil pointer", func() { sink = p.y })
	var m map[string]int
	try("nil map write", func() { m["a"] = 1 })
	s := []int{1, 2, 3}
	i := len(os.Args) + 5
	try("index", func() { sink = s[i] })
	zero := len(os.Args) - 1
	try("divide", func() { sink = 10 / zero })
	var iface any = "string"
	try("type assertion", func() { sink = iface.(int) })
	try("custom", func() { panic("custom value") })
	for k := 0; k < 3; k++ {
		try(fmt.Sprint("nil pointer again ", k), func() { sink = p.x })
	}

	runtime.GOMAXPROCS(1)
	var stop atomic.Bool
	done := make(chan int)
	go func() {
		n := 0
		for !stop.Load() {
			n++
		}
		done <- 1
	}()
	time.Sleep(30 * time.Millisecond) // needs the spinning goroutine preempted
	stop.Store(true)
	fmt.Println("preemption: main ran again, spinner stopped:", <-done == 1)
}
