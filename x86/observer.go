package x86

// Observer receives the CPU-level events of Nirvana's instrumentation
// interface (seeds/idna-nirvana.txt §2.4). A nil CPU.Obs costs one
// predictable branch per memory access and nothing per instruction.
type Observer interface {
	// Instruction is called before each instruction executes, only when
	// WantInstructions reported true at the start of CPU.Run.
	Instruction(c *CPU, in *Inst)
	WantInstructions() bool
	// MemRead is called after each data read; it returns the value the
	// instruction uses (a replayer substitutes recorded values here).
	MemRead(c *CPU, addr uint64, size int, val uint64) uint64
	// MemWrite is called after each data write.
	MemWrite(c *CPU, addr uint64, size int, val uint64)
	// NonDet reports the result of a non-deterministic instruction
	// (rdtsc, rdrand, cpuid…); it returns the values to use.
	NonDet(c *CPU, in *Inst, vals []uint64) []uint64
	// Decoded is called before a block of code decoded from guest
	// memory first runs, and again the first time it runs after each
	// CodeCache.NewEpoch (the recorder logs code bytes from here).
	Decoded(c *CPU, b *Block)
	// Sync is called before a lock-prefixed or implicitly locked
	// instruction (xchg with memory, cmpxchg, xadd…) or a fence executes:
	// the points where iDNA writes key frames. c.Retired() is its position.
	Sync(c *CPU, in *Inst)
}

// BlockFilter, when an Observer implements it, limits the Instruction
// calls to the blocks WantBlock accepts: the others run at full speed,
// translated and chained to each other, as without instruction
// observation. An execution breakpoint needs to see only the blocks that
// contain its address. The verdict on a block is asked once and kept
// until the filter's FilterVersion changes, another filter runs on the
// code cache, or a Run without one (filter.go). An InstFilter narrows
// the verdict to single instructions, before which translated code
// leaves for the Instruction call.
type BlockFilter interface {
	WantBlock(b *Block) bool
}

// Env answers the instructions whose result comes from outside the CPU.
type Env interface {
	CPUID(leaf, subleaf uint32) (a, b, c, d uint32)
	Rdtsc() uint64
}

// MemoryBlind, when an Observer implements it and MemoryBlind reports
// true, needs no memory access (a live probe run without a recording
// wants instructions and events only): the CPU runs as without an
// observer, Mem's TLBs in the handlers and translated code without a
// prediction cache, and calls MemRead and MemWrite only for the accesses
// that miss the TLB (MemRead must return val).
type MemoryBlind interface {
	MemoryBlind() bool
}

// blind reports whether c's observer is MemoryBlind.
func (c *CPU) blind() bool {
	b, ok := c.Obs.(MemoryBlind)
	return ok && b.MemoryBlind()
}
