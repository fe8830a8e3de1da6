package fleet

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"ttd/reader"
	"ttd/symbols"
)

// Segment is one checkpoint interval of one recording, the unit of work:
// re-simulation starts at its checkpoint (Chunk, Ctrl, Start) and runs
// to End, the next checkpoint's position (the trace's end for the last).
type Segment struct {
	Trace string // as listed: a path or a URL
	Index int    // 0-based, in position order
	Count int    // the recording's number of segments
	Pid   int    // the recording's process id (its first thread)
	Start uint64
	End   uint64
	Chunk int
	Ctrl  int
}

// TraceError names the recording an error came from.
type TraceError struct {
	Trace string
	Err   error
}

func (e *TraceError) Error() string { return e.Trace + ": " + e.Err.Error() }
func (e *TraceError) Unwrap() error { return e.Err }

func traceErr(trace string, err error) error {
	var te *TraceError
	if errors.As(err, &te) && te.Trace == trace {
		return err
	}
	return &TraceError{Trace: trace, Err: err}
}

// Recordings is a set of recordings split into checkpoint segments, the
// source the queries read. Build it with Open.
type Recordings struct {
	// Segments holds one Segment per checkpoint interval of every
	// recording, reshuffled across workers.
	Segments beam.PCollection
	// Whole makes each recording one segment (re-simulated from its
	// start by one worker): the reference the segmented results must
	// equal, and the cheaper plan for many short recordings.
	whole bool
}

// Options tune Open.
type Options struct {
	// Whole re-simulates each recording as one segment.
	Whole bool
}

// Open lists the recordings that patterns name and splits them into
// segments. A pattern is a path, a glob (filepath.Match syntax; for a
// URL, the syntax of its filesystem) or a URL of a filesystem registered
// with Beam (scheme://...). A pattern that matches nothing fails the
// pipeline with its name, as does a recording that cannot be opened.
func Open(s beam.Scope, opts Options, patterns ...string) Recordings {
	s = s.Scope("fleet.Open")
	pats := beam.CreateList(s, patterns)
	traces := beam.ParDo(s, listFn, pats)
	segs := beam.ParDo(s, &splitFn{Whole: opts.Whole}, traces)
	return Recordings{Segments: beam.Reshuffle(s, segs), whole: opts.Whole}
}

func init() {
	register.Function3x1(listFn)
	register.Emitter1[string]()
	register.DoFn3x1[context.Context, string, func(Segment), error](&splitFn{})
	register.Emitter1[Segment]()
}

// hasScheme says whether name is a URL (scheme://...).
func hasScheme(name string) bool {
	i := strings.Index(name, "://")
	return i > 0 && !strings.ContainsAny(name[:i], "/.")
}

// listFn expands one pattern into the recordings it names, sorted.
func listFn(ctx context.Context, pat string, emit func(string)) error {
	names, err := List(ctx, pat)
	if err != nil {
		return err
	}
	for _, n := range names {
		emit(n)
	}
	return nil
}

// List expands a pattern as Open does (a path, a glob or a URL), sorted.
func List(ctx context.Context, pat string) ([]string, error) {
	var names []string
	if hasScheme(pat) {
		fs, err := filesystem.New(ctx, pat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pat, err)
		}
		defer fs.Close()
		names, err = fs.List(ctx, pat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pat, err)
		}
	} else {
		if _, err := os.Stat(pat); err == nil {
			return []string{pat}, nil
		}
		var err error
		names, err = filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pat, err)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no such recording", pat)
	}
	sort.Strings(names)
	return names, nil
}

// splitFn lists a recording's checkpoint segments.
type splitFn struct {
	Whole bool
}

func (f *splitFn) ProcessElement(ctx context.Context, trace string, emit func(Segment)) error {
	segs, err := Split(ctx, trace, f.Whole)
	if err != nil {
		return err
	}
	for _, sg := range segs {
		emit(sg)
	}
	return nil
}

// Split lists the segments of one recording (one, from its start, when
// whole is set).
func Split(ctx context.Context, trace string, whole bool) ([]Segment, error) {
	ot, err := traces.get(ctx, trace)
	if err != nil {
		return nil, err
	}
	defer traces.put(ot)
	cps, err := ot.t.Checkpoints()
	if err != nil {
		return nil, traceErr(trace, err)
	}
	if whole {
		cps = cps[:1]
	}
	out := make([]Segment, len(cps))
	for k, cp := range cps {
		end := ot.t.End()
		if k+1 < len(cps) {
			end = cps[k+1].Position
		}
		out[k] = Segment{Trace: trace, Index: k, Count: len(cps), Pid: ot.pid,
			Start: cp.Position, End: end, Chunk: cp.Chunk, Ctrl: cp.Ctrl}
	}
	return out, nil
}

// openTrace is a recording opened by a worker, shared by the segments of
// it the worker re-simulates.
type openTrace struct {
	name string
	t    *reader.Trace
	pid  int
	refs int
	used uint64

	symOnce sync.Once
	syms    *symbols.Table
	symErr  error
}

