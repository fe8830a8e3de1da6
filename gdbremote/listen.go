package gdbremote

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"

	"ttd/ttd"
)

// LoopbackAddr makes a listening address bind to loopback when it names
// no host (":PORT" or "" for any port): the server reads any file the
// user can, so it is not offered to the network unless asked.
func LoopbackAddr(addr string) string {
	if addr == "" {
		return "127.0.0.1:0"
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// ServeListener accepts one client on l and serves target t to it.
func ServeListener(l net.Listener, t *ttd.Target, cfg Config) error {
	conn, err := l.Accept()
	if err != nil {
		return err
	}
	defer conn.Close()
	return NewServer(t, conn, conn, cfg).Serve()
}

// GDBScript is the script a gdb started by RunGDB begins with: it
// defines ttd-goto and ttd-find-prev-write, which travel and make gdb
// forget the registers and frames it had, and connects to addr, waiting
// up to a minute for a reply (gdb gives up after 2 s by default, and a
// reply then arrives as the answer to its next packet).
func GDBScript(addr string) string {
	return `set sysroot /
set trust-readonly-sections on
set remotetimeout 60
define ttd-goto
  monitor goto $arg0
  maintenance flush register-cache
end
document ttd-goto
Travel to a position of the recording: a number, start, end or N%.
end
define ttd-find-prev-write
  monitor find-prev-write $arg0
  maintenance flush register-cache
end
document ttd-find-prev-write
Travel back to the last write to a global (or 0xADDR) before the current position.
end
target remote ` + addr + "\n"
}

// RunGDB serves target t on loopback and runs gdb connected to it (as
// rr replay does), with extra arguments for gdb; it returns gdb's exit
// status. exe, when it exists, is given to gdb for its symbols.
func RunGDB(t *ttd.Target, gdbArgs []string, stdin io.Reader, stdout, stderr io.Writer, cfg Config) (int, error) {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		return 1, fmt.Errorf("gdb not found in PATH (Debian: apt-get install gdb)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 1, err
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() { done <- ServeListener(l, t, cfg) }()
	script, err := os.CreateTemp("", "ttd-gdb-*.gdb")
	if err != nil {
		return 1, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(GDBScript(l.Addr().String())); err != nil {
		return 1, err
	}
	script.Close()
	args := []string{"-q", "-x", script.Name()}
	if exe, err := exeFile(t.Session()); err != nil {
		return 1, err
	} else if exe != nil {
		if exe.temp {
			defer os.Remove(exe.path)
		}
		args = append(args, exe.path)
	}
	// The user's arguments come after the connection, so that their
	// commands (-ex, -x) run on the recording.
	args = append(args, gdbArgs...)
	cmd := exec.Command(gdb, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	l.Close()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

type exeCopy struct {
	path string
	temp bool
}

// exeFile is the executable gdb reads symbols from: the recorded file
// when it is still there, else a temporary copy of the one embedded in
// the trace (ttd record --embed-binaries), else none.
func exeFile(s *ttd.Session) (*exeCopy, error) {
	mods, err := s.Modules()
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		if m.Path == "" || m.Path[0] == '[' {
			continue
		}
		if _, err := os.Stat(m.Path); err == nil {
			return &exeCopy{path: m.Path}, nil
		}
		if m.Data == nil {
			return nil, nil
		}
		f, err := os.CreateTemp("", "ttd-exe-*")
		if err != nil {
			return nil, err
		}
		_, err = f.Write(m.Data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return nil, err
		}
		return &exeCopy{path: f.Name(), temp: true}, nil
	}
	return nil, nil
}
