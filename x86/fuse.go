package x86

import (
	"runtime"
	"strings"
)

// Instruction fusion. A compare, test or counting instruction followed by
// a conditional jump — the tail of almost every loop — runs as one case
// of the dispatch loop's switch: both handlers inline into it, and the
// pair costs one dispatch instead of two. markFused gives the first
// instruction of such a pair the pair's ID (fusedBase + its index in
// fusedPairs); the jump keeps its own. Like the flag-free variants, the
// pair exists only in runInsts: Inst.Fn stays the single instruction's
// handler, so observed execution and blocks cut short by the budget run
// them one at a time.
//
// The first instructions of the jump pairs (x86/gen's fusedGroups) neither
// write memory nor leave the loop, so nothing can end the block between
// them and the jump; a fault in the first stops the block at the first,
// exactly as unfused. The other pairs (seqPairs) check c.blkLen between
// the two, since a store may end the block (self-modifying code).

// fuseByFirst lists, for each direct handler's ID, the pairs it starts:
// the second's ID and the pair's (decoding looks every instruction up,
// and a slice index is cheaper than a map).
var fuseByFirst = func() [][]struct{ second, id uint16 } {
	t := make([][]struct{ second, id uint16 }, len(directHandlers))
	for i, p := range fusedPairs {
		a, b := handlerID(p[0]), handlerID(p[1])
		if a == 0 || b == 0 {
			panic("x86: fused pair of handlers the dispatch loop does not call directly")
		}
		t[a] = append(t[a], struct{ second, id uint16 }{b, uint16(fusedBase + i)})
	}
	return t
}()

// fusedID returns the ID of the pair of a and b, if they fuse.
func fusedID(a, b uint16) (uint16, bool) {
	if int(a) >= len(fuseByFirst) {
		return 0, false
	}
	for _, p := range fuseByFirst[a] {
		if p.second == b {
			return p.id, true
		}
	}
	return 0, false
}

// markFused fuses the pairs in b (after markDeadFlags, so that pairs name
// the flag-free variants): first each flag-setting instruction with the
// jump after it, then, left to right, other neighbours that are both
// still single.
func markFused(b *Block) {
	insts := b.Insts
	for pass := 0; pass < 2; pass++ {
		for i := 0; i+1 < len(insts); i++ {
			in, next := &insts[i], &insts[i+1]
			if in.ID >= fusedBase || next.ID >= fusedBase {
				i++ // in is the first of a pair: next is its second
				continue
			}
			id, ok := fusedID(in.ID, next.ID)
			if !ok || (id < fusedBase+seqPairsAt) != (pass == 0) {
				continue
			}
			in.ID = id
			i++
		}
	}
}

// DispatchName names what the dispatch loop runs for in: its direct
// handler (a flag-free variant, a fused pair) or "Fn" (for tools that
// choose the pairs to fuse).
func DispatchName(in *Inst) string {
	name := func(h Handler) string {
		n := runtime.FuncForPC(funcPC(h)).Name()
		return n[strings.LastIndex(n, ".")+1:]
	}
	switch {
	case in.ID == 0:
		return "Fn:" + name(in.Fn)
	case int(in.ID) < len(directHandlers):
		return name(directHandlers[in.ID])
	case int(in.ID)-fusedBase < len(fusedPairs):
		p := fusedPairs[int(in.ID)-fusedBase]
		return name(p[0]) + "+" + name(p[1])
	}
	return "?"
}
