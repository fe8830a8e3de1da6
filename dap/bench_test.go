package dap

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"ttd/internal/cputime"

	"github.com/google/go-dap"
)

// benchClient is a bare DAP client for the benchmarks (the tests' client
// is tied to *testing.T).
type benchClient struct {
	b    *testing.B
	conn net.Conn
	r    *bufio.Reader
	seq  int
}

func (c *benchClient) request(command string, args any) {
	c.seq++
	raw, _ := json.Marshal(map[string]any{"seq": c.seq, "type": "request", "command": command, "arguments": args})
	m, err := dap.DecodeProtocolMessage(raw)
	if err != nil {
		c.b.Fatal(err)
	}
	if err := dap.WriteProtocolMessage(c.conn, m); err != nil {
		c.b.Fatal(err)
	}
}

// until reads messages until one of type T.
func until[T dap.Message](c *benchClient) T {
	for {
		m, err := dap.ReadProtocolMessage(c.r)
		if err != nil {
			c.b.Fatal(err)
		}
		if e, ok := m.(*dap.ErrorResponse); ok {
			c.b.Fatalf("%s: %s", e.Command, e.Message)
		}
		if v, ok := m.(T); ok {
			return v
		}
	}
}

// BenchmarkReverseContinueLine (issue 23): from the end of a recording of
// about 5 million instructions, reverseContinue to a line breakpoint
// near the start, from the request to the stopped event; the continue
// back to the end is not timed. bench/cmd/dapbench measures the same on a
// 1e9-instruction recording for the target (at most 1 s).
func BenchmarkReverseContinueLine(b *testing.B) {
	if _, err := exec.LookPath("gcc"); err != nil {
		b.Skip("gcc not installed")
	}
	dir := b.TempDir()
	src, _ := filepath.Abs(filepath.Join("testdata", "longloop.c"))
	prog := filepath.Join(dir, "longloop")
	if out, err := exec.Command("gcc", "-g", "-O1", "-o", prog, src).CombinedOutput(); err != nil {
		b.Fatalf("gcc: %v\n%s", err, out)
	}
	if _, err := RecordProgram(b.Context(), RecordRequest{Program: prog, TracePath: prog + ".ttd", Output: func(string, string) {}}); err != nil {
		b.Fatal(err)
	}
	text, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	start := 0
	for i, l := range strings.Split(string(text), "\n") {
		if strings.Contains(l, "MARK start") {
			start = i + 1
		}
	}
	x, y := net.Pipe()
	go NewServer(x, x, Config{}).Serve()
	defer y.Close()
	c := &benchClient{b: b, conn: y, r: bufio.NewReader(y)}
	c.request("initialize", map[string]any{"adapterID": "ttd"})
	until[*dap.InitializeResponse](c)
	c.request("launch", map[string]any{"trace": prog + ".ttd"})
	until[*dap.InitializedEvent](c)
	c.request("configurationDone", nil)
	tid := until[*dap.StoppedEvent](c).Body.ThreadId
	setBP := func(lines ...int) {
		var bps []map[string]any
		for _, l := range lines {
			bps = append(bps, map[string]any{"line": l})
		}
		c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": bps})
		until[*dap.SetBreakpointsResponse](c)
	}
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		setBP()
		c.request("continue", map[string]any{"threadId": tid})
		until[*dap.StoppedEvent](c)
		setBP(start)
		b.StartTimer()
		c0 := cputime.Now()
		c.request("reverseContinue", map[string]any{"threadId": tid})
		if st := until[*dap.StoppedEvent](c); st.Body.Reason != "breakpoint" {
			b.Fatalf("reverseContinue stopped for %q", st.Body.Reason)
		}
		cpu += cputime.Now() - c0
	}
	// CPU time: wall time depends on the machine's load.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
