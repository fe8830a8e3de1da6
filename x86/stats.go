package x86

import (
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"golang.org/x/arch/x86/x86asm"
)

// Execution statistics for performance work (TTD_STATS=1, `ttd run
// --stats`): how many guest instructions the interpreter ran outside
// translations, and why, by instruction; how often translated code
// returned to Go, and why. Off, they cost one test of a global per block
// that the interpreter runs; on, a locked map update per such block.

// StatsOn says whether the statistics are being collected.
var StatsOn = os.Getenv("TTD_STATS") != ""

// Why the interpreter ran an instruction of Run's fast loop.
const (
	statCold     = iota // its block had not run jitThreshold times yet
	statDeclined        // its block has no translation (the first instruction is not translated)
	statLeft            // a translation left before it (untranslated instruction, TLB miss, code write...)
	statAfter           // after such an instruction, in a block with no resume entry there
	statExact           // Run's budget cut the block short
	statReasons
)

var statNames = [statReasons]string{"cold", "declined", "left", "after", "budget"}

var stats struct {
	sync.Mutex
	byOp      map[x86asm.Op]*[statReasons]uint64
	total     [statReasons]uint64
	jitCalls  uint64 // entries into translated code from Go
	slotMiss  uint64 // ... that returned at a chaining exit whose slot was empty
	dynMiss   uint64 // ... that returned at a return or indirect jump whose target was not in the table (or at the budget)
	leftExits uint64 // ... that returned before an instruction for the interpreter
	resumed   uint64 // ... after which the translation took up again
	blocks    uint64 // blocks decoded
	insts     uint64 // instructions decoded
	reused    uint64 // ... of which taken from blocks already decoded
	fromFile  uint64 // blocks taken from the persistent code file (codefile.go)
	xlated    uint64 // translations made
	xbytes    uint64 // bytes of host code
	declined  uint64 // blocks declined
}

// statInsts counts insts[from:to] as run by the interpreter for reason.
func statInsts(reason int, insts []Inst, from, to int) {
	if to > len(insts) {
		to = len(insts)
	}
	if from >= to {
		return
	}
	stats.Lock()
	if stats.byOp == nil {
		stats.byOp = map[x86asm.Op]*[statReasons]uint64{}
	}
	for i := from; i < to; i++ {
		op := insts[i].Op
		e := stats.byOp[op]
		if e == nil {
			e = new([statReasons]uint64)
			stats.byOp[op] = e
		}
		e[reason]++
	}
	stats.total[reason] += uint64(to - from)
	stats.Unlock()
}

// statCount adds to one of the counters.
func statCount(p *uint64, n uint64) {
	stats.Lock()
	*p += n
	stats.Unlock()
}

// WriteStats writes the statistics collected since the start, given the
// number of guest instructions retired in all.
func WriteStats(w io.Writer, retired uint64) {
	stats.Lock()
	defer stats.Unlock()
	var interp uint64
	for _, n := range stats.total {
		interp += n
	}
	pct := func(n, of uint64) float64 {
		if of == 0 {
			return 0
		}
		return 100 * float64(n) / float64(of)
	}
	fmt.Fprintf(w, "ttd stats: %d instructions retired, %d (%.2f%%) by the interpreter in the fast loop", retired, interp, pct(interp, retired))
	for r, n := range stats.total {
		fmt.Fprintf(w, ", %s %d", statNames[r], n)
	}
	fmt.Fprintf(w, "\nttd stats: decoded %d blocks (%d instructions, %d of them copied from blocks decoded before, %d blocks from the code file); %d translations (%d KiB of host code), %d blocks declined\n",
		stats.blocks, stats.insts, stats.reused, stats.fromFile, stats.xlated, stats.xbytes>>10, stats.declined)
	fmt.Fprintf(w, "ttd stats: %d entries into translated code from Go: %d at an empty chaining slot, %d at a return or indirect jump not in the table or the budget, %d before an instruction for the interpreter (%d taken up again after it)\n",
		stats.jitCalls, stats.slotMiss, stats.dynMiss, stats.leftExits, stats.resumed)
	if winFault {
		fmt.Fprintf(w, "ttd stats: %d host faults of translated reads left at their exits; %d address spaces went over to them\n", jitFaults, winFaultSwitches)
	}
	type row struct {
		op  x86asm.Op
		n   [statReasons]uint64
		sum uint64
	}
	var rows []row
	for op, e := range stats.byOp {
		r := row{op: op, n: *e}
		for _, v := range e {
			r.sum += v
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].sum != rows[j].sum {
			return rows[i].sum > rows[j].sum
		}
		return rows[i].op < rows[j].op
	})
	if len(rows) > 30 {
		rows = rows[:30]
	}
	fmt.Fprintf(w, "ttd stats: interpreted instructions by opcode (top %d):\n", len(rows))
	fmt.Fprintf(w, "  %-14s %12s %6s", "opcode", "count", "%")
	for _, n := range statNames {
		fmt.Fprintf(w, " %11s", n)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		name := r.op.String()
		if r.op >= vexOpBase {
			name = fmt.Sprintf("vex#%x", uint32(r.op-vexOpBase))
		}
		fmt.Fprintf(w, "  %-14s %12d %6.2f", name, r.sum, pct(r.sum, retired))
		for _, v := range r.n {
			fmt.Fprintf(w, " %11d", v)
		}
		fmt.Fprintln(w)
	}
}

// statRan counts the instructions of b that the interpreter ran from
// index from on (runBlock): before from, a translation ran them.
func (c *CPU) statRan(b *Block, from int) {
	to := c.blkLen
	switch {
	case from > 0:
		statInsts(statLeft, b.Insts, from, from+1)
		statInsts(statAfter, b.Insts, from+1, to)
	case b.declined || (b.jv().entry == 0 && !c.cold(b) && c.jitOK):
		statInsts(statDeclined, b.Insts, 0, to)
	default:
		statInsts(statCold, b.Insts, 0, to)
	}
}

// statCall counts an entry into translated code and how it returned.
func (c *CPU) statCall(r uint64) {
	stats.Lock()
	stats.jitCalls++
	switch {
	case r == jitChained && c.jitMiss != 0:
		stats.slotMiss++
	case r == jitChained:
		stats.dynMiss++
	case int(r) < len(c.cache.jitBlocks[c.jitLast].Insts):
		stats.leftExits++
		if b := c.cache.jitBlocks[c.jitLast]; int(r)+1 < len(b.Insts) && b.jit.resume != nil && b.jit.resume[r+1] != 0 {
			stats.resumed++
		}
	}
	stats.Unlock()
}
