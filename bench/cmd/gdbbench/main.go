// Command gdbbench measures gdb's reverse execution over the remote
// protocol at the end of a long recording (about 1e9 instructions):
// reverse-continue (bc) from the end to a watchpoint on a variable
// written once near the start, and reverse-stepi (bs) from random
// positions near the end (p50, p99). It speaks the protocol as gdb does,
// over a pipe to gdbremote's server.
package main

import (
	"bufio"
	"debug/elf"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"ttd/gdbremote"
	"ttd/ttd"
)

const workload = `#include <stdio.h>
long acc;
long first __attribute__((aligned(64)));
__attribute__((noinline)) long mix(long v) { return v * 2654435761u ^ (v >> 7); }
int main(int argc, char **argv) {
	first = argc;
	for (long i = 0; i < ITER; i++) {
		acc += mix(i);
	}
	printf("%ld %ld\n", acc, first);
	return 0;
}
`

type client struct {
	conn net.Conn
	r    *bufio.Reader
}

func (c *client) send(p string) string {
	c.conn.Write(gdbremote.Encode([]byte(p)))
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			panic(err)
		}
		if b != '$' {
			continue
		}
		body, err := c.r.ReadString('#')
		if err != nil {
			panic(err)
		}
		c.r.Discard(2)
		c.conn.Write([]byte("+"))
		return body[:len(body)-1]
	}
}

func main() {
	iter := flag.Int64("iter", 100_000_000, "loop iterations of the workload (about 10 instructions each)")
	n := flag.Int("n", 200, "reverse-stepi requests to time")
	ttdBin := flag.String("ttd", "bin/ttd", "the ttd binary that records the workload (make build)")
	keep := flag.String("dir", "", "keep the program and its recording in this folder, and reuse them when they are there")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the timed part to this file")
	flag.Parse()
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "ttd-gdbbench-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	prog, trace := filepath.Join(dir, "long"), filepath.Join(dir, "long.ttd")
	if _, err := os.Stat(trace); err != nil {
		src := filepath.Join(dir, "long.c")
		os.WriteFile(src, []byte(strings.Replace(workload, "ITER", fmt.Sprint(*iter), 1)), 0o644)
		if out, err := exec.Command("gcc", "-g", "-O1", "-no-pie", "-o", prog, src).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "gcc: %v\n%s", err, out)
			os.Exit(1)
		}
		t0 := time.Now()
		if out, err := exec.Command(*ttdBin, "record", "-o", trace, prog).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "record: %v\n%s", err, out)
			os.Exit(1)
		}
		fmt.Printf("gdbbench: recorded in %v\n", time.Since(t0).Round(time.Millisecond))
	}
	f, err := elf.Open(prog)
	if err != nil {
		panic(err)
	}
	var first uint64
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == "first" {
			first = s.Value
		}
	}
	t0 := time.Now()
	tg, err := ttd.OpenTarget(trace, nil)
	if err != nil {
		panic(err)
	}
	s := tg.Session()
	fmt.Printf("gdbbench: opened (index built) in %v; %d instructions\n", time.Since(t0).Round(time.Millisecond), s.End())
	a, b := net.Pipe()
	go gdbremote.NewServer(tg, a, a, gdbremote.Config{}).Serve()
	c := &client{conn: b, r: bufio.NewReader(b)}
	c.send("qSupported")
	if *cpuprof != "" {
		pf, err := os.Create(*cpuprof)
		if err != nil {
			panic(err)
		}
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}

	// reverse-continue from the end to the watchpoint.
	t0 = time.Now()
	r := c.send("vCont;c")
	fmt.Printf("gdbbench: continue to the end (%s): %v\n", r, time.Since(t0).Round(time.Millisecond))
	c.send(fmt.Sprintf("Z2,%x,8", first))
	t0 = time.Now()
	r = c.send("bc")
	fmt.Printf("gdbbench: reverse-continue from the end to the write of first (%s) at position %d: %v\n", r, s.Position(), time.Since(t0).Round(time.Millisecond))
	c.send(fmt.Sprintf("z2,%x,8", first))

	// reverse-stepi from random positions in the last tenth.
	rng := rand.New(rand.NewSource(1))
	var lat []time.Duration
	for i := 0; i < *n; i++ {
		s.Seek(s.End() - 1 - uint64(rng.Int63n(int64(s.End()/10))))
		t := time.Now()
		if r := c.send("bs"); !strings.HasPrefix(r, "T") {
			panic(r)
		}
		lat = append(lat, time.Since(t))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration {
		return lat[min(len(lat)-1, int(q*float64(len(lat))))].Round(10 * time.Microsecond)
	}
	fmt.Printf("gdbbench: reverse-stepi from random positions: n=%d p50=%v p99=%v max=%v\n", len(lat), p(0.5), p(0.99), lat[len(lat)-1].Round(10*time.Microsecond))
	// And in sequence, as reverse-step does.
	lat = lat[:0]
	for i := 0; i < *n; i++ {
		t := time.Now()
		c.send("bs")
		lat = append(lat, time.Since(t))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("gdbbench: reverse-stepi in sequence: n=%d p50=%v p99=%v max=%v\n", len(lat), p(0.5), p(0.99), lat[len(lat)-1].Round(10*time.Microsecond))
}
