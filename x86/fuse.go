package x86

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
// The first instructions (x86/gen's fusedFirst) neither write memory nor
// leave the loop, so nothing can end the block between them and the jump;
// a fault in the first stops the block at the first, exactly as unfused.

// fusedID maps the IDs of a fusable pair to the pair's ID.
var fusedID = func() map[[2]uint16]uint16 {
	m := make(map[[2]uint16]uint16, len(fusedPairs))
	for i, p := range fusedPairs {
		a, b := directID[funcPC(p[0])], directID[funcPC(p[1])]
		if a == 0 || b == 0 {
			panic("x86: fused pair of handlers the dispatch loop does not call directly")
		}
		m[[2]uint16{a, b}] = uint16(fusedBase + i)
	}
	return m
}()

// markFused fuses the pairs in b (after markDeadFlags, which leaves a
// flag-setting instruction followed by a jump that reads its flags alone).
func markFused(b *Block) {
	for i := 0; i+1 < len(b.Insts); i++ {
		in := &b.Insts[i]
		if id, ok := fusedID[[2]uint16{in.ID, b.Insts[i+1].ID}]; ok {
			in.ID = id
			i++
		}
	}
}
