package x86

// handlerID returns the index of h in directHandlers (the case of the
// dispatch loop's switch that runs it directly), or 0. Decoding asks it
// of every instruction it decodes, and markDeadFlags of every variant it
// picks: a map from code address to index took 1.2-1.5% of the CPU time
// of `ttd run python3 -c pass`, this open-addressed table a few ns a
// lookup.
func handlerID(h Handler) uint16 {
	pc := funcPC(h)
	for i := handlerSlot(pc); ; i = (i + 1) & (handlerSlots - 1) {
		switch handlerIDs.pc[i] {
		case pc:
			return handlerIDs.id[i]
		case 0:
			return 0
		}
	}
}

// handlerSlots is the size of handlerIDs: a power of two, at least four
// times the number of directHandlers so that probes stay short.
const (
	handlerSlotBits = 11
	handlerSlots    = 1 << handlerSlotBits
)

// handlerIDs maps the code address of each of directHandlers to its
// index, by linear probing from handlerSlot (pc 0: an empty slot).
var handlerIDs = func() (t struct {
	pc [handlerSlots]uintptr
	id [handlerSlots]uint16
}) {
	if 4*len(directHandlers) > handlerSlots {
		panic("x86: handlerSlots is too small for directHandlers")
	}
	for i, h := range directHandlers {
		if h == nil {
			continue
		}
		pc := funcPC(h)
		j := handlerSlot(pc)
		for t.pc[j] != 0 && t.pc[j] != pc {
			j = (j + 1) & (handlerSlots - 1)
		}
		t.pc[j], t.id[j] = pc, uint16(i)
	}
	return t
}()

// handlerSlot is where the probe for code address pc starts (Fibonacci
// hashing: functions are aligned, so the low bits alone would collide).
func handlerSlot(pc uintptr) uintptr {
	return uintptr(uint64(pc) * 0x9E3779B97F4A7C15 >> (64 - handlerSlotBits))
}
