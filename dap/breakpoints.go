package dap

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"ttd/ttd"

	"github.com/google/go-dap"
)

// A breakpoint stops a search in either direction. Source, function and
// instruction breakpoints are code addresses (ttd.Query.Exec); data
// breakpoints are watched ranges (ttd.Query.Watch). Conditions are evaluated
// and hit counts counted where a search stops, in the order the hits are
// found (so a hit count counts backward during reverseContinue).
type breakpoint struct {
	id      int
	kind    string // the stopped event's reason
	addrs   []uint64
	cond    string
	hitCond string
	hits    int
}

type dataBreakpoint struct {
	breakpoint
	watch ttd.Watch
}

type breakpoints struct {
	mu     sync.Mutex
	nextID int
	source map[string][]*breakpoint // by source path
	funcs  []*breakpoint
	insts  []*breakpoint
	data   []*dataBreakpoint
}

func (b *breakpoints) init() { b.source = make(map[string][]*breakpoint) }

func (b *breakpoints) newID() int {
	b.nextID++
	return b.nextID
}

// all returns every code breakpoint.
func (b *breakpoints) all() []*breakpoint {
	var out []*breakpoint
	for _, list := range b.source {
		out = append(out, list...)
	}
	out = append(out, b.funcs...)
	return append(out, b.insts...)
}

// query returns the addresses and ranges a search must stop at.
func (b *breakpoints) query() (map[uint64]bool, []ttd.Watch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	exec := make(map[uint64]bool)
	for _, bp := range b.all() {
		for _, a := range bp.addrs {
			exec[a] = true
		}
	}
	var ws []ttd.Watch
	for _, d := range b.data {
		ws = append(ws, d.watch)
	}
	return exec, ws
}

// at returns the kind and ids of the breakpoints at pc.
func (b *breakpoints) at(pc uint64) (string, []int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kind, ids := "", []int(nil)
	for _, bp := range b.all() {
		for _, a := range bp.addrs {
			if a == pc {
				if kind == "" {
					kind = bp.kind
				}
				ids = append(ids, bp.id)
				break
			}
		}
	}
	sort.Ints(ids)
	return kind, ids
}

func (b *breakpoints) watchIDs(i int) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i >= 0 && i < len(b.data) {
		return []int{b.data[i].id}
	}
	return nil
}

// shouldStop counts a hit of the breakpoints at st.PC and reports whether
// any of them stops: its condition holds and its hit condition is met.
func (b *breakpoints) shouldStop(s *Server, t Target, st ttd.SearchStop) bool {
	b.mu.Lock()
	var here []*breakpoint
	for _, bp := range b.all() {
		for _, a := range bp.addrs {
			if a == st.PC {
				here = append(here, bp)
				break
			}
		}
	}
	b.mu.Unlock()
	if len(here) == 0 {
		return true // an address the query had but the client removed since
	}
	stop := false
	for _, bp := range here {
		if bp.cond != "" {
			v, err := t.Eval(st.Tid, 0, bp.cond)
			if err != nil {
				// A condition that cannot be evaluated stops, as in delve,
				// and says why.
				s.output("stderr", fmt.Sprintf("ttd: breakpoint %d: condition %q: %v\n", bp.id, bp.cond, err))
				stop = true
				continue
			}
			if !truthy(v.Value) {
				continue
			}
		}
		bp.hits++
		if hitConditionMet(bp.hitCond, bp.hits) {
			stop = true
		}
	}
	return stop
}

// truthy reports whether a formatted value is true in C's sense.
func truthy(v string) bool {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, ' '); i > 0 {
		v = v[:i] // "65 'A'"
	}
	switch v {
	case "", "0", "false", "0x0", "nil", "NULL", "0.0":
		return false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f != 0
	}
	return true
}

// hitConditionMet evaluates a hit condition: "N" or "== N", ">= N", "> N",
// "< N", "<= N", "% N" (every Nth hit).
func hitConditionMet(cond string, hits int) bool {
	cond = strings.TrimSpace(cond)
	if cond == "" {
		return true
	}
	op := ""
	for _, p := range []string{">=", "<=", "==", ">", "<", "%"} {
		if strings.HasPrefix(cond, p) {
			op, cond = p, strings.TrimSpace(cond[len(p):])
			break
		}
	}
	n, err := strconv.Atoi(cond)
	if err != nil {
		return true
	}
	switch op {
	case ">=":
		return hits >= n
	case "<=":
		return hits <= n
	case ">":
		return hits > n
	case "<":
		return hits < n
	case "%":
		return n > 0 && hits%n == 0
	}
	return hits == n
}

