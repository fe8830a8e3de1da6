package reader

import (
	"cmp"
	"io"
	"sync"

	"ttd/tracefile"
)

// A survey of the chunks: the trace's Process records (read when it
// opens), its Module records (Modules) and its checkpoints (Checkpoints).
// They are few, but finding them used to decode every chunk into the
// chunk cache, every record copied, three times over: 150-250 ms of CPU
// before `ttd probe --jobs 2` over a 1e9-instruction trace could start
// its jobs, which then found the chunks decoded but had waited for it.
// Now each chunk is surveyed at most once per Trace, in parallel, with
// the records decoded in the iterator's buffers and only these few
// copied, and only the chunks that may hold what is asked: a trace of
// tracefile's minor version 5 says which chunks hold Module and Process
// records (tracefile.Reader.ModuleChunks, ProcessChunks); an older one
// does not, and a process tree flags nearly every chunk as holding
// process records (its ProcessState records), so there the first survey
// (at Open) looks at every chunk and the later ones find it done.

// chunkPrograms is what one chunk holds of the Module and Process
// records.
type chunkPrograms struct {
	procs []tracefile.Process
	// procErr: a damaged Process record; loadErr: a damaged record a
	// re-simulation acts on, so that loadChunk fails on the chunk (a
	// Process or ProcessState record of a tree).
	procErr, loadErr error
	mods             []ModuleRef
	// cps are the chunk's Checkpoint records, Ctrl their index among
	// the chunk's control records (loadChunk).
	cps []Checkpoint
	// lead counts the mods that come before the chunk's first control
	// record with a position: they are at the position the chunks
	// before it end at (positionBefore).
	lead int
	// last is the position of the chunk's last control record with one
	// (hasLast), the position the next chunk starts at.
	last    uint64
	hasLast bool
}

// programScan keeps what scanPrograms found, by chunk, and why a chunk
// could not be surveyed; busy are the chunks being surveyed (their
// channel closes when done), so that a survey of a few chunks (Modules)
// need not wait for one of many (Checkpoints) running at the same time.
type programScan struct {
	mu     sync.Mutex
	chunks map[int]*chunkPrograms
	errs   map[int]error
	busy   map[int]chan struct{}
}

