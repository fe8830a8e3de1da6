package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"ttd/internal/progress"
	"ttd/reader"
	"ttd/ttd"
	"ttd/x86"
)

const queryUsage = "(--calls SYM | --memory ADDR:LEN [--access r|w|rw]) [--json|--format parquet -o FILE] TRACE, or [--at POS] [--json] [--origin ADDR[:SIZE]] [--find-prev-write|--find-next-write|--find-prev-read|--find-next-read ADDR[:SIZE]] [--mem ADDR:LEN] [--regs] [--where] [--pid PID] TRACE"

// queryCmd implements "ttd query": travel to a position of a trace, or
// search from it, and print what is there.
func queryCmd(name string, args []string) int {
	if runner, rest := takeRunner(args); runner != "" && runner != "local" {
		return runFleet(name, "query", runner, rest) // fleet.go: many traces on Beam
	}
	if isTableQuery(args) {
		return queryTablesCmd(name, args) // query_tables.go
	}
	fs := newFlags(name, queryUsage)
	at := fs.String("at", "end", "the position: start, end, a number of instructions, or a percentage (50%)")
	asJSON := fs.Bool("json", false, "print the facts as JSON")
	var finds [4]string
	fs.StringVar(&finds[0], "find-prev-write", "", "the last write to ADDR[:SIZE] before the position")
	fs.StringVar(&finds[1], "find-next-write", "", "the first write to ADDR[:SIZE] at or after the position")
	fs.StringVar(&finds[2], "find-prev-read", "", "the last read of ADDR[:SIZE] before the position")
	fs.StringVar(&finds[3], "find-next-read", "", "the first read of ADDR[:SIZE] at or after the position")
	mem := fs.String("mem", "", "show LEN bytes at ADDR (unknown bytes as ??)")
	regs := fs.Bool("regs", false, "show the current thread's registers (with --pid, those of the process's main thread)")
	where := fs.Bool("where", false, "show a backtrace")
	pid := fs.Int("pid", 0, "the process of a recorded tree to look at (ttd info lists them; default: the first): memory, registers and searches are that process's, positions stay global")
	origin := fs.String("origin", "", "where the value of ADDR[:SIZE] (or a variable) at the position came from: the chain of stores, loads, moves and copies back to a constant, a computation, a syscall or memory never written")
	if err := fs.Parse(reorderFlags(args)); err != nil {
		return flagError(name, queryUsage, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, queryUsage, errors.New("want exactly one trace"))
	}
	var find, findArg string
	for i, f := range finds {
		if f == "" {
			continue
		}
		if find != "" {
			return flagError(name, queryUsage, errors.New("at most one --find-* query at a time"))
		}
		find, findArg = [...]string{"find-prev-write", "find-next-write", "find-prev-read", "find-next-read"}[i], f
	}
	path := fs.Arg(0)
	s, err := ttd.OpenWith(path, ttd.Options{Progress: indexProgress(path), Pid: *pid, LazyIndex: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	defer s.Close()
	pos, err := parsePosition(*at, s.End())
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd query: --at: %v\n", err)
		return 2
	}
	if err := s.CheckInWindow(pos); err != nil {
		fmt.Fprintf(os.Stderr, "ttd query: --at: %v\n", err)
		return 2
	}
	// The symbols (DWARF of every module: about 0.5 s for a C program
	// and its libc) load while a search of a numeric address runs; the
	// session's search and its symbols share only the trace, which is
	// safe for concurrent use.
	q := &queryOut{s: s, json: *asJSON, w: os.Stdout, At: pos}
	loaded := make(chan struct{})
	var syms ttd.Symbolizer
	var symErr error
	go func() {
		defer close(loaded)
		syms, symErr = s.Symbols()
	}()
	waited := false
	q.wait = func() {
		if waited {
			return
		}
		<-loaded
		waited, q.syms = true, syms
		if symErr != nil && !*asJSON {
			fmt.Fprintf(os.Stderr, "ttd: some symbols are missing: %v\n", firstLine(symErr))
		}
	}
	defer q.wait() // the session must not close under the loader
	status := 0
	if *origin != "" {
		if find != "" {
			return flagError(name, queryUsage, errors.New("--origin and --find-* do not go together"))
		}
		if err := q.origin(*origin, pos); err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: --origin: %v\n", err)
			return 1
		}
	}
	if find != "" {
		found, err := q.find(find, findArg, pos)
		switch {
		case errors.Is(err, ttd.ErrNotFound):
			status = 1
		case err != nil:
			fmt.Fprintf(os.Stderr, "ttd query: %v\n", err)
			return 1
		default:
			pos = found.Position
		}
	}
	q.Position = pos
	q.wait()
	if _, err := s.Seek(pos); err != nil {
		fmt.Fprintf(os.Stderr, "ttd query: %v\n", err)
		return 1
	}
	if s.Trace().Tree() {
		// Code addresses name the focus's program there (a tree's
		// programs overlap).
		q.syms, _ = s.ProcessSymbols(s.Focus())
	}
	if err := q.here(); err != nil {
		fmt.Fprintf(os.Stderr, "ttd query: %v\n", err)
		return 1
	}
	if *mem != "" {
		if err := q.memory(*mem); err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: --mem: %v\n", err)
			return 2
		}
	}
	if *regs {
		if err := q.registers(*pid); err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: %v\n", err)
			return 1
		}
	}
	if *where {
		if err := q.backtrace(); err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: %v\n", err)
			return 1
		}
	}
	if q.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(q)
	}
	return status
}

