// Command gdbbench measures gdb's reverse execution over the remote
// protocol on long recordings (about 1e9 instructions each) of two
// programs: the tuning program, whose watched variable has a cache line
// of its own, and a check program nobody tuned for, whose watched
// variable shares its 64-byte line with an array written on every
// iteration. For each: reverse-continue (bc) from the end to a
// watchpoint on the variable, written once near the start;
// reverse-stepi (bs) from random positions (p50, p99) and in sequence;
// and forward continue (vCont;c) to a breakpoint a few instructions
// ahead from random positions, as gdb's next and finish do. It speaks
// the protocol as gdb does, over a pipe to gdbremote's server.
// Targets (issue 22): reverse-continue to a watchpoint at most 1 s,
// reverse-stepi p99 at most 10 ms.
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
	"ttd/internal/cputime"

	"ttd/gdbremote"
	"ttd/ttd"
)

// program is a workload: its source (ITER is replaced), the variable
// watched and the function a breakpoint is put on.
type program struct {
	name, src      string
	watched, fn    string
	itersPerBillon int64
}

var programs = []program{
	{name: "tuning", watched: "first", fn: "mix", itersPerBillon: 100_000_000, src: `#include <stdio.h>
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
`},
	{name: "check", watched: "watched", fn: "churn", itersPerBillon: 45_000_000, src: `#include <stdio.h>
/* watched shares its 64-byte line with busy, written on every iteration. */
struct line { long busy[7]; long watched; } __attribute__((aligned(64)));
struct line g;
unsigned char table[1 << 16];
__attribute__((noinline)) void churn(long i) {
	g.busy[i % 7] += i;
	table[(i * 40503) & 0xffff] ^= (unsigned char)i;
}
int main(int argc, char **argv) {
	g.watched = argc;
	for (long i = 0; i < ITER; i++)
		churn(i);
	printf("%ld %ld %d\n", g.busy[3], g.watched, table[7]);
	return 0;
}
`},
}

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
	scale := flag.Float64("scale", 1, "length of the recordings in 1e9 instructions")
	n := flag.Int("n", 200, "requests to time for each percentile")
	ttdBin := flag.String("ttd", "bin/ttd", "the ttd binary that records the workloads (make build)")
	keep := flag.String("dir", "", "keep the programs and their recordings in this folder, and reuse them when they are there")
	only := flag.String("only", "", "run only this program (tuning or check)")
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
	if *cpuprof != "" {
		pf, err := os.Create(*cpuprof)
		if err != nil {
			panic(err)
		}
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	for _, pg := range programs {
		if *only == "" || *only == pg.name {
			bench(pg, dir, *ttdBin, int64(*scale*float64(pg.itersPerBillon)), *n)
		}
	}
}

// record builds and records pg (reusing them when dir has them).
func record(pg program, dir, ttdBin string, iter int64) (prog, trace string) {
	prog = filepath.Join(dir, fmt.Sprintf("%s-%d", pg.name, iter))
	trace = prog + ".ttd"
	if _, err := os.Stat(trace); err == nil {
		return prog, trace
	}
	src := prog + ".c"
	os.WriteFile(src, []byte(strings.Replace(pg.src, "ITER", fmt.Sprint(iter), 1)), 0o644)
	if out, err := exec.Command("gcc", "-g", "-O1", "-no-pie", "-o", prog, src).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "gcc: %v\n%s", err, out)
		os.Exit(1)
	}
	t0 := time.Now()
	if out, err := exec.Command(ttdBin, "record", "-o", trace, prog).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "record: %v\n%s", err, out)
		os.Exit(1)
	}
	fmt.Printf("gdbbench: %s: recorded in %v\n", pg.name, time.Since(t0).Round(time.Millisecond))
	return prog, trace
}

func symbol(prog, name string) uint64 {
	f, err := elf.Open(prog)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	panic("no symbol " + name)
}

// timer collects the wall and CPU time of requests.
type timer struct{ wall, cpu []time.Duration }