// scanPrograms surveys the chunks of list not surveyed yet, in parallel,
// and waits for those another call is surveying. The error is that of
// the first chunk of list that failed; the chunks that did not fail are
// kept.
func (t *Trace) scanPrograms(list []int) error {
	s := &t.progs
	s.mu.Lock()
	if s.chunks == nil {
		s.chunks, s.errs, s.busy = map[int]*chunkPrograms{}, map[int]error{}, map[int]chan struct{}{}
	}
	var todo []int
	var wait []chan struct{}
	for _, i := range list {
		switch {
		case s.chunks[i] != nil || s.errs[i] != nil:
		case s.busy[i] != nil:
			wait = append(wait, s.busy[i])
		default:
			todo = append(todo, i)
			s.busy[i] = make(chan struct{})
		}
	}
	s.mu.Unlock()
	Parallel(len(todo), 0, func(k int) {
		i := todo[k]
		cp, err := t.chunkPrograms(i)
		s.mu.Lock()
		if err != nil {
			s.errs[i] = err
		} else {
			s.chunks[i] = cp
		}
		close(s.busy[i])
		delete(s.busy, i)
		s.mu.Unlock()
	})
	for _, c := range wait {
		<-c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range list {
		if s.errs[i] != nil {
			return s.errs[i]
		}
	}
	return nil
}

// scanned returns what scanPrograms found in chunk i, or why it could
// not (nil, nil: not surveyed).
func (t *Trace) scanned(i int) (*chunkPrograms, error) {
	t.progs.mu.Lock()
	defer t.progs.mu.Unlock()
	return t.progs.chunks[i], t.progs.errs[i]
}

// chunkPrograms decodes chunk i for its Module and Process records. A
// Module record takes the position ScanEvents gives it: that of the
// control record the chunk decodes it with (loadChunk: the next one),
// or the last position before it.
func (t *Trace) chunkPrograms(i int) (*chunkPrograms, error) {
	it := t.iter()
	it.Reset(i)
	defer t.iters.Put(it)
	cp := &chunkPrograms{}
	pending := 0 // mods waiting for their control record
	nctrl := 0   // control records so far
	ctrl := func(pos uint64, ok bool) {
		nctrl++
		if ok {
			cp.last, cp.hasLast = pos, true
		}
		for k := len(cp.mods) - pending; k < len(cp.mods); k++ {
			if cp.hasLast {
				cp.mods[k].Position = cp.last
			} else {
				cp.lead++
			}
		}
		pending = 0
	}
	ci := &t.chunks[i]
	for {
		r, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch r.Kind {
		case tracefile.KindMemRead, tracefile.KindNonDet, tracefile.KindCodeBytes:
		case tracefile.KindModule:
			m := r.Module
			m.Path = append([]byte(nil), m.Path...)
			m.BuildID = append([]byte(nil), m.BuildID...)
			ref := ModuleRef{Module: m, Chunk: i, embeds: len(m.Embedded) > 0}
			ref.Embedded = nil
			cp.mods = append(cp.mods, ref)
			pending++
		case tracefile.KindUnknown:
			switch {
			case r.IsProcess():
				p, off, err := tracefile.DecodeProcess(r.Opaque.Bytes)
				if err != nil {
					err = tracefile.RecordError(ci, r, off, err)
					cp.procErr = cmp.Or(cp.procErr, err)
					if t.tree {
						cp.loadErr = cmp.Or(cp.loadErr, err)
					}
					break
				}
				cp.procs = append(cp.procs, p)
				if t.tree {
					ctrl(p.Position, true)
				}
			case r.IsProcessState() && t.tree:
				if _, off, err := tracefile.DecodeProcessState(r.Opaque.Bytes); err != nil {
					cp.loadErr = cmp.Or(cp.loadErr, tracefile.RecordError(ci, r, off, err))
				}
				ctrl(0, false)
			}
			// Other records of newer minor versions are no control
			// records (loadChunk).
		case tracefile.KindCheckpoint:
			cp.cps = append(cp.cps, Checkpoint{Position: r.Checkpoint.Position, Chunk: i, Ctrl: nctrl})
			ctrl(r.Checkpoint.Position, true)
		default:
			ctrl(recordPosition(r))
		}
	}
	ctrl(0, false)
	return cp, nil
}

// positionBefore is the position ScanEvents has when it reaches chunk i:
// that of the last control record with one before it, or 0.
func (t *Trace) positionBefore(i int) (uint64, error) {
	for j := i - 1; j >= 0; j-- {
		if err := t.scanPrograms([]int{j}); err != nil {
			return 0, err
		}
		if cp, _ := t.scanned(j); cp.hasLast {
			return cp.last, nil
		}
	}
	return 0, nil
}

// processRecords reads the trace's Process records, in order, from the
// chunks that may hold them (the Module records they hold are kept for
// Modules).
func (t *Trace) processRecords() ([]tracefile.Process, error) {
	list := t.f.ProcessChunks()
	if err := t.scanPrograms(list); err != nil {
		return nil, err
	}
	var out []tracefile.Process
	for _, i := range list {
		cp, _ := t.scanned(i)
		if cp.procErr != nil {
			return nil, cp.procErr
		}
		out = append(out, cp.procs...)
	}
	return out, nil
}

// Modules lists the trace's Module records in order (without their
// embedded files: see ModuleFile), each at the position ScanEvents
// reports its EventModule. Only the chunks that may hold them are
// decoded (tracefile.Reader.ModuleChunks), and each once per Trace. The
// slice is the caller's.
func (t *Trace) Modules() ([]ModuleRef, error) {
	list := t.f.ModuleChunks()
	serr := t.scanPrograms(list)
	var out []ModuleRef
	for _, i := range list {
		cp, _ := t.scanned(i)
		if cp == nil {
			break // it failed: serr says why
		}
		if cp.loadErr != nil {
			return out, cp.loadErr
		}
		n := len(out)
		out = append(out, cp.mods...)
		if cp.lead > 0 {
			pos, err := t.positionBefore(i)
			if err != nil {
				return out[:n], err
			}
			for k := range cp.lead {
				out[n+k].Position = pos
			}
		}
	}
	return out, serr
}

// scanCheckpoints lists the checkpoints (Checkpoints) from the trace's
// index, or from a survey of the chunks that hold some.
func (t *Trace) scanCheckpoints() ([]Checkpoint, error) {
	if list, ok := t.f.IndexedCheckpoints(); ok {
		return t.indexedCheckpoints(list), nil // no chunk decoded (cpindex.go)
	}
	return t.surveyCheckpoints()
}

// surveyCheckpoints lists the checkpoints from a survey of the chunks
// that hold some.
func (t *Trace) surveyCheckpoints() ([]Checkpoint, error) {
	var list []int
	for i := range t.chunks {
		if i == 0 || t.chunks[i].BeginsWithCheckpoint || t.chunks[i].Checkpoints > 0 {
			list = append(list, i)
		}
	}
	t.scanPrograms(list)
	// The start: position 0, or the first checkpoint of a ring-buffer
	// window (its chunk 0 begins with it).
	cps := []Checkpoint{{Position: t.chunks[0].FirstPosition, Chunk: 0, Ctrl: 0}}
	for _, i := range list {
		cp, err := t.scanned(i)
		if err == nil {
			err = cp.loadErr
		}
		if err != nil {
			if i == 0 {
				return nil, err
			}
			// A damaged chunk: re-simulation cannot start in it, but
			// the checkpoints before it are good.
			break
		}
		for _, c := range cp.cps {
			if c.Position <= cps[len(cps)-1].Position {
				continue // the initial checkpoint at 0, or a repeat
			}
			cps = append(cps, c)
		}
	}
	return cps, nil
}