// reorderFlags moves the trace argument after the flags, so that
// "ttd query t.ttd --regs" works as "ttd query --regs t.ttd".
func reorderFlags(args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && name != "json" && name != "regs" && name != "where" && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		default:
			rest = append(rest, a)
		}
	}
	return append(flags, rest...)
}

// parsePosition reads start, end, a number or a percentage of end.
func parsePosition(s string, end uint64) (uint64, error) {
	switch s {
	case "start", "begin":
		return 0, nil
	case "end":
		return end, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f < 0 || f > 100 {
			return 0, fmt.Errorf("bad percentage %q", s)
		}
		return uint64(f / 100 * float64(end)), nil
	}
	n, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("bad position %q (want start, end, a number or a percentage)", s)
	}
	if n > end {
		return 0, fmt.Errorf("position %d is past the end of the trace (%d)", n, end)
	}
	return n, nil
}

// queryOut gathers the facts a query prints; as JSON it is the output.
type queryOut struct {
	s    *ttd.Session
	syms ttd.Symbolizer
	// wait waits for the symbols and sets syms.
	wait func()
	json bool
	w    io.Writer

	// Position is where the facts below hold: the found access's
	// position, or --at.
	Position uint64     `json:"position"`
	At       uint64     `json:"at"`
	Query    string     `json:"query,omitempty"`
	Found    *foundJSON `json:"found,omitempty"`
	NotFound bool       `json:"not_found,omitempty"`
	// BeforeWindow, for a search that found nothing in a ring-buffer
	// window, is the window's first position.
	BeforeWindow uint64         `json:"before_window,omitempty"`
	Thread       int            `json:"thread"`
	PC           string         `json:"pc,omitempty"`
	Function     string         `json:"function,omitempty"`
	File         string         `json:"file,omitempty"`
	Line         int            `json:"line,omitempty"`
	Insn         string         `json:"instruction,omitempty"`
	Memory       *memJSON       `json:"memory,omitempty"`
	Registers    *regsJSON      `json:"registers,omitempty"`
	Backtrace    *backtraceJSON `json:"backtrace,omitempty"`
	Origin       []originJSON   `json:"origin,omitempty"`
	End          bool           `json:"at_end,omitempty"`
}

type foundJSON struct {
	Position    uint64  `json:"position"`
	Kind        string  `json:"kind"` // "write" or "read"
	Source      string  `json:"source"`
	Thread      int     `json:"thread"`
	PC          string  `json:"pc,omitempty"`
	Function    string  `json:"function,omitempty"`
	File        string  `json:"file,omitempty"`
	Line        int     `json:"line,omitempty"`
	Instruction string  `json:"instruction,omitempty"`
	Addr        string  `json:"addr"`
	Size        uint64  `json:"size"`
	Before      string  `json:"before"`
	After       string  `json:"after"`
	BeforeValue *uint64 `json:"before_value,omitempty"`
	AfterValue  *uint64 `json:"after_value,omitempty"`
}

type memJSON struct {
	Addr  string `json:"addr"`
	Len   int    `json:"len"`
	Bytes string `json:"bytes"` // hex pairs, ?? for unknown
	Known int    `json:"known"`
}

