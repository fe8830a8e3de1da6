package symbols

import (
	"debug/dwarf"
	"path"
	"sort"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/line"
)

// PCToLine returns the source file and line of the instruction at pc.
// Where several line-table rows share the address it takes the last
// is_stmt one, as gdb does. For a return address (a caller's frame) ask
// for pc-1, as Unwind does.
func (t *Table) PCToLine(pc uint64) (file string, ln int, ok bool) {
	img := t.imageFor(pc)
	if img == nil {
		return "", 0, false
	}
	return img.lineAt(pc)
}

// UnitPCToLine is PCToLine for a table loaded with SymbolsOnly: it
// reads the line table of the compile unit that covers pc only (see
// UnitFuncForPC).
func (t *Table) UnitPCToLine(pc uint64) (file string, ln int, ok bool) {
	img := t.imageFor(pc)
	if img == nil {
		return "", 0, false
	}
	return img.dwarfAt(pc).lineAt(pc)
}

// lineAt is PCToLine in img's DWARF.
func (img *image) lineAt(pc uint64) (file string, ln int, ok bool) {
	cu := img.cuAt(pc)
	if cu == nil {
		return "", 0, false
	}
	rows := cu.lineRows()
	i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > pc }) - 1
	if i < 0 || rows[i].end {
		return "", 0, false
	}
	best := i
	for j := i; j >= 0 && rows[j].addr == rows[i].addr && !rows[j].end; j-- {
		if rows[j].stmt {
			best = j
			break
		}
	}
	if rows[best].line <= 0 {
		return "", 0, false
	}
	if fn := img.funcAt(pc); fn != nil && rows[best].addr < fn.lo {
		return "", 0, false // the row is another function's: none covers pc
	}
	return rows[best].file, rows[best].line, true
}

// lineRow is one row of a line table, at its runtime address.
type lineRow struct {
	addr      uint64
	file      string
	line      int
	stmt, end bool
}

// lineRows returns the CU's line table sorted by address (read with
// debug/dwarf's LineReader on first use).
func (cu *compUnit) lineRows() []lineRow {
	cu.rowsOnce.Do(func() {
		lr, err := cu.img.dwarf.LineReader(cu.entry)
		if err != nil || lr == nil {
			return
		}
		var rows []lineRow
		var e dwarf.LineEntry
		for lr.Next(&e) == nil {
			r := lineRow{addr: e.Address + cu.img.bias, line: e.Line, stmt: e.IsStmt, end: e.EndSequence}
			if e.File != nil {
				r.file = path.Clean(e.File.Name)
			}
			rows = append(rows, r)
		}
		sort.SliceStable(rows, func(i, j int) bool {
			if rows[i].addr != rows[j].addr {
				return rows[i].addr < rows[j].addr
			}
			return rows[i].end && !rows[j].end // a sequence's end before the next one's start
		})
		cu.rows = rows
	})
	return cu.rows
}

