package syscalls

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/tracefile"
	"ttd/x86"
)

// Options select what an export covers.
type Options struct {
	// Pid keeps only the calls of one process (0: all).
	Pid int
	// StrSize is strace's -s: the bytes of a buffer the strace format
	// prints (<0: all). The other formats always carry buffers in full
	// unless Cut is set.
	StrSize int
	// Cut limits the buffers of every format to StrSize bytes.
	Cut bool
}

// Sink receives the calls of an export in position order. The Call and
// its slices are reused for the next call: valid only during Call.
type Sink interface {
	Call(c *Call) error
	// End is called once when the program ended (nil if the trace was
	// cut short).
	End(e *tracefile.Exit) error
}

// UnfinishedSink is a Sink that prints a call a thread blocked in as two
// lines when another thread's line comes between its entry and its
// completion (strace -f's "<unfinished ...>" and "<... resumed>"):
// Unfinished is called at the first such line, and the call itself later
// comes to Call with Resumed set.
type UnfinishedSink interface {
	Unfinished(c *Call) error
}

// Stats count what an export saw.
type Stats struct {
	Calls   int // calls exported
	Missing int // calls with a buffer byte the re-simulation did not know
	// Unrecorded counts the processes of the tree besides the first:
	// the trace holds their lives, not their calls (process.go).
	Unrecorded int
	// WholeRegions is set for a trace recorded before the recorder
	// logged the changes of a region (header parameter regions =
	// diff): it unmapped a heap whenever brk grew it, so the bytes the
	// program had there before are unknown. They are exported as
	// missing, never guessed as zeros.
	WholeRegions bool
}

