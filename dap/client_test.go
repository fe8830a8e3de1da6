package dap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-dap"

	"ttd/internal/testtmp"
)

// client is a DAP client for tests: it talks to a Server over a pipe
// with go-dap's messages, as delve's DAP tests do.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	seq  int
	// out collects output events.
	mu  sync.Mutex
	out strings.Builder
}

// startServer runs a Server on one end of a pipe and returns a client on
// the other.
func startServer(t *testing.T, cfg Config) *client {
	t.Helper()
	a, b := net.Pipe()
	s := NewServer(a, a, cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve()
		a.Close()
	}()
	c := &client{t: t, conn: b, r: bufio.NewReader(b)}
	t.Cleanup(func() {
		b.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return c
}

// send sends a request with the next sequence number.
func (c *client) send(req dap.RequestMessage) {
	c.t.Helper()
	c.seq++
	r := req.GetRequest()
	r.Seq, r.Type = c.seq, "request"
	c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if err := dap.WriteProtocolMessage(c.conn, req); err != nil {
		c.t.Fatalf("sending %s: %v", r.Command, err)
	}
}

// request sends a request built from command and arguments (JSON).
func (c *client) request(command string, args any) {
	c.t.Helper()
	raw, _ := json.Marshal(map[string]any{"seq": 0, "type": "request", "command": command, "arguments": args})
	m, err := dap.DecodeProtocolMessage(raw)
	if err != nil {
		c.t.Fatalf("building %s: %v", command, err)
	}
	c.send(m.(dap.RequestMessage))
}

// read returns the next message, skipping output events (collected).
func (c *client) read() dap.Message {
	c.t.Helper()
	for {
		c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		m, err := dap.ReadProtocolMessage(c.r)
		if err != nil {
			if err == io.EOF {
				c.t.Fatalf("server closed the connection")
			}
			c.t.Fatalf("reading: %v", err)
		}
		if o, ok := m.(*dap.OutputEvent); ok {
			c.mu.Lock()
			c.out.WriteString(o.Body.Output)
			c.mu.Unlock()
			continue
		}
		return m
	}
}

// expect reads messages until one of type T arrives (failing on an
// ErrorResponse) and returns it.
func expect[T dap.Message](c *client) T {
	c.t.Helper()
	for i := 0; i < 50; i++ {
		m := c.read()
		if v, ok := m.(T); ok {
			return v
		}
		if e, ok := m.(*dap.ErrorResponse); ok {
			var zero T
			c.t.Fatalf("want %T, got error response to %s: %s", zero, e.Command, e.Message)
		}
		if _, ok := m.(dap.EventMessage); ok {
			continue // other events (initialized, thread…) may interleave
		}
		var zero T
		c.t.Fatalf("want %T, got %T %+v", zero, m, m)
	}
	c.t.Fatalf("no message of the wanted type")
	panic("unreachable")
}

// output returns the program output seen so far.
func (c *client) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// buildRoot holds every program the tests build; TestMain removes it.
var buildRoot string

func TestMain(m *testing.M) { testtmp.Main(m, "ttd-dap-", &buildRoot) }

// fixtures are built once per test binary.
var (
	fixOnce sync.Once
	fixDir  string
	fixErr  error
)

// buildFixtures compiles the C fixture (gcc -g -O0) and the Go fixture
// (-N -l) into a temporary directory.
func buildFixtures(t *testing.T) string {
	t.Helper()
	fixOnce.Do(func() {
		fixDir, fixErr = os.MkdirTemp(buildRoot, "fixtures-")
		if fixErr != nil {
			return
		}
		src, _ := filepath.Abs("testdata")
		if out, err := exec.Command("gcc", "-g", "-O0", "-o", filepath.Join(fixDir, "cfix"), filepath.Join(src, "cfix.c")).CombinedOutput(); err != nil {
			fixErr = fmt.Errorf("gcc: %v\n%s", err, out)
			return
		}
		// The C programs of ttd's tests (one copy of each).
		for name, file := range map[string]string{"cthreads": "threads.c", "forktree": "forktree.c"} {
			if out, err := exec.Command("gcc", "-g", "-O0", "-pthread", "-o", filepath.Join(fixDir, name), filepath.Join(src, "..", "..", "ttd", "testdata", file)).CombinedOutput(); err != nil {
				fixErr = fmt.Errorf("gcc: %v\n%s", err, out)
				return
			}
		}
		cmd := exec.Command("go", "build", "-gcflags=all=-N -l", "-o", filepath.Join(fixDir, "gofix"), ".")
		cmd.Dir = filepath.Join(src, "gofix")
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			fixErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if fixErr != nil {
		if _, err := exec.LookPath("gcc"); err != nil && os.Getenv("CI") == "" {
			t.Skipf("SKIPPING: gcc is missing (make deps installs it): %v", fixErr)
		}
		t.Fatalf("building the fixtures: %v", fixErr)
	}
	return fixDir
}

// markLine returns the line of the MARK comment in a fixture source.
func markLine(t *testing.T, file, mark string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "MARK "+mark+" ") || strings.HasSuffix(l, "MARK "+mark) {
			return i + 1
		}
	}
	t.Fatalf("no MARK %s in %s", mark, file)
	return 0
}
