// Package progress shows the progress of a long operation (a replay, an
// index build, a call-tree analysis) as a bar on stderr when stderr is a
// terminal, and nothing otherwise: logs and pipes stay clean.
//
// It depends only on github.com/schollz/progressbar/v3 and x/term; the
// packages doing the work never import it: they take a
// func(done, total int) callback, and cmd/ttd passes Bar.Set.
package progress

import (
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar is a progress bar, or nothing when its output is not a terminal.
// Its methods may be called from several goroutines; a nil Bar does
// nothing.
type Bar struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// New returns a bar titled description counting up to total in unit
// ("segments", "instructions"), drawn on stderr if it is a terminal.
func New(description, unit string, total int64) *Bar {
	if !IsTerminal(os.Stderr) {
		return nil
	}
	return NewTo(os.Stderr, description, unit, total)
}

// NewTo draws on w whatever w is (tests).
func NewTo(w io.Writer, description, unit string, total int64) *Bar {
	return &Bar{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)}
}

// Set moves the bar to done of total (a func(done, total int) for the
// packages' Progress callbacks).
func (b *Bar) Set(done, total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if int64(total) != b.bar.GetMax64() {
		b.bar.ChangeMax64(int64(total))
	}
	b.bar.Set64(int64(done))
}

// Set64 moves the bar to done.
func (b *Bar) Set64(done int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bar.Set64(done)
}

// Done finishes and clears the bar.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bar.Finish()
}

// Callback returns b.Set, or nil when there is no bar (so that callers
// skip the bookkeeping).
func (b *Bar) Callback() func(done, total int) {
	if b == nil {
		return nil
	}
	return b.Set
}
