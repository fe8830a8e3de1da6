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
// flows depends on calls, reader, tracefile and internal/linux (syscall
// names); it must never depend on emu, the recorder, ttd's session or
// cmd. Processes other than the recorded one are not followed yet: the
// recording format has no process tree.
package flows
