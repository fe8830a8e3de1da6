// Command dapbench measures the DAP round trips of reverse debugging at
// the end of a long recording (about 1e9 instructions): stepBack (from
// the request to the stopped event) and a reverseContinue that crosses
// many checkpoints back to a breakpoint near the start.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"ttd/internal/cputime"

	"github.com/google/go-dap"

	ttddap "ttd/dap"
)

const workload = `#include <stdio.h>
long acc;
__attribute__((noinline)) long mix(long v) { return v * 2654435761u ^ (v >> 7); }
int main(void) {
	acc = 1; /* MARK start */
	for (long i = 0; i < ITER; i++) {
		acc += mix(i);
	}
	for (int k = 0; k < 50; k++) {
		acc ^= mix(k); /* MARK tail */
	}
	printf("%ld\n", acc);
	return 0;
}
`

type client struct {
	conn net.Conn
	r    *bufio.Reader
	seq  int
}

func (c *client) request(command string, args any) {
	c.seq++
	raw, _ := json.Marshal(map[string]any{"seq": c.seq, "type": "request", "command": command, "arguments": args})
	m, err := dap.DecodeProtocolMessage(raw)
	if err != nil {
		panic(err)
	}
	if err := dap.WriteProtocolMessage(c.conn, m); err != nil {
		panic(err)
	}
}

// until reads messages until pred accepts one.
func (c *client) until(pred func(dap.Message) bool) dap.Message {
	for {
		m, err := dap.ReadProtocolMessage(c.r)
		if err != nil {
			panic(err)
		}
		if e, ok := m.(*dap.ErrorResponse); ok {
			panic(e.Message)
		}
		if pred(m) {
			return m
		}
	}
}

func stopped(m dap.Message) bool { _, ok := m.(*dap.StoppedEvent); return ok }

func main() {
	iter := flag.Int64("iter", 100_000_000, "loop iterations of the workload (about 10 instructions each)")
	n := flag.Int("n", 50, "stepBack requests to time")
	ttdBin := flag.String("ttd", "bin/ttd", "the ttd binary that records the workload (make build)")
	keep := flag.String("dir", "", "keep the program and its recording in this folder, and reuse them when they are there")
	flag.Parse()
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "ttd-dapbench-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	prog := filepath.Join(dir, fmt.Sprintf("long-%d", *iter))
	src, trace := prog+".c", prog+".ttd"
	if _, err := os.Stat(trace); err != nil {
		os.WriteFile(src, []byte(strings.Replace(workload, "ITER", fmt.Sprint(*iter), 1)), 0o644)
		if out, err := exec.Command("gcc", "-g", "-O1", "-o", prog, src).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "gcc: %v\n%s", err, out)
			os.Exit(1)
		}
		t0 := time.Now()
		if out, err := exec.Command(*ttdBin, "record", "-o", trace, prog).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "record: %v\n%s", err, out)
			os.Exit(1)
		}
		fmt.Printf("dapbench: recorded in %v\n", time.Since(t0).Round(time.Millisecond))
	}

	a, b := net.Pipe()
	go ttddap.NewServer(a, a, ttddap.Config{}).Serve()
	c := &client{conn: b, r: bufio.NewReader(b)}
	t0 := time.Now()
	c.request("initialize", map[string]any{"adapterID": "ttd"})
	c.until(func(m dap.Message) bool { _, ok := m.(*dap.InitializeResponse); return ok })
	c.request("launch", map[string]any{"trace": trace})
	c.until(func(m dap.Message) bool { _, ok := m.(*dap.InitializedEvent); return ok })
	c.request("configurationDone", nil)
	st := c.until(stopped).(*dap.StoppedEvent)
	fmt.Printf("dapbench: opened, stopped at the end (%s) in %v\n", st.Body.Reason, time.Since(t0).Round(time.Millisecond))
	tid := st.Body.ThreadId
	c.request("evaluate", map[string]any{"expression": "pos", "context": "repl"})
	pos := c.until(func(m dap.Message) bool { _, ok := m.(*dap.EvaluateResponse); return ok }).(*dap.EvaluateResponse)
	fmt.Printf("dapbench: %s\n", pos.Body.Result)

	// Go back into the tail loop (its last iteration), then step back
	// through it: the first move into a segment builds its snapshots,
	// later ones reuse them.
	setBP := func(mark string) {
		var bps []map[string]any
		for i, l := range strings.Split(workload, "\n") {
			if mark != "" && strings.Contains(l, "MARK "+mark) {
				bps = append(bps, map[string]any{"line": i + 1})
			}
		}
		c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": bps})
		c.until(func(m dap.Message) bool { _, ok := m.(*dap.SetBreakpointsResponse); return ok })
	}
	setBP("tail")
	t0, cpu0 := time.Now(), cputime.Now()
	c.request("reverseContinue", map[string]any{"threadId": tid})
	st = c.until(stopped).(*dap.StoppedEvent)
	fmt.Printf("dapbench: reverseContinue from the end to the tail loop (%s): %v (CPU %v)\n", st.Body.Reason, time.Since(t0).Round(time.Millisecond), (cputime.Now() - cpu0).Round(time.Millisecond))
	setBP("")
	var lat []time.Duration
	for i := 0; i < *n; i++ {
		t := time.Now()
		c.request("stepBack", map[string]any{"threadId": tid})
		c.until(stopped)
		lat = append(lat, time.Since(t))
		c.request("stackTrace", map[string]any{"threadId": tid, "levels": 1})
		c.until(func(m dap.Message) bool { _, ok := m.(*dap.StackTraceResponse); return ok })
	}
	report := func(name string, d []time.Duration) {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		p := func(q float64) time.Duration {
			return s[min(len(s)-1, int(q*float64(len(s))))].Round(10 * time.Microsecond)
		}
		fmt.Printf("dapbench: %s: n=%d p50=%v p90=%v p99=%v max=%v (first %v)\n", name, len(s), p(0.5), p(0.9), p(0.99), s[len(s)-1].Round(10*time.Microsecond), d[0].Round(10*time.Microsecond))
	}
	report("stepBack round trip", lat)

	// reverseContinue to a breakpoint at the start: crosses every checkpoint.
	setBP("start")
	t, cpu0 := time.Now(), cputime.Now()
	c.request("reverseContinue", map[string]any{"threadId": tid})
	st = c.until(stopped).(*dap.StoppedEvent)
	fmt.Printf("dapbench: reverseContinue to the line breakpoint at the start (%s): %v (CPU %v; target 1 s)\n", st.Body.Reason, time.Since(t).Round(time.Millisecond), (cputime.Now() - cpu0).Round(time.Millisecond))
	c.request("disconnect", nil)
	b.Close()
}
