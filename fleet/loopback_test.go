package fleet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
)

// TestPrismListensOnLoopback: prism's job server, which stays up after
// a pipeline for the next one, listens on loopback only (ttd's copy of
// the runner, third_party/prism; Beam's own listens on every interface).
func TestPrismListensOnLoopback(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	passert.Equals(s, stats.Sum(s, beam.Create(s, 1, 2, 3)), 6)
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	ls := listeners(t)
	if len(ls) == 0 {
		t.Fatal("no listening TCP socket in this process after a prism run: the check would not see a wrong one")
	}
	for _, l := range ls {
		if !strings.HasPrefix(l, "127.0.0.1:") && !strings.HasPrefix(l, "[::1]:") {
			t.Errorf("this process listens on %s, not on loopback", l)
		}
	}
}

// listeners returns the local addresses of this process's listening TCP
// sockets: its socket inodes (/proc/self/fd) looked up in /proc/net/tcp
// and tcp6, whose addresses are hex in the kernel's byte order.
func listeners(t *testing.T) []string {
	t.Helper()
	fds, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ... inode (the tenth field)
			if len(fields) < 10 || fields[3] != "0A" || !mine[fields[9]] {
				continue
			}
			out = append(out, kernelAddr(t, fields[1]))
		}
		f.Close()
	}
	return out
}

// kernelAddr turns /proc/net/tcp's "0100007F:1F90" (IPv4) or its 32-digit
// IPv6 form into "127.0.0.1:8080" or "[::1]:8080"; each 32-bit word of
// the address is in host (little-endian) order.
func kernelAddr(t *testing.T, s string) string {
	host, port, ok := strings.Cut(s, ":")
	if !ok || (len(host) != 8 && len(host) != 32) {
		t.Fatalf("unexpected /proc/net/tcp address %q", s)
	}
	var b []byte
	for i := 0; i < len(host); i += 8 {
		var w uint32
		fmt.Sscanf(host[i:i+8], "%08x", &w)
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	var p int
	fmt.Sscanf(port, "%x", &p)
	if len(b) == 4 {
		return fmt.Sprintf("%d.%d.%d.%d:%d", b[0], b[1], b[2], b[3], p)
	}
	ip := make([]string, 0, 8)
	for i := 0; i < 16; i += 2 {
		ip = append(ip, fmt.Sprintf("%x", int(b[i])<<8|int(b[i+1])))
	}
	h := strings.Join(ip, ":")
	if h == "0:0:0:0:0:0:0:1" {
		h = "::1"
	}
	return fmt.Sprintf("[%s]:%d", h, p)
}
