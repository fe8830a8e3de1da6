// Package reanimate re-executes the file-system effects of a recording
// against a directory, as Re-Animator's replayer does
// (seeds/re-animator.txt, section 2.4): the recorded opens, writes,
// truncates, renames, links, mkdirs, chmods, utimensats and fsyncs run
// again, with the recorded data, under a root directory; every recorded
// path, absolute or relative to the recorded working directory, is
// re-rooted there. With Verify, every re-executed call's result and the
// buffers calls return (read data, stat fields other than times,
// directory entries) are compared with the recording.
//
// Nothing outside the root is ever touched: every path is resolved by
// the kernel with openat2(RESOLVE_IN_ROOT) from a descriptor of the
// root, so ".." and symlinks (absolute ones included) stay inside it;
// operations on a final component run relative to its parent opened
// that way.
//
// Calls on descriptors that are not files the replay opened (pipes,
// sockets, the terminal) are not executed: they are simulated from the
// recording, whose results the program saw.
//
// The calls come from package syscalls' decoding of the trace. The
// package depends on syscalls, reader and internal/linux, never on emu,
// the recorder or the debugger.
package reanimate