type regsJSON struct {
	Thread int               `json:"thread"`
	Regs   map[string]string `json:"regs"`
	Flags  string            `json:"flags"`
	XMM    []string          `json:"xmm"`
	MXCSR  string            `json:"mxcsr"`
	ST     []string          `json:"st"`
	FCW    string            `json:"fcw"`
	FSW    string            `json:"fsw"`
}

type backtraceJSON struct {
	Method string      `json:"method"`
	Frames []frameJSON `json:"frames"`
}

type frameJSON struct {
	PC       string `json:"pc"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	CFA      string `json:"cfa,omitempty"`
	Inlined  bool   `json:"inlined,omitempty"`
}

func (q *queryOut) printf(format string, args ...any) {
	if !q.json {
		fmt.Fprintf(q.w, format, args...)
	}
}

// parseRange reads ADDR[:SIZE] (SIZE defaults to def).
func (q *queryOut) parseRange(arg string, def uint64) (uint64, uint64, error) {
	a, sz, hasSize := strings.Cut(arg, ":")
	addr, err := ttd.ResolveAddr(q.syms, a)
	if err != nil {
		return 0, 0, err
	}
	size := def
	if hasSize {
		size, err = strconv.ParseUint(sz, 0, 64)
		if err != nil || size == 0 {
			return 0, 0, fmt.Errorf("bad size %q", sz)
		}
	} else if _, n, ok := q.syms.LookupSymbol(a); ok && n > 0 && n <= 64 {
		size = n // a variable's own size
	}
	return addr, size, nil
}

func (q *queryOut) find(kind, arg string, from uint64) (*ttd.Found, error) {
	q.Query = kind
	a, sz, _ := strings.Cut(arg, ":")
	if _, err := strconv.ParseUint(a, 0, 64); err != nil || sz == "" {
		q.wait() // a name, or a variable's own size
	}
	var addr, size uint64
	var err error
	if q.syms == nil {
		// A numeric ADDR:SIZE needs no symbols.
		addr, _ = strconv.ParseUint(a, 0, 64)
		size, err = strconv.ParseUint(sz, 0, 64)
		if err != nil || size == 0 {
			return nil, fmt.Errorf("bad size %q", sz)
		}
	} else if addr, size, err = q.parseRange(arg, 8); err != nil {
		return nil, err
	}
	dir, ak := ttd.Backward, ttd.AccessWrite
	if strings.Contains(kind, "next") {
		dir = ttd.Forward
	}
	if strings.HasSuffix(kind, "read") {
		ak = ttd.AccessRead
	}
	f, err := q.s.Find(dir, ak, addr, size, from)
	q.wait()
	what := "write to"
	if ak == ttd.AccessRead {
		what = "read of"
	}
	rel := "before"
	if dir == ttd.Forward {
		rel = "at or after"
	}
	if errors.Is(err, ttd.ErrNotFound) {
		q.NotFound = true
		q.printf("no %s %s (%d bytes) %s position %d\n", what, q.addrName(addr, arg), size, rel, from)
		var bw *ttd.BeforeWindowError
		if errors.As(err, &bw) {
			q.BeforeWindow = bw.Start
			q.printf("  the trace is a ring-buffer window from position %d: earlier accesses were not kept\n", bw.Start)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	fj := &foundJSON{Position: f.Position, Kind: "write", Source: f.Source.String(), Thread: f.Tid,
		Addr: fmt.Sprintf("%#x", addr), Size: size, Instruction: f.Disasm}
	if !f.Write {
		fj.Kind = "read"
	}
	if f.PC != 0 {
		fj.PC = fmt.Sprintf("%#x", f.PC)
		fj.Function, fj.File, fj.Line = q.where(f.PC)
	}
	if f.Source == reader.AccessExec {
		// The new program's bytes are not known at its exec.
		clear(f.After.Known)
	}
	fj.Before, fj.After = hexBytes(f.Before), hexBytes(f.After)
	if size <= 8 {
		if v, ok := f.Before.Uint(int(size)); ok {
			fj.BeforeValue = &v
		}
		if v, ok := f.After.Uint(int(size)); ok {
			fj.AfterValue = &v
		}
	}
	q.Found = fj
	q.printf("%s %s (%d bytes) at position %d, thread %d\n", what, q.addrName(addr, arg), size, f.Position, f.Tid)
	switch f.Source {
	case reader.AccessSyscall:
		q.printf("  by      the syscall at %s\n", q.pcText(f.PC))
	case reader.AccessSignal:
		q.printf("  by      a signal delivery (the signal frame)\n")
	case reader.AccessExec:
		q.printf("  by      the exec that replaced the process's address space (what came before was another program's memory)\n")
		return f, nil
	default:
		q.printf("  pc      %s\n", q.pcText(f.PC))
	}
	if f.Disasm != "" {
		q.printf("  insn    %s\n", f.Disasm)
	}
	if f.Write {
		q.printf("  value   %s → %s%s\n", fj.Before, fj.After, valueNote(fj.BeforeValue, fj.AfterValue))
	} else {
		q.printf("  read    %s%s\n", fj.After, valueNote(nil, fj.AfterValue))
	}
	return f, nil
}

func valueNote(before, after *uint64) string {
	switch {
	case before != nil && after != nil:
		return fmt.Sprintf("  (%d → %d)", *before, *after)
	case after != nil:
		return fmt.Sprintf("  (%d)", *after)
	}
	return ""
}

// addrName shows an address, with the symbol it was given as.
func (q *queryOut) addrName(addr uint64, arg string) string {
	a, _, _ := strings.Cut(arg, ":")
	if a == "" || strings.HasPrefix(a, "0x") || strings.HasPrefix(a, "0X") {
		return fmt.Sprintf("%#x", addr)
	}
	return fmt.Sprintf("%#x (%s)", addr, a)
}

// where names the function, file and line of pc.
func (q *queryOut) where(pc uint64) (fn, file string, line int) {
	if name, entry, ok := q.syms.PCToFunc(pc); ok {
		fn = name
		if pc != entry {
			fn += fmt.Sprintf("+%#x", pc-entry)
		}
	}
	file, line, _ = q.syms.PCToLine(pc)
	return
}

func (q *queryOut) pcText(pc uint64) string { return ttd.Describe(q.syms, pc) }

// here describes the position: thread, pc, instruction.
func (q *queryOut) here() error {
	if q.Position >= q.s.End() {
		q.End = true
		q.printf("position %d: the end of the trace", q.Position)
		if e := q.s.Exit(); e != nil {
			q.printf(" (the program %s)", describeExit(e.Kind.String(), e.Code, e.Signo, e.FaultAddr))
		}
		q.printf("\n")
	}
	pc, _, text, err := q.s.InstructionAt()
	if err != nil {
		return nil // no thread runs here (the very end): nothing more to say
	}
	tid, err := q.s.CurrentThread()
	if err != nil {
		return err
	}
	q.Thread, q.PC, q.Insn = tid, fmt.Sprintf("%#x", pc), text
	q.Function, q.File, q.Line = q.where(pc)
	if q.Found == nil && !q.End {
		q.printf("position %d, thread %d\n", q.Position, tid)
	}
	if q.Found == nil {
		q.printf("  pc      %s\n  insn    %s\n", q.pcText(pc), text)
	}
	return nil
}

func hexBytes(m ttd.Memory) string {
	var b strings.Builder
	for i, d := range m.Data {
		if i > 0 {
			b.WriteByte(' ')
		}
		if m.Known[i] {
			fmt.Fprintf(&b, "%02x", d)
		} else {
			b.WriteString("??")
		}
	}
	return b.String()
}

func (q *queryOut) memory(arg string) error {
	a, l, ok := strings.Cut(arg, ":")
	if !ok {
		return errors.New("want ADDR:LEN")
	}
	addr, err := ttd.ResolveAddr(q.syms, a)
	if err != nil {
		return err
	}
	n, err := strconv.ParseUint(l, 0, 32)
	if err != nil || n == 0 || n > ttd.MaxRead {
		return fmt.Errorf("bad length %q", l)
	}
	m, err := q.s.ReadMemory(addr, int(n))
	if err != nil {
		return err
	}
	known := 0
	for _, k := range m.Known {
		if k {
			known++
		}
	}
	q.Memory = &memJSON{Addr: fmt.Sprintf("%#x", addr), Len: int(n), Bytes: hexBytes(m), Known: known}
	q.printf("memory at %#x, %d bytes (%d known):\n", addr, n, known)
	for off := 0; off < len(m.Data); off += 16 {
		end := min(off+16, len(m.Data))
		row := ttd.Memory{Data: m.Data[off:end], Known: m.Known[off:end]}
		var text strings.Builder
		for i, d := range row.Data {
			switch {
			case !row.Known[i]:
				text.WriteByte(' ')
			case d >= 0x20 && d < 0x7f:
				text.WriteByte(d)
			default:
				text.WriteByte('.')
			}
		}
		q.printf("  %#014x  %-47s  |%s|\n", addr+uint64(off), hexBytes(row), text.String())
	}
	return nil
}

// registers shows the current thread's registers, or with --pid those
// of the process's main thread (whose id is the pid).
func (q *queryOut) registers(pid int) error {
	r, err := q.s.Registers(pid)
	if errors.Is(err, ttd.ErrNoThread) && pid != 0 {
		return fmt.Errorf("--regs: process %d has no main thread at position %d (not started yet, or ended)", pid, q.Position)
	}
	if err != nil {
		return err
	}
	rj := &regsJSON{Thread: r.Tid, Regs: map[string]string{}, Flags: ttd.FlagString(r.RFLAGS),
		MXCSR: fmt.Sprintf("%#x", r.MXCSR), FCW: fmt.Sprintf("%#x", r.FPU.CW), FSW: fmt.Sprintf("%#x", r.FSW())}
	for i, n := range x86.RegNames {
		rj.Regs[n] = fmt.Sprintf("%#x", r.GPR[i])
	}
	rj.Regs["rip"] = fmt.Sprintf("%#x", r.RIP)
	rj.Regs["rflags"] = fmt.Sprintf("%#x", r.RFLAGS)
	rj.Regs["fs_base"] = fmt.Sprintf("%#x", r.FSBase)
	rj.Regs["gs_base"] = fmt.Sprintf("%#x", r.GSBase)
	for _, x := range r.XMM {
		rj.XMM = append(rj.XMM, fmt.Sprintf("%016x%016x", x[1], x[0]))
	}
	for i := 0; i < 8; i++ {
		b, valid := r.ST(i)
		s := fmt.Sprintf("%x", reverse(b[:]))
		if !valid {
			s = "empty"
		}
		rj.ST = append(rj.ST, s)
	}
	q.Registers = rj
	q.printf("registers of thread %d:\n%s", r.Tid, indent(r.String(), "  "))
	for i := 0; i < 16; i += 2 {
		q.printf("  xmm%-2d %s   xmm%-2d %s\n", i, rj.XMM[i], i+1, rj.XMM[i+1])
	}
	q.printf("  mxcsr %s  fcw %s  fsw %s\n", rj.MXCSR, rj.FCW, rj.FSW)
	for i, s := range rj.ST {
		q.printf("  st%d %s\n", i, s)
	}
	return nil
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}

func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	return b.String()
}

func (q *queryOut) backtrace() error {
	frames, method, err := q.s.Backtrace(0, 64)
	if err != nil {
		return err
	}
	bj := &backtraceJSON{Method: method}
	q.printf("backtrace (%s):\n", method)
	for i, f := range frames {
		fj := frameJSON{PC: fmt.Sprintf("%#x", f.PC), Function: f.Function, File: f.File, Line: f.Line, Inlined: f.Inlined}
		if f.CFA != 0 {
			fj.CFA = fmt.Sprintf("%#x", f.CFA)
		}
		bj.Frames = append(bj.Frames, fj)
		line := fmt.Sprintf("  #%-2d %#x", i, f.PC)
		if f.Function != "" {
			line += " " + f.Function
		}
		if f.Inlined {
			line += " (inlined)"
		}
		if f.File != "" {
			line += fmt.Sprintf(" (%s:%d)", f.File, f.Line)
		}
		q.printf("%s\n", line)
	}
	if len(frames) > 0 && frames[len(frames)-1].Note != "" {
		q.printf("  (%s)\n", frames[len(frames)-1].Note)
	}
	q.Backtrace = bj
	return nil
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// indexProgress reports, on a terminal, the build of the access
// summaries of a trace that has none (recorded with --no-summaries or by
// an older ttd): it re-simulates the whole trace.
func indexProgress(path string) func(done, total int) {
	return progressLine("ttd: " + path + " has no access summaries; building them")
}

// summaryProgress reports, on a terminal, the build of the access
// summaries that ttd record does after the program ends.
func summaryProgress(path string) func(done, total int) {
	return progressLine("ttd: access summaries of " + path)
}

// progressLine returns a progress reporter that draws a bar on stderr
// when it is a terminal (nil otherwise), cleared when done reaches total.
func progressLine(what string) func(done, total int) {
	bar := progress.New(what, "segments", 1)
	if bar == nil {
		return nil
	}
	return func(done, total int) {
		bar.Set(done, total)
		if done >= total {
			bar.Done()
		}
	}
}