// onSetBreakpointsRequest sets the source breakpoints of one file through
// the DWARF line tables.
func (s *Server) onSetBreakpointsRequest(r *dap.SetBreakpointsRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	path := r.Arguments.Source.Path
	if path == "" {
		path = r.Arguments.Source.Name
	}
	var list []*breakpoint
	var out []dap.Breakpoint
	s.bps.mu.Lock()
	for _, want := range r.Arguments.Breakpoints {
		bp := &breakpoint{id: s.bps.newID(), kind: "breakpoint", cond: want.Condition, hitCond: want.HitCondition}
		res := dap.Breakpoint{Id: bp.id, Source: &r.Arguments.Source, Line: want.Line}
		addrs, line, err := t.LineAddrs(path, want.Line)
		switch {
		case err != nil:
			res.Message = err.Error()
		case len(addrs) == 0:
			res.Message = fmt.Sprintf("no code at %s:%d", path, want.Line)
		default:
			bp.addrs, res.Verified, res.Line = addrs, true, line
			res.InstructionReference = fmt.Sprintf("%#x", addrs[0])
		}
		list = append(list, bp)
		out = append(out, res)
	}
	s.bps.source[path] = list
	s.bps.mu.Unlock()
	s.send(&dap.SetBreakpointsResponse{Response: *newResponse(&r.Request), Body: dap.SetBreakpointsResponseBody{Breakpoints: out}})
}

// onSetFunctionBreakpointsRequest sets breakpoints on functions by name,
// after their prologue.
func (s *Server) onSetFunctionBreakpointsRequest(r *dap.SetFunctionBreakpointsRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	var list []*breakpoint
	var out []dap.Breakpoint
	s.bps.mu.Lock()
	for _, want := range r.Arguments.Breakpoints {
		bp := &breakpoint{id: s.bps.newID(), kind: "function breakpoint", cond: want.Condition, hitCond: want.HitCondition}
		res := dap.Breakpoint{Id: bp.id}
		addr, err := t.FunctionAddr(want.Name)
		if err != nil {
			res.Message = fmt.Sprintf("%s: %v", want.Name, err)
		} else {
			bp.addrs, res.Verified = []uint64{addr}, true
			res.InstructionReference = fmt.Sprintf("%#x", addr)
			if l := t.Locate(addr); l.File != "" {
				res.Source, res.Line = &dap.Source{Name: baseName(l.File), Path: l.File}, l.Line
			}
		}
		list = append(list, bp)
		out = append(out, res)
	}
	s.bps.funcs = list
	s.bps.mu.Unlock()
	s.send(&dap.SetFunctionBreakpointsResponse{Response: *newResponse(&r.Request), Body: dap.SetFunctionBreakpointsResponseBody{Breakpoints: out}})
}

// onSetInstructionBreakpointsRequest sets breakpoints on instruction
// addresses (the disassembly view's breakpoints).
func (s *Server) onSetInstructionBreakpointsRequest(r *dap.SetInstructionBreakpointsRequest) {
	var list []*breakpoint
	var out []dap.Breakpoint
	s.bps.mu.Lock()
	for _, want := range r.Arguments.Breakpoints {
		bp := &breakpoint{id: s.bps.newID(), kind: "instruction breakpoint", cond: want.Condition, hitCond: want.HitCondition}
		res := dap.Breakpoint{Id: bp.id}
		addr, err := parseAddr(want.InstructionReference)
		if err != nil {
			res.Message = err.Error()
		} else {
			addr += uint64(int64(want.Offset))
			bp.addrs, res.Verified = []uint64{addr}, true
			res.InstructionReference = fmt.Sprintf("%#x", addr)
		}
		list = append(list, bp)
		out = append(out, res)
	}
	s.bps.insts = list
	s.bps.mu.Unlock()
	s.send(&dap.SetInstructionBreakpointsResponse{Response: *newResponse(&r.Request), Body: dap.SetInstructionBreakpointsResponseBody{Breakpoints: out}})
}