// Symbols loads the recording's symbol table once (modules embedded in
// the trace, or the files it names). Recordings of the same program
// share one table (symCache).
func (ot *openTrace) Symbols() (*symbols.Table, error) {
	ot.symOnce.Do(func() { ot.syms, ot.symErr = sharedSymbols(ot.name, ot.t) })
	return ot.syms, ot.symErr
}

// sharedSymbols loads the symbol table of a recording's modules through
// symCache: recordings of the same program share one table.
func sharedSymbols(name string, t *reader.Trace) (*symbols.Table, error) {
	mods, err := t.Modules()
	if err != nil {
		return nil, traceErr(name, err)
	}
	var ms []symbols.Module
	var key strings.Builder
	for _, m := range mods {
		sm := symbols.Module{Path: string(m.Path), LoadAddr: m.LoadAddr}
		fmt.Fprintf(&key, "%s@%x:", sm.Path, sm.LoadAddr)
		if data, err := t.ModuleFile(m); err == nil && data != nil {
			sm.Data = data
			fmt.Fprintf(&key, "embedded:%x;", sha256.Sum256(data))
		} else if st, err := os.Stat(sm.Path); err == nil {
			fmt.Fprintf(&key, "file:%d:%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			key.WriteString("missing;")
		}
		ms = append(ms, sm)
	}
	syms, err := symCache.load(key.String(), ms)
	if syms == nil && err != nil {
		err = traceErr(name, err)
	}
	return syms, err
}

// symCache keeps the symbol tables a worker loaded, by the identity of
// their modules (path, load address, and the file's size and time or the
// embedded copy's hash): loading libc's DWARF costs about 2 s, once per
// worker instead of once per recording. A module that cannot be read
// leaves its symbols out; the others still resolve, as in ttd's
// sessions.
var symCache = symbolTables{tables: map[string]*symbolsEntry{}}

type symbolTables struct {
	sync.Mutex
	tables map[string]*symbolsEntry
}

type symbolsEntry struct {
	once sync.Once
	t    *symbols.Table
}

const maxSymbolTables = 16

func (c *symbolTables) load(key string, ms []symbols.Module) (*symbols.Table, error) {
	c.Lock()
	e := c.tables[key]
	if e == nil {
		if len(c.tables) >= maxSymbolTables {
			clear(c.tables)
		}
		e = &symbolsEntry{}
		c.tables[key] = e
	}
	c.Unlock()
	e.once.Do(func() {
		t, _ := symbols.Load(ms)
		e.t = t
	})
	if e.t == nil {
		return nil, errors.New("no symbols")
	}
	return e.t, nil
}

// traceCache keeps the recordings a worker process has open, the least
// recently used closed first beyond maxOpen (each holds a cache of
// decoded chunks).
type traceCache struct {
	mu    sync.Mutex
	open  map[string]*openTrace
	clock uint64
}

const maxOpen = 4

var traces = traceCache{open: map[string]*openTrace{}}

func (c *traceCache) get(ctx context.Context, name string) (*openTrace, error) {
	c.mu.Lock()
	c.clock++
	if ot := c.open[name]; ot != nil {
		ot.refs++
		ot.used = c.clock
		c.mu.Unlock()
		return ot, nil
	}
	c.mu.Unlock()
	t, err := openRecording(ctx, name)
	if err != nil {
		return nil, traceErr(name, err)
	}
	pid, err := firstTid(t)
	if err != nil {
		t.Close()
		return nil, traceErr(name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ot := c.open[name]; ot != nil { // opened meanwhile
		t.Close()
		ot.refs++
		return ot, nil
	}
	ot := &openTrace{name: name, t: t, pid: pid, refs: 1, used: c.clock}
	c.open[name] = ot
	c.evict()
	return ot, nil
}

func (c *traceCache) put(ot *openTrace) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ot.refs--
	c.evict()
}

// evict closes unused recordings beyond maxOpen, oldest first.
func (c *traceCache) evict() {
	for len(c.open) > maxOpen {
		var old *openTrace
		for _, ot := range c.open {
			if ot.refs == 0 && (old == nil || ot.used < old.used) {
				old = ot
			}
		}
		if old == nil {
			return
		}
		delete(c.open, old.name)
		old.t.Close()
	}
}

// openRecording opens a local trace file, or reads a URL's into memory.
func openRecording(ctx context.Context, name string) (*reader.Trace, error) {
	if !hasScheme(name) {
		return reader.Open(name)
	}
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	return reader.NewTrace(bytesReaderAt(b), int64(len(b)))
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// firstTid is the recording's first thread: its process id (ttd numbers
// a process's threads pid, pid+1...).
func firstTid(t *reader.Trace) (int, error) {
	pid := 0
	err := t.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		if ev.Kind == reader.EventThreadStart || ev.Kind == reader.EventCheckpoint {
			pid = ev.Tid
			return false
		}
		return true
	})
	return pid, err
}
