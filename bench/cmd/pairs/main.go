// Command pairs runs a program under ttd's interpreter and prints the most
// frequent pairs of consecutive instructions, named as the dispatch loop
// runs them (x86.DispatchName: direct handlers, flag-free variants, fused
// pairs, or Fn for the rest). It is how x86/gen's fused pairs were chosen:
//
//	go run ./bench/cmd/pairs [-n N] [-single] PROG [ARGS...]
//
// With -single it counts single instructions instead: the ones named
// "Fn:" are candidates for a direct handler.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"ttd/emu"
	"ttd/x86"
)

var (
	top    = flag.Int("n", 30, "how many to print")
	single = flag.Bool("single", false, "count single instructions, not pairs")
)

type obs struct {
	prev  string
	pairs map[string]int
	n     int
}

func (o *obs) Instruction(c *x86.CPU, in *x86.Inst) {
	f := x86.DispatchName(in)
	if *single {
		o.pairs[f]++
	} else {
		o.pairs[o.prev+" ; "+f]++
	}
	o.prev = f
	o.n++
}
func (o *obs) WantInstructions() bool                               { return true }
func (o *obs) MemRead(c *x86.CPU, a uint64, s int, v uint64) uint64 { return v }
func (o *obs) MemWrite(c *x86.CPU, a uint64, s int, v uint64)       {}
func (o *obs) NonDet(c *x86.CPU, in *x86.Inst, v []uint64) []uint64 { return v }
func (o *obs) Decoded(c *x86.CPU, b *x86.Block)                     {}
func (o *obs) Sync(c *x86.CPU, in *x86.Inst)                        {}

func main() {
	flag.Parse()
	args := flag.Args()
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: pairs [-n N] [-single] PROG [ARGS...]")
		os.Exit(2)
	}
	o := &obs{pairs: map[string]int{}}
	p, err := emu.NewProcess(emu.Config{Path: args[0], Args: args, Env: os.Environ(), CPUObserver: o})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pairs:", err)
		os.Exit(1)
	}
	if _, err := p.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "pairs:", err)
	}
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range o.pairs {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v })
	for _, e := range l[:min(*top, len(l))] {
		fmt.Fprintf(os.Stderr, "%6.2f%% %s\n", 100*float64(e.v)/float64(o.n), e.k)
	}
}
