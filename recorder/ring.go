package recorder

import "ttd/tracefile"

// Ring-buffer recording (Options.Ring): the trace keeps only its last
// chunks (tracefile.Options.Ring), so the records a window needs that
// were written once, before it, must be written again where a window can
// start. Mappings are announced at every checkpoint already; the
// modules (for symbols) are too in this mode.

// ringChunkSize is the chunk size of a ring of ring bytes: a window
// drops whole chunks, so a ring holds several.
func ringChunkSize(ring int64) int {
	return int(min(max(ring/8, 64<<10), 1<<20))
}

// keepModule remembers a Module record for reannounceModules, without
// its embedded file (which would fill the ring at every checkpoint).
func (r *Recorder) keepModule(m *tracefile.Module) {
	if r.opts.Ring > 0 {
		c := *m
		c.Embedded = nil
		r.ringModules = append(r.ringModules, &c)
	}
}

// reannounceModules writes the modules again after a checkpoint, for a
// window that starts there.
func (r *Recorder) reannounceModules() {
	if r.opts.Ring <= 0 {
		return
	}
	for _, m := range r.ringModules {
		r.w.Module(m)
	}
}
