package reader

import (
	"sync"

	"ttd/tracefile"
)

// A survey of the chunks: the Process records of a tree (read when the
// trace opens), its Module records (Modules) and its checkpoints
// (Checkpoints). They are few, but finding them decoded every chunk
// three times over: once for the Process records (a process tree flags
// nearly every chunk as holding some, for the ProcessState records after
// its checkpoints), then one chunk after another for Modules, then the
// checkpoints from the cache. That was 150-250 ms of CPU before `ttd
// probe --jobs 2` over a 1e9-instruction trace could start its jobs.
// Now a chunk is surveyed when it is decoded for the chunk cache, once
// per Trace, in parallel; only the chunks that may hold what is asked
// are decoded (tracefile.Reader.ModuleChunks, ProcessChunks: a trace of
// tracefile's minor version 5 says which chunks hold Module and Process
// records), and they stay in the cache for the re-simulations that
// follow.

// chunkPrograms is what one chunk holds of the Module, Process and
// Checkpoint records, as ScanEvents would report them.
type chunkPrograms struct {
	procs []tracefile.Process // a tree's (ctrl.proc)
	mods  []ModuleRef
	// lead counts the mods that come before the chunk's first control
	// record with a position: they are at the position the chunks
	// before it end at (positionBefore).
	lead int
	// last is the position of the chunk's last control record with one
	// (hasLast), the position the next chunk starts at.
	last    uint64
	hasLast bool
	// cps are the chunk's Checkpoint records.
	cps []Checkpoint
}

// surveyChunk is what chunk ch holds of the Module, Process and
// Checkpoint records.
func surveyChunk(ch *chunk) *chunkPrograms {
	cp := &chunkPrograms{}
	for k := range ch.ctrls {
		c := &ch.ctrls[k]
		if p, ok := ctrlPosition(c); ok {
			cp.last, cp.hasLast = p, true
		}
		if c.proc != nil {
			cp.procs = append(cp.procs, *c.proc)
		}
		if c.rec.Kind == tracefile.KindCheckpoint {
			cp.cps = append(cp.cps, Checkpoint{Position: c.rec.Checkpoint.Position, Chunk: ch.index, Ctrl: k})
		}
		for m := range c.mods {
			ref := ModuleRef{Module: c.mods[m], Position: cp.last, Chunk: ch.index, embeds: c.mods[m].Embedded != nil}
			ref.Embedded = nil
			if !cp.hasLast {
				cp.lead++
			}
			cp.mods = append(cp.mods, ref)
		}
	}
	return cp
}

// programScan keeps what scanPrograms found, by chunk, and why a chunk
// could not be decoded.
type programScan struct {
	mu     sync.Mutex
	chunks map[int]*chunkPrograms
	errs   map[int]error
}

// scanPrograms surveys the chunks of list not surveyed yet, decoding them
// in parallel into the chunk cache. The error is that of the first chunk
// of list that failed.
func (t *Trace) scanPrograms(list []int) error {
	s := &t.progs
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chunks == nil {
		s.chunks, s.errs = map[int]*chunkPrograms{}, map[int]error{}
	}
	var todo []int
	for _, i := range list {
		if s.chunks[i] == nil && s.errs[i] == nil {
			todo = append(todo, i)
		}
	}
	got := make([]*chunkPrograms, len(todo))
	errs := make([]error, len(todo))
	Parallel(len(todo), 0, func(k int) {
		ch, err := t.chunkUncached(todo[k])
		if err != nil {
			errs[k] = err
			return
		}
		got[k] = surveyChunk(ch)
	})
	for k, i := range todo {
		if errs[k] != nil {
			s.errs[i] = errs[k]
			continue
		}
		s.chunks[i] = got[k]
	}
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
// chunks that may hold them. A tree's are surveyed with the chunks
// decoded for the cache, the Module records and checkpoints they hold
// kept for Modules and Checkpoints; a chunk that does not decode gives
// its Process records the way tracefile reads them, as do the chunks of
// a trace that re-simulates its first process only (whose control
// records leave Process records out).
func (t *Trace) processRecords() ([]tracefile.Process, error) {
	list := t.f.ProcessChunks()
	if !t.tree {
		return t.f.Processes()
	}
	t.scanPrograms(list)
	var out []tracefile.Process
	for _, i := range list {
		cp, err := t.scanned(i)
		if err != nil {
			ps, err := t.f.ChunkProcesses(nil, i)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
			continue
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

// scanCheckpoints lists the checkpoints (Checkpoints) from a survey of
// the chunks that hold some.
func (t *Trace) scanCheckpoints() ([]Checkpoint, error) {
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
