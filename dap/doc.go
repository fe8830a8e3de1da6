// Package dap is ttd's Debug Adapter Protocol server: it lets VS Code (or
// any DAP client) travel forwards and backwards through a recording —
// breakpoints on source lines, functions, instructions and data, stepping
// in both directions, stacks, variables, memory and disassembly — with
// the messages of github.com/google/go-dap.
//
// The server (Server) speaks DAP and keeps the client's view (breakpoints,
// variable and frame handles, stepping); it reaches the recording only
// through the Target interface (target.go), the way delve's DAP server
// reaches a process through pkg/proc and rr's GdbServer only through the
// ReplayTimeline. Handlers are named onXxxRequest and dispatched from one
// switch (server.go); error codes live in errors.go. A handler's error or
// panic becomes an ErrorResponse, never a crash of the adapter.
//
// The real Target is target_ttd.go: package ttd's Target (the backend
// the gdb server shares: symbols, goroutines, searches) with its values
// converted to this package's types, nothing more.
//
// dap must never depend on reader, tracefile or x86 (the backend's
// business), nor on emu or the host process: debugging a trace is
// re-simulation only. The one exception is the record-then-debug launch
// path (launch_record.go), which runs the program under package recorder
// before opening the new trace.
package dap
