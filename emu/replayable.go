package emu

// What a recording that logs no reads (recorder's replayable mode) needs
// to know of an address space or a thread beyond the observer's events:
// a replay then takes every read from its own memory image, so every
// byte written outside the guest's instructions must reach the trace.

// PendingWrites are the kernel's writes to t's memory since its last
// syscall began, not reported yet: a forked child's CLONE_CHILD_SETTID
// word, written in the child's memory before it first runs.
func (t *Thread) PendingWrites() []MemRange { return t.writes }

// WritableShared returns the start of a mapping of mm whose pages
// another mapping may write behind the program's back — a writable
// MAP_SHARED mapping (anonymous or of a file) or a System V segment —
// and whether there is one.
func (mm *MM) WritableShared() (uint64, bool) {
	for _, v := range mm.vmas {
		if v.shm != nil || v.shared && v.prot&2 != 0 {
			return v.start, true
		}
	}
	return 0, false
}