// Export re-simulates t from its start and gives every syscall, decoded,
// to sink.
func Export(t *reader.Trace, opts Options, sink Sink) (Stats, error) {
	var st Stats
	// A forward-only run: the chunk re-simulated and the next one are
	// all it needs of the cache, whatever the trace's length.
	defer t.SetChunkCache(t.SetChunkCache(0))
	r, err := t.NewReplay(0)
	if err != nil {
		return st, err
	}
	defer r.Close()
	mem := newReplayMemory(r, t.Header.Cwd)
	defer mem.close()
	argsSet := false
	pids := map[int]int{}
	vdsos := map[int][2]uint64{} // each address space's [vdso] (Mmap records)
	// Blocking calls: a thread that stops running at a syscall and
	// resumes with its completion was blocked in it since it stopped.
	running := 0
	stopped, resumed := map[int]uint64{}, map[int]uint64{}
	d := &decoder{m: mem, strSize: opts.StrSize, entry: mem}
	// A trace damaged part way: the scans keep what they read before the
	// damage, and the re-simulation reports the error where it meets it,
	// after exporting the calls before it.
	entries, blocked, _ := scan(t)
	procs, nprocs, start, _ := processes(t.File())
	st.Unrecorded = nprocs
	st.WholeRegions = t.Header.Params["regions"] != "diff"
	mem.noZeros = st.WholeRegions
	if t.Tree() {
		// Every process of the tree is re-simulated: their calls are
		// in the trace, and what each knows of its memory (spaces.go).
		st.Unrecorded = 0
		mem.tree = true
		if ps := t.Processes(); len(ps) > 0 {
			mem.first = ps[0].Pid
		}
		r.TrackProcesses()
		if tt, ok := sink.(treeSink); ok {
			tt.tree()
		}
	} else {
		r.Track()
	}
	ps, _ := sink.(ProcessSink)
	// lifeUpTo gives the sink the process events before pos.
	lifeUpTo := func(pos uint64) error {
		// A process's end comes after its exit_group at the same
		// position, as strace prints it.
		for len(procs) > 0 && (procs[0].Position < pos || procs[0].Position == pos && procs[0].Event != tracefile.ProcessExited) {
			p := &procs[0]
			procs = procs[1:]
			if ps != nil && (opts.Pid == 0 || p.Pid == opts.Pid) {
				if err := ps.Process(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// Blocked calls another thread's line interrupts are printed as
	// "<unfinished ...>" there (strace -f), when the sink wants them.
	us, _ := sink.(UnfinishedSink)
	du := &decoder{m: mem, strSize: opts.StrSize, entry: mem}
	var ucall Call
	bi := 0                 // blocked[:bi] entered before the last line
	var open []*blockedCall // entered, not completed
	unfinished := func(pos uint64, tid int) error {
		if us == nil {
			return nil
		}
		for bi < len(blocked) && blocked[bi].entry < pos {
			open = append(open, &blocked[bi])
			bi++
		}
		keep := open[:0]
		for _, b := range open {
			if b.pos <= pos && !(b.pos == pos && b.tid != tid) {
				continue
			}
			keep = append(keep, b)
			if b.printed || b.tid == tid {
				continue
			}
			pid, ok := pids[b.tid]
			if !ok {
				pid = b.tid
			}
			if opts.Pid != 0 && pid != opts.Pid {
				continue
			}
			b.printed = true
			ucall.Pos, ucall.Entry, ucall.Pid, ucall.Tid, ucall.Nr, ucall.Raw, ucall.Ret = b.pos, b.entry, pid, b.tid, b.nr, b.args, b.ret
			ucall.NoReturn, ucall.Resumed = false, false
			du.decode(&ucall)
			if err := us.Unfinished(&ucall); err != nil {
				return err
			}
		}
		open = keep
		return nil
	}
	isPrinted := func(pos uint64, tid int) bool {
		for _, b := range open {
			if b.pos == pos && b.tid == tid {
				return b.printed
			}
		}
		return false
	}
	var call Call
	var sinkErr error
	var shared sharedMaps
	frames := map[int][]uint64{} // the signal frames of each thread's handlers
	var sigText []byte
	emitShared := func(w *SharedWrite) error {
		if sw, ok := sink.(SharedWriter); ok {
			return sw.SharedWrite(w)
		}
		return nil
	}
	r.OnEvent = func(ev *reader.Event) {
		if sinkErr != nil {
			return
		}
		if !argsSet {
			// The first thread's registers at the start of the
			// recording: its stack pointer points at argc.
			if tids, cpus := r.Threads(); len(cpus) == 1 && cpus[0].R[x86.RSP] != 0 {
				mem.use(mem.pidOf(tids[0]))
				mem.sp.argv = initialArgs{sp: cpus[0].R[x86.RSP], args: t.Header.Args}
				argsSet = true
				if start != nil && start.Path != "" && (opts.Pid == 0 || start.Pid == opts.Pid) {
					d.firstExec(&call, t, start, mem, cpus[0].R[x86.RSP])
					st.Calls++
					if sinkErr = sink.Call(&call); sinkErr != nil {
						return
					}
				}
			}
		}
		if sinkErr = lifeUpTo(ev.Position); sinkErr != nil {
			return
		}
		switch ev.Kind {
		case reader.EventThreadSwitch:
			if running != 0 {
				stopped[running] = ev.Position
			}
			running = ev.Tid
			resumed[ev.Tid] = ev.Position
		case reader.EventThreadStart:
			s := ev.Record.ThreadStart
			if p := mem.pidOf(s.Tid); mem.tree && p != 0 {
				// The re-simulation knows the thread's process (a
				// fork's child is not its parent's thread).
				pids[s.Tid] = p
			} else if p, ok := pids[s.ParentTid]; ok && s.ParentTid != 0 {
				pids[s.Tid] = p
			} else {
				pids[s.Tid] = s.Tid
			}
		case reader.EventProcess:
			mem.process(ev.Process)
		case reader.EventModule:
			mem.use(mem.recordsPid())
			mem.module(ev.Module)
		case reader.EventMmap:
			mm := &ev.Record.Mmap
			mem.use(mem.recordsPid())
			if string(mm.Path) == "[vdso]" {
				vdsos[mem.recordsPid()] = [2]uint64{mm.Addr, mm.Addr + mm.Len}
			}
			sp := mem.sp
			switch {
			case mm.FileLen > 0:
				mem.mmap(mm)
			case mem.loaded(mm):
			case len(mm.Path) == 0 || string(mm.Path) == "[heap]":
				// Anonymous memory mapped during the recording: the
				// bytes the program never wrote are zeros.
				sp.zeros = cut(sp.zeros, mm.Addr, mm.Len)
				sp.zeros = append(sp.zeros, fileMapping{addr: mm.Addr, len: mm.Len})
				sort.Slice(sp.zeros, func(i, j int) bool { return sp.zeros[i].addr < sp.zeros[j].addr })
			}
		case reader.EventMunmap:
			mem.use(mem.recordsPid())
			sp := mem.sp
			sp.moved.unmapped(ev.Position, ev.Record.Munmap.Addr, ev.Record.Munmap.Len)
			mem.unmap(ev.Record.Munmap.Addr, ev.Record.Munmap.Len, false)
			sp.zeros = cut(sp.zeros, ev.Record.Munmap.Addr, ev.Record.Munmap.Len)
		case reader.EventSyscall:
			s := &ev.Record.Syscall
			pid, ok := pids[s.Tid]
			if !ok {
				pid = s.Tid
			}
			mem.use(mem.pidOf(s.Tid))
			exec := mem.execed(s.Tid, s.Nr)
			if s.Nr == linux.SysMsync || s.Nr == linux.SysMunmap || s.Nr == linux.SysMmap || s.Nr == linux.SysMremap {
				// Before the re-simulation forgets what the call unmapped.
				c := Call{Pos: ev.Position, Pid: pid, Tid: s.Tid, Nr: s.Nr, Raw: s.Args, Ret: s.Result}
				if err := shared.syscall(&c, mem, func(w *SharedWrite) error {
					if opts.Pid != 0 && w.Pid != opts.Pid {
						return nil
					}
					return emitShared(w)
				}); err != nil {
					sinkErr = err
					return
				}
			}
			if s.Nr == linux.SysMremap || s.Nr == linux.SysExecve || s.Nr == linux.SysExecveat {
				mem.sp.moved.syscall(mem.known, ev.Position, s.Nr, s.Args, s.Result)
			}
			if opts.Pid != 0 && pid != opts.Pid {
				return
			}
			call.Pos, call.Pid, call.Tid, call.Nr, call.Raw, call.Ret = ev.Position, pid, s.Tid, s.Nr, s.Args, s.Result
			call.NoReturn = false
			call.VDSO = false
			if v, ok := vdsos[mem.pidOf(s.Tid)]; ok {
				if pc, ok := pcOf(r, s.Tid); ok && pc >= v[0] && pc < v[1] {
					call.VDSO = true
				}
			}
			d.frame = 0
			if s.Nr == linux.SysRtSigreturn {
				if f := frames[s.Tid]; len(f) > 0 {
					d.frame = f[len(f)-1]
					frames[s.Tid] = f[:len(f)-1]
				}
			}
			call.Entry = ev.Position
			if st, ok := stopped[s.Tid]; ok && resumed[s.Tid] == ev.Position && st < ev.Position {
				call.Entry = st
			}
			call.Resumed = call.Entry < call.Pos && isPrinted(ev.Position, s.Tid)
			if sinkErr = unfinished(ev.Position, s.Tid); sinkErr != nil {
				return
			}
			mem.callPos = ev.Position
			d.decode(&call)
			if exec != nil {
				var x *execEntry
				if mem.entries.pos == ev.Position {
					x = &mem.entries.exec
				}
				d.execArgs(&call, exec, x)
			}
			for _, b := range call.Buffers {
				if b.Missing > 0 {
					st.Missing++
					break
				}
			}
			if opts.Cut && opts.StrSize >= 0 {
				for i := range call.Buffers {
					if b := &call.Buffers[i]; len(b.Data) > opts.StrSize {
						b.Data = b.Data[:opts.StrSize]
					}
				}
			}
			st.Calls++
			if sinkErr = sink.Call(&call); sinkErr == nil {
				// The ends at this position (an exit_group's).
				sinkErr = lifeUpTo(ev.Position + 1)
			}
		case reader.EventSignal:
			rec := &ev.Record.Signal
			if rec.FrameAddr != 0 {
				frames[rec.Tid] = append(frames[rec.Tid], rec.FrameAddr)
			}
			ss, ok := sink.(SignalSink)
			pid, known := pids[rec.Tid]
			if !known {
				pid = rec.Tid
			}
			if !ok || opts.Pid != 0 && pid != opts.Pid {
				return
			}
			mem.use(mem.pidOf(rec.Tid))
			if sinkErr = unfinished(ev.Position, rec.Tid); sinkErr != nil {
				return
			}
			sig := Signal{Pos: ev.Position, Pid: pid, Tid: rec.Tid, Rec: rec}
			sig.Text = appendSiginfo(sigText[:0], rec, mem)
			sigText = sig.Text
			sinkErr = ss.Signal(&sig)
		case reader.EventThreadExit:
			rec := ev.Record.ThreadExit
			pid, known := pids[rec.Tid]
			if !known {
				pid = rec.Tid
			}
			if ts, ok := sink.(ThreadSink); ok && (opts.Pid == 0 || pid == opts.Pid) {
				if sinkErr = unfinished(ev.Position, rec.Tid); sinkErr != nil {
					return
				}
				sinkErr = ts.ThreadExit(ev.Position, pid, rec.Tid, rec.Status)
			}
		case reader.EventExit:
			mem.use(mem.pidOf(ev.Tid))
			sinkErr = shared.exit(ev.Position, ev.Tid, mem, emitShared)
		}
	}
	// Stop before each call that overwrites its input to copy it.
	for i := range entries {
		e := &entries[i]
		if e.pos == 0 || r.Position() >= e.pos {
			continue
		}
		if err = r.RunTo(e.pos - 1); err != nil || sinkErr != nil {
			break
		}
		mem.capture(e)
	}
	if err == nil && sinkErr == nil {
		err = r.RunTo(^uint64(0))
	}
	if sinkErr != nil {
		return st, sinkErr
	}
	if err := lifeUpTo(^uint64(0)); err != nil {
		return st, err
	}
	switch {
	case errors.Is(err, reader.ErrEnd):
		return st, sink.End(r.Exit())
	case err != nil:
		return st, err
	}
	return st, sink.End(nil)
}

// fileMapping is a file mapped into the recorded program.
type fileMapping struct {
	addr, len uint64 // [addr, addr+len) backed by the file
	off       uint64
	path      string
	// module is set for an ELF segment (from a Module record): the
	// loader's MAP_FIXED mappings of the segments unmap the reservation
	// first, so munmap leaves module segments alone.
	module bool
}

// replayMemory is guest memory at a syscall: what the re-simulation
// knows (Replay.Known), and for the rest, the files mapped there.
type replayMemory struct {
	r    *reader.Replay
	cwd  string
	have []bool
	// entries is the input captured before the call at its pos
	// (entry.go); callPos the position of the call being decoded.
	entries entryMem
	callPos uint64
	files   map[string]*os.File
	// tree is set for a process-tree trace: each process has its
	// memory (spaces.go); sp is the one calls are decoded in now, pid
	// its process.
	tree   bool
	spaces map[int]*space
	sp     *space
	pid    int
	first  int // the first process
	// noZeros: the trace's Mmap records do not say which pages are
	// new (Stats.WholeRegions), so no unknown byte is taken for zero.
	noZeros bool
	// modules are the build IDs of the executables and libraries the
	// Module records named (each is named once, in the first process
	// that maps it).
	modules map[string][]byte
}

func newReplayMemory(r *reader.Replay, cwd string) *replayMemory {
	m := &replayMemory{r: r, cwd: cwd, files: map[string]*os.File{}, spaces: map[int]*space{}}
	m.use(0)
	return m
}

func (m *replayMemory) close() {
	for _, f := range m.files {
		if f != nil {
			f.Close()
		}
	}
}

// Read implements Memory.
func (m *replayMemory) Read(addr uint64, b []byte) int {
	if cap(m.have) < len(b) {
		m.have = make([]bool, len(b))
	}
	have := m.have[:len(b)]
	clear(have)
	m.known(addr, b, have)
	miss := 0
	for _, h := range have {
		if !h {
			miss++
		}
	}
	if miss == 0 {
		return 0
	}
	return m.fromFiles(addr, b, have)
}

// fromFiles fills the bytes of b not in have from the mapped files and
// returns how many stay unknown.
func (m *replayMemory) fromFiles(addr uint64, b []byte, have []bool) int {
	end := addr + uint64(len(b))
	maps := m.sp.maps
	i := sort.Search(len(maps), func(i int) bool { return maps[i].addr+maps[i].len > addr })
	for ; i < len(maps) && maps[i].addr < end; i++ {
		fm := &maps[i]
		f := m.file(fm.path)
		if f == nil {
			continue
		}
		lo, hi := max(addr, fm.addr), min(end, fm.addr+fm.len)
		for a := lo; a < hi; {
			k := int(a - addr)
			if have[k] {
				a++
				continue
			}
			// A run of unknown bytes.
			e := a
			for e < hi && !have[e-addr] {
				e++
			}
			n, _ := f.ReadAt(b[k:k+int(e-a)], int64(fm.off+(a-fm.addr)))
			for j := 0; j < n; j++ {
				have[k+j] = true
			}
			a = e
		}
	}
	m.sp.argv.fill(m, addr, b, have)
	miss := 0
	for k, h := range have {
		if !h && !m.noZeros && m.zero(addr+uint64(k)) {
			b[k], have[k] = 0, true
		}
		if !have[k] {
			miss++
		}
	}
	return miss
}

// known fills the bytes of b the program's own execution determined:
// what the re-simulation knows, not the files' or the zeros' guesses.
func (m *replayMemory) known(addr uint64, b []byte, have []bool) {
	if m.tree {
		m.r.KnownOf(m.pid, addr, b, have)
	} else {
		m.r.Known(addr, b, have)
	}
	m.sp.moved.fill(addr, b, have)
}

func (m *replayMemory) zero(a uint64) bool {
	zeros := m.sp.zeros
	i := sort.Search(len(zeros), func(i int) bool { return zeros[i].addr+zeros[i].len > a })
	return i < len(zeros) && zeros[i].addr <= a
}

// cut removes [addr, addr+n) from sorted disjoint ranges.
func cut(rs []fileMapping, addr, n uint64) []fileMapping {
	end := addr + n
	var out []fileMapping
	for _, r := range rs {
		re := r.addr + r.len
		if re <= addr || r.addr >= end {
			out = append(out, r)
			continue
		}
		if r.addr < addr {
			out = append(out, fileMapping{addr: r.addr, len: addr - r.addr})
		}
		if re > end {
			out = append(out, fileMapping{addr: end, len: re - end})
		}
	}
	return out
}

func (m *replayMemory) file(path string) *os.File {
	f, ok := m.files[path]
	if !ok {
		f, _ = os.Open(path)
		m.files[path] = f
	}
	return f
}

func (m *replayMemory) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(m.cwd, p)
	}
	return p
}

func (m *replayMemory) mmap(mm *tracefile.Mmap) {
	m.unmap(mm.Addr, mm.Len, false)
	m.add(fileMapping{addr: mm.Addr, len: min(mm.FileLen, mm.Len), off: mm.Offset, path: m.abs(string(mm.Path))})
}

// module maps the loadable segments of an executable or a library from
// its file, when the file on disk is the one recorded (same build ID).
func (m *replayMemory) module(mod *tracefile.Module) {
	p := m.abs(string(mod.Path))
	if m.modules == nil {
		m.modules = map[string][]byte{}
	}
	if _, ok := m.modules[p]; !ok {
		m.modules[p] = slices.Clone(mod.BuildID)
	}
	f := m.file(p)
	if f == nil {
		return
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return
	}
	if len(mod.BuildID) > 0 && !bytes.Equal(buildID(ef), mod.BuildID) {
		return
	}
	lo := ^uint64(0)
	for _, ph := range ef.Progs {
		if ph.Type == elf.PT_LOAD {
			lo = min(lo, ph.Vaddr&^0xfff)
		}
	}
	for _, ph := range ef.Progs {
		if ph.Type == elf.PT_LOAD && ph.Filesz > 0 {
			addr := mod.LoadAddr - lo + ph.Vaddr
			m.unmap(addr, ph.Filesz, true)
			m.add(fileMapping{addr: addr, len: ph.Filesz, off: ph.Off, path: p, module: true})
		}
	}
}

func buildID(ef *elf.File) []byte {
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		d, err := s.Data()
		if err != nil {
			continue
		}
		for len(d) >= 12 {
			nsz, dsz, typ := binary.LittleEndian.Uint32(d), binary.LittleEndian.Uint32(d[4:]), binary.LittleEndian.Uint32(d[8:])
			n0 := 12 + (int(nsz)+3)&^3
			n1 := n0 + (int(dsz)+3)&^3
			if n1 > len(d) || n0 > len(d) || 12+int(nsz) > len(d) || n0+int(dsz) > len(d) {
				break
			}
			if typ == 3 && string(d[12:12+nsz]) == "GNU\x00" {
				return d[n0 : n0+int(dsz)]
			}
			d = d[n1:]
		}
	}
	return nil
}

func (m *replayMemory) add(fm fileMapping) {
	if fm.len == 0 {
		return
	}
	sp := m.sp
	i := sort.Search(len(sp.maps), func(i int) bool { return sp.maps[i].addr >= fm.addr })
	sp.maps = append(sp.maps, fileMapping{})
	copy(sp.maps[i+1:], sp.maps[i:])
	sp.maps[i] = fm
}

// unmap cuts [addr, addr+n) out of the file mappings (out of the
// modules' segments too when modules is set).
func (m *replayMemory) unmap(addr, n uint64, modules bool) {
	end := addr + n
	out := m.sp.maps[:0:0]
	for _, fm := range m.sp.maps {
		fe := fm.addr + fm.len
		if fe <= addr || fm.addr >= end || fm.module && !modules {
			out = append(out, fm)
			continue
		}
		if fm.addr < addr {
			out = append(out, fileMapping{addr: fm.addr, len: addr - fm.addr, off: fm.off, path: fm.path, module: fm.module})
		}
		if fe > end {
			out = append(out, fileMapping{addr: end, len: fe - end, off: fm.off + (end - fm.addr), path: fm.path, module: fm.module})
		}
	}
	m.sp.maps = out
}

// errorf names the package in errors.
func errorf(format string, args ...any) error { return fmt.Errorf("syscalls: "+format, args...) }

// initialArgs are the program's arguments as the loader left them at the
// top of the initial stack, before the recording began: the trace's
// header has their text, and argv's pointers (read by the program) give
// their places. A program that passes argv[1] to open without reading
// it needs them.
type initialArgs struct {
	sp   uint64 // the initial stack pointer: argc, then argv's pointers
	args []string
	ptrs []uint64 // argv[i], 0 while unknown
}

func (a *initialArgs) fill(m *replayMemory, addr uint64, b []byte, have []bool) {
	if a.sp == 0 || len(a.args) == 0 {
		return
	}
	if a.ptrs == nil {
		// argc must agree with the header, else the guess is off.
		var w [8]byte
		var h [8]bool
		m.known(a.sp, w[:], h[:])
		if h != [8]bool{true, true, true, true, true, true, true, true} || int(le64(w[:], 0)) != len(a.args) {
			a.sp = 0
			return
		}
		a.ptrs = make([]uint64, len(a.args))
	}
	for i, s := range a.args {
		p := a.ptrs[i]
		if p == 0 {
			var w [8]byte
			var h [8]bool
			m.known(a.sp+8+8*uint64(i), w[:], h[:])
			if h != [8]bool{true, true, true, true, true, true, true, true} {
				continue
			}
			p = le64(w[:], 0)
			a.ptrs[i] = p
		}
		end := p + uint64(len(s)) + 1
		if addr >= end || addr+uint64(len(b)) <= p {
			continue
		}
		for k := range b {
			x := addr + uint64(k)
			if have[k] || x < p || x >= end {
				continue
			}
			if x == end-1 {
				b[k] = 0
			} else {
				b[k] = s[x-p]
			}
			have[k] = true
		}
	}
}

// pcOf is the re-simulated program counter of thread tid.
func pcOf(r *reader.Replay, tid int) (uint64, bool) {
	if t, c := r.Current(); t == tid && c != nil {
		return c.RIP, true
	}
	tids, cpus := r.Threads()
	for i, t := range tids {
		if t == tid {
			return cpus[i].RIP, true
		}
	}
	return 0, false
}
