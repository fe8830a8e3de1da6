// Package flows cuts a recording into flows — the activities that work
// coming in started (a request read from a socket or a pipe, an accepted
// connection), followed through the threads it is handed to — and finds
// the anomalous ones, after the self-propelled instrumentation paper
// (seeds/self-propelled-instrumentation.txt, §3–4): each flow's profile is
// the fraction of its instructions spent in each call path and the share
// of its bytes sent by each path; flows are compared by the Manhattan
// distance between profiles, and ranked by their distance to common
// behaviour or to known-normal flows.
//
// The split comes from the recording's syscalls alone (NewSplit); the
// profiles from package calls, which re-simulates the recording and
// charges each instruction to the flow its thread works for.
//
// Process trees: each process has its own table of file descriptors (a
// fork copies its parent's), and the pipes and sockets behind them are
// shared, so the write in one process and the read in another that
// consumed those bytes join the same flow; a forked process starts in
// its parent's flow (and package calls continues its parent's call
// path); a reaped child's flow goes on in a waiting parent that works
// for none. A connect to a listening socket of the recording is matched
// with its accept (first in, first out per listening socket): the
// accepted connection is a flow from the accept, its client works for it
// from the connect on, and the first read on the accepted socket joins
// it. The accepting thread works for the connection until it hands it
// on (to a thread or process it starts, or to another thread that reads
// the request) or closes it; a parent reaping children works for each
// reaped child's flow in turn. The communication graph has the processes as nodes and the
// messages, connections, forks, waits and thread starts as edges.
//
// flows depends on calls, reader, tracefile and internal/linux (syscall
// names); it must never depend on emu, the recorder, ttd's session or
// cmd.
package flows