// onDataBreakpointInfoRequest says whether a variable (a child of
// variablesReference), an expression or an address ("0x601040", with an
// optional size: "0x601040 4") can be watched.
func (s *Server) onDataBreakpointInfoRequest(r *dap.DataBreakpointInfoRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	addr, size, desc, err := s.dataTarget(t, r.Arguments.VariablesReference, r.Arguments.Name, r.Arguments.FrameId)
	body := dap.DataBreakpointInfoResponseBody{}
	if err != nil {
		body.DataId = nil
		body.Description = err.Error()
	} else {
		body.DataId = fmt.Sprintf("%#x/%d", addr, size)
		body.Description = desc
		body.AccessTypes = []dap.DataBreakpointAccessType{"write", "read", "readWrite"}
	}
	s.send(&dap.DataBreakpointInfoResponse{Response: *newResponse(&r.Request), Body: body})
}

// dataTarget resolves a dataBreakpointInfo request to a memory range.
func (s *Server) dataTarget(t Target, ref int, name string, frameID int) (addr uint64, size int, desc string, err error) {
	if ref != 0 {
		vars, err := s.children(ref)
		if err != nil {
			return 0, 0, "", err
		}
		for _, v := range vars {
			if v.Name == name {
				if v.Addr == 0 || v.Size <= 0 {
					return 0, 0, "", fmt.Errorf("%s is not in memory (a register or optimized out)", name)
				}
				return v.Addr, v.Size, fmt.Sprintf("%s (%d bytes at %#x)", name, v.Size, v.Addr), nil
			}
		}
		return 0, 0, "", fmt.Errorf("no variable %q", name)
	}
	if a, n, ok := parseAddrSize(name); ok {
		return a, n, fmt.Sprintf("%d bytes at %#x", n, a), nil
	}
	tid, frame := s.frameOf(t, frameID)
	v, err := t.Eval(tid, frame, name)
	if err != nil {
		return 0, 0, "", err
	}
	if v.Addr == 0 || v.Size <= 0 {
		return 0, 0, "", fmt.Errorf("%s is not in memory", name)
	}
	return v.Addr, v.Size, fmt.Sprintf("%s (%d bytes at %#x)", name, v.Size, v.Addr), nil
}

// parseAddrSize parses "0xADDR", "0xADDR SIZE" or "0xADDR/SIZE" (a
// dataId); the size defaults to 8.
func parseAddrSize(s string) (uint64, int, bool) {
	s = strings.TrimSpace(s)
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '/' || r == ':' })
	if len(f) == 0 || len(f) > 2 {
		return 0, 0, false
	}
	a, err := parseAddr(f[0])
	if err != nil {
		return 0, 0, false
	}
	n := 8
	if len(f) == 2 {
		k, err := strconv.Atoi(f[1])
		if err != nil || k <= 0 || k > 1<<20 {
			return 0, 0, false
		}
		n = k
	}
	return a, n, true
}

// onSetDataBreakpointsRequest replaces the data breakpoints.
func (s *Server) onSetDataBreakpointsRequest(r *dap.SetDataBreakpointsRequest) {
	var list []*dataBreakpoint
	var out []dap.Breakpoint
	s.bps.mu.Lock()
	for _, want := range r.Arguments.Breakpoints {
		d := &dataBreakpoint{breakpoint: breakpoint{id: s.bps.newID(), kind: "data breakpoint", cond: want.Condition, hitCond: want.HitCondition}}
		res := dap.Breakpoint{Id: d.id}
		addr, size, ok := parseAddrSize(want.DataId)
		if !ok {
			res.Message = fmt.Sprintf("bad data breakpoint id %q", want.DataId)
			out = append(out, res)
			continue
		}
		d.watch = ttd.Watch{Addr: addr, Size: size}
		switch want.AccessType {
		case "read":
			d.watch.Read = true
		case "readWrite":
			d.watch.Read, d.watch.Write = true, true
		default:
			d.watch.Write = true
		}
		res.Verified = true
		list = append(list, d)
		out = append(out, res)
	}
	s.bps.data = list
	s.bps.mu.Unlock()
	s.send(&dap.SetDataBreakpointsResponse{Response: *newResponse(&r.Request), Body: dap.SetDataBreakpointsResponseBody{Breakpoints: out}})
}

// parseAddr parses a hexadecimal (0x…) or decimal address.
func parseAddr(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	a, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("bad address %q", s)
	}
	return a, nil
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