func (t *timer) time(f func()) {
	w, c := time.Now(), cputime.Now()
	f()
	t.cpu = append(t.cpu, cputime.Now()-c)
	t.wall = append(t.wall, time.Since(w))
}

func (t *timer) String() string {
	return percentiles(t.wall) + "; CPU " + percentiles(t.cpu)[strings.Index(percentiles(t.cpu), "p50"):]
}

// percentiles formats the latencies' p50, p99 and maximum.
func percentiles(lat []time.Duration) string {
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	p := func(q float64) time.Duration {
		return s[min(len(s)-1, int(q*float64(len(s))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("n=%d p50=%v p99=%v max=%v", len(s), p(0.5), p(0.99), s[len(s)-1].Round(10*time.Microsecond))
}

func bench(pg program, dir, ttdBin string, iter int64, n int) {
	prog, trace := record(pg, dir, ttdBin, iter)
	var watched uint64
	if pg.watched == "first" {
		watched = symbol(prog, "first")
	} else {
		watched = symbol(prog, "g") + 7*8 // g.watched
	}
	fn := symbol(prog, pg.fn)
	t0 := time.Now()
	tg, err := ttd.OpenTarget(trace, nil)
	if err != nil {
		panic(err)
	}
	defer tg.Close()
	s := tg.Session()
	fmt.Printf("gdbbench: %s: opened in %v; %d instructions\n", pg.name, time.Since(t0).Round(time.Millisecond), s.End())
	a, b := net.Pipe()
	go gdbremote.NewServer(tg, a, a, gdbremote.Config{}).Serve()
	defer b.Close()
	c := &client{conn: b, r: bufio.NewReader(b)}
	c.send("qSupported:multiprocess+;swbreak+;hwbreak+")
	c.send("vCont;c")

	// reverse-continue from the end to the watchpoint.
	c.send(fmt.Sprintf("Z2,%x,8", watched))
	t0, cpu0 := time.Now(), cputime.Now()
	r := c.send("bc")
	fmt.Printf("gdbbench: %s: reverse-continue from the end to the write of %s (%s) at position %d: %v (CPU %v)\n",
		pg.name, pg.watched, r, s.Position(), time.Since(t0).Round(time.Millisecond), (cputime.Now() - cpu0).Round(time.Millisecond))
	c.send(fmt.Sprintf("z2,%x,8", watched))

	// reverse-stepi from random positions in the last tenth.
	rng := rand.New(rand.NewSource(1))
	random := func() uint64 { return s.End() - 1 - uint64(rng.Int63n(int64(s.End()/10))) }
	bs := func() {
		if r := c.send("bs"); !strings.HasPrefix(r, "T") {
			panic(r)
		}
	}
	var t timer
	for i := 0; i < n; i++ {
		s.Seek(random())
		t.time(bs)
	}
	fmt.Printf("gdbbench: %s: reverse-stepi from random positions: %v\n", pg.name, &t)
	// And in sequence, as reverse-step does, long enough to cross the
	// session's grid of micro snapshots (ttd.DefaultMicroEvery) a few
	// times.
	t = timer{}
	for i := 0; i < 20*n; i++ {
		t.time(bs)
	}
	fmt.Printf("gdbbench: %s: reverse-stepi in sequence: %v\n", pg.name, &t)

	// continue to a breakpoint a few instructions ahead, then
	// reverse-stepi from the stop, from random positions.
	c.send(fmt.Sprintf("Z0,%x,1", fn))
	var back timer
	t = timer{}
	for i := 0; i < n; i++ {
		s.Seek(random())
		t.time(func() {
			if r := c.send("vCont;c"); !strings.HasPrefix(r, "T") {
				panic(r)
			}
		})
		back.time(bs)
	}
	c.send(fmt.Sprintf("z0,%x,1", fn))
	fmt.Printf("gdbbench: %s: continue to a breakpoint on %s from random positions: %v\n", pg.name, pg.fn, &t)
	fmt.Printf("gdbbench: %s: reverse-stepi right after that continue: %v\n", pg.name, &back)
}