// matchFiles returns the line-table file names in cu that name file: the
// same path, else a path ending in /file, else the same base name.
func matchFiles(li *line.DebugLineInfo, file string, tier int) []string {
	var out []string
	for _, fe := range li.FileNames {
		p := fe.Path
		var ok bool
		switch tier {
		case 0:
			ok = p == file || path.Clean(p) == path.Clean(file)
		case 1:
			ok = strings.HasSuffix(p, "/"+strings.TrimPrefix(file, "./"))
		case 2:
			ok = path.Base(p) == path.Base(file)
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// LineToPCs returns the addresses where a breakpoint on file:line goes,
// chosen as delve does: the line's is_stmt rows are grouped by function
// (and inlined call), the first of each group is taken, and a function's
// entry is moved past its prologue. file matches a compiled path exactly,
// else by suffix ("src/a.c" or "a.c"), else by base name. The result is
// sorted and empty if the line has no code.
func (t *Table) LineToPCs(file string, ln int) []uint64 {
	type hit struct {
		img *image
		pc  line.PCStmt
	}
	var hits []hit
	imgs := t.imageList()
	t.lines().Lock()
	for tier := 0; tier < 3 && len(hits) == 0; tier++ {
		for _, img := range imgs {
			for _, cu := range img.cus {
				if cu.lines == nil {
					continue
				}
				for _, name := range matchFiles(cu.lines, file, tier) {
					for _, p := range cu.lines.LineToPCs(name, ln) {
						hits = append(hits, hit{img, p})
					}
				}
			}
		}
	}
	t.lines().Unlock()

	type group struct {
		fn  *function
		off dwarf.Offset
	}
	first := map[group]line.PCStmt{}
	inl := map[*function][]inlineRange{}
	for _, h := range hits {
		fn := h.img.funcAt(h.pc.PC)
		if fn == nil || strings.Contains(fn.name, "·dwrap·") {
			continue
		}
		rngs, seen := inl[fn]
		if !seen {
			rngs = fn.inlineRanges()
			inl[fn] = rngs
		}
		g := group{fn, fn.off}
		for _, r := range rngs {
			if h.pc.PC >= r.lo && h.pc.PC < r.hi {
				g.off = r.off
				break
			}
		}
		old, ok := first[g]
		if !ok || (h.pc.Stmt && !old.Stmt) || (h.pc.Stmt == old.Stmt && h.pc.PC < old.PC) {
			first[g] = h.pc
		}
	}
	var pcs []uint64
	for g, p := range first {
		pc := p.PC
		if g.off == g.fn.off && pc == g.fn.entry {
			pc = t.afterPrologue(g.fn)
		}
		pcs = append(pcs, pc)
	}
	sort.Slice(pcs, func(i, j int) bool { return pcs[i] < pcs[j] })
	out := pcs[:0]
	for i, pc := range pcs {
		if i == 0 || pc != pcs[i-1] {
			out = append(out, pc)
		}
	}
	return out
}

// BreakpointLine resolves a breakpoint request on file:line the way gdb
// does for a line without code (a comment, a blank line, a declaration
// without initialiser): it moves to the next line that has code, within
// the same function. It returns the addresses and the line used, or nil.
func (t *Table) BreakpointLine(file string, ln int) ([]uint64, int) {
	for l := ln; l < ln+50; l++ {
		pcs := t.LineToPCs(file, l)
		if len(pcs) == 0 {
			continue
		}
		if l != ln {
			// Do not slide from between two functions into the next one.
			if fn, ok := t.FuncForPC(pcs[0]); ok && fn.Line > ln {
				return nil, 0
			}
		}
		return pcs, l
	}
	return nil, 0
}

// Sources returns every source file named in the line tables, sorted.
func (t *Table) Sources() []string {
	set := map[string]bool{}
	for _, img := range t.imageList() {
		for _, cu := range img.cus {
			if cu.lines == nil {
				continue
			}
			for _, fe := range cu.lines.FileNames {
				set[path.Clean(fe.Path)] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// inlineRange is the address range of one inlined call inside a function.
type inlineRange struct {
	lo, hi uint64
	off    dwarf.Offset
	depth  int
}

// inlineRanges returns the inlined calls of fn, deepest first.
func (fn *function) inlineRanges() []inlineRange {
	if fn.cu == nil {
		return nil
	}
	tree, err := fn.img.loadTree(fn.off)
	if err != nil {
		return nil
	}
	var out []inlineRange
	var walk func(n *godwarf.Tree, depth int)
	walk = func(n *godwarf.Tree, depth int) {
		if n.Tag == dwarf.TagInlinedSubroutine {
			for _, r := range n.Ranges {
				out = append(out, inlineRange{r[0], r[1], n.Offset, depth})
			}
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(tree, 0)
	sort.SliceStable(out, func(i, j int) bool { return out[i].depth > out[j].depth })
	return out
}
