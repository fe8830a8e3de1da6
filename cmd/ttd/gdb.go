package main

import (
	"errors"
	"fmt"
	"net"
	"os"

	"ttd/gdbremote"
	"ttd/ttd"
)

func init() {
	register(command{"gdbserver", "[--listen ADDR] [--log] TRACE", "serve a recording to gdb (remote protocol with reverse execution) on ADDR (loopback by default)", gdbserverCmd, 65})
}

// gdbserverCmd implements "ttd gdbserver": one gdb (or lldb) client on
// a TCP port, loopback unless told otherwise.
func gdbserverCmd(name string, args []string) int {
	const usageArgs = "[--listen ADDR] [--log] TRACE"
	fs := newFlags(name, usageArgs)
	listen := fs.String("listen", "127.0.0.1:0", "serve one client on ADDR (HOST:PORT; a bare :PORT binds to 127.0.0.1)")
	logOn := fs.Bool("log", false, "log every packet on stderr")
	if err := fs.Parse(args); err != nil {
		return flagError(name, usageArgs, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, usageArgs, errors.New("want exactly one trace"))
	}
	t, err := ttd.OpenTarget(fs.Arg(0), nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd gdbserver: %v\n", err)
		return 1
	}
	defer t.Close()
	cfg := gdbremote.Config{}
	if *logOn {
		cfg.Log = os.Stderr
	}
	l, err := net.Listen("tcp", gdbremote.LoopbackAddr(*listen))
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd gdbserver: %v\n", err)
		return 1
	}
	defer l.Close()
	// The address is printed so that a client (and the tests) can
	// connect to a port the system chose.
	fmt.Fprintf(os.Stderr, "ttd gdbserver: listening on %s (gdb: target remote %s)\n", l.Addr(), l.Addr())
	if err := gdbremote.ServeListener(l, t, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "ttd gdbserver: %v\n", err)
		return 1
	}
	return 0
}

// replayGDB implements "ttd replay --gdb TRACE [-- GDB-ARGS...]": serve
// the recording on loopback and run gdb connected to it, as rr replay
// does.
func replayGDB(path string, gdbArgs []string, logOn bool) int {
	t, err := ttd.OpenTarget(path, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	defer t.Close()
	cfg := gdbremote.Config{}
	if logOn {
		cfg.Log = os.Stderr
	}
	status, err := gdbremote.RunGDB(t, gdbArgs, os.Stdin, os.Stdout, os.Stderr, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
	}
	return status
}
