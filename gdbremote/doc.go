// Package gdbremote serves the gdb remote serial protocol over a ttd
// Session, with reverse execution: gdb's reverse-step, reverse-next,
// reverse-finish, reverse-continue and watchpoints run backwards (the
// bs and bc packets), as with rr, and since 2025 LLDB's process
// continue --reverse.
//
// It has two layers, as rr's gdb server does. The codec (conn.go,
// packet.go) frames and checks packets and parses them into typed
// Requests; it never touches the session, and is fuzzed. The server
// (server.go) gives the requests their meaning against ttd.Session:
// every travel request maps onto one of the session's own operations
// (Step, StepThread, Continue, ContinueMatch, breakpoints, Seek,
// FindPrevWrite); the server adds no travel logic of its own. The past
// cannot be changed: register and memory writes are refused, and bytes
// the recording never saw are an error reply, never made up.
//
// Package gdbremote depends on package ttd only (and the standard
// library); never on reader, tracefile, x86, emu or the recorder.
package gdbremote
