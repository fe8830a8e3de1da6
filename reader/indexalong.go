package reader

import (
	"os"

	"ttd/tracefile"
)

// Index along: a trace that logs no reads needs its checkpoint memory
// file (cpmem.go) before a replay can start anywhere but at its start,
// and the index pass that builds it is a replay of the whole trace,
// 1.1-2.4 times a plain one. A command that would evaluate segments in
// parallel over such a trace with no file yet (`ttd probe --jobs 2` just
// after `ttd record`) is better off replaying it once from its start, as
// `--jobs 1` does, and writing the file on the way: the index pass's
// checkpoint hook rides along the command's own replay, and the next
// command finds the file.

// alongPass is the index pass riding along a replay from the start.
type alongPass struct {
	f *os.File // written aside, renamed into place at the end
	b *pagesBuilder
}

// IndexAlong asks that the next replay of t from its start write t's
// checkpoint memory file on the way, if it runs to the end of the trace.
// It reports whether the request was taken: the trace logs no reads,
// has no such file yet and was opened from a file.
func (t *Trace) IndexAlong() bool {
	if !t.noReads || t.cpm.pages != nil || t.cpm.err != nil || t.cpm.path == "" {
		return false
	}
	t.alongWant.Store(true)
	return true
}

// takeAlong gives replay r, about to start at the trace's start, the
// index pass's checkpoint hook if IndexAlong asked for it (once).
func (t *Trace) takeAlong(r *Replay) {
	if !t.alongWant.CompareAndSwap(true, false) {
		return
	}
	f, err := createAside(tracefile.PagesPath(t.cpm.path))
	if err != nil {
		return // (a directory this user cannot write: built when needed)
	}
	b, err := t.newPagesBuilder(f)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return
	}
	r.along, r.cpHook = &alongPass{f: f, b: b}, b.checkpoint
}

// finishAlong ends r's index pass, if it has one (Close): the file goes
// into place when the replay reached the trace's end, else away.
func (r *Replay) finishAlong() {
	a := r.along
	if a == nil {
		return
	}
	r.along, r.cpHook = nil, nil
	t := r.t
	defer os.Remove(a.f.Name()) // (renamed: nothing)
	if r.pos < t.End() {
		a.b.abort()
		a.f.Close()
		return
	}
	err := a.b.close()
	if err2 := a.f.Close(); err != nil || err2 != nil {
		return
	}
	path := tracefile.PagesPath(t.cpm.path)
	if os.Rename(a.f.Name(), path) != nil {
		return
	}
	p, err := t.openPagesAt(path)
	if err != nil {
		return
	}
	used := false
	t.cpm.once.Do(func() {
		if t.cpm.pages == nil && t.cpm.err == nil {
			t.cpm.pages, used = p, true
		}
	})
	if !used {
		p.Close()
	}
}
