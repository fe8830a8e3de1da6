package emu

// What a recording that logs no reads (recorder's replayable mode) needs
// to know of an address space or a thread beyond the observer's events:
// a replay then takes every read from its own memory image, so every
// byte written outside the guest's instructions must reach the trace.

// PendingWrites are the kernel's writes to t's memory since its last
// syscall began, not reported yet: a forked child's CLONE_CHILD_SETTID
// word, written in the child's memory before it first runs.
func (t *Thread) PendingWrites() []MemRange { return t.writes }
