package main

import (
	"errors"
	"fmt"
	"net"
	"os"

	"ttd/dap"
)

// dapCmd implements "ttd dap": a Debug Adapter Protocol server for VS Code
// on stdin/stdout, or on a TCP port with --listen.
func dapCmd(name string, args []string) int {
	const usageArgs = "[--listen ADDR] [--log]"
	fs := newFlags(name, usageArgs)
	listen := fs.String("listen", "", "serve one client on ADDR (HOST:PORT; a bare :PORT binds to 127.0.0.1) instead of stdin/stdout")
	logOn := fs.Bool("log", false, "log the server's diagnostics on stderr")
	if err := fs.Parse(args); err != nil {
		return flagError(name, usageArgs, err)
	}
	if fs.NArg() != 0 {
		return flagError(name, usageArgs, errors.New("unexpected arguments"))
	}
	cfg := dap.Config{}
	if *logOn {
		cfg.Log = os.Stderr
	}
	if *listen == "" {
		if err := dap.NewServer(os.Stdin, os.Stdout, cfg).Serve(); err != nil {
			fmt.Fprintf(os.Stderr, "ttd dap: %v\n", err)
			return 1
		}
		return 0
	}
	addr := *listen
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		// Loopback unless told otherwise: the adapter reads any file the
		// user can.
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd dap: %v\n", err)
		return 1
	}
	defer l.Close()
	// The address is printed so that a client (and the tests) can connect
	// to a port chosen by the system (--listen 127.0.0.1:0).
	fmt.Fprintf(os.Stderr, "ttd dap: listening on %s\n", l.Addr())
	conn, err := l.Accept()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd dap: %v\n", err)
		return 1
	}
	defer conn.Close()
	if err := dap.NewServer(conn, conn, cfg).Serve(); err != nil {
		fmt.Fprintf(os.Stderr, "ttd dap: %v\n", err)
		return 1
	}
	return 0
}
