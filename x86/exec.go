package x86

// Run executes guest instructions until an exit or until budget
// instructions have retired, and reports why it stopped. Instruction
// counting is exact: Icount grows by exactly the instructions retired, and
// an instruction that faults does not retire.
//
// A run whose budget ends inside a block resumes that block where it
// stopped (the same decoded instructions, to the same end), unless RIP
// moved, the block was dropped or a new epoch began: where blocks start
// and end, and so which bytes the observer hears of as code
// (Observer.Decoded), does not depend on where runs stop. A recording
// stops at the ends of time slices and a replay elsewhere; both decode
// the same blocks (recorder/summary.go).
func (c *CPU) Run(budget uint64) (exit Exit) {
	c.exit = Exit{}
	c.jitMiss = 0
	c.hooking = false
	c.cache.running = c
	rb, at := c.takeResume()
	c.syncTLB()
	c.syncJIT()
	c.enterHostFP()
	defer c.recoverExit(&exit)
	if c.Obs != nil && c.Obs.WantInstructions() {
		// (Blocks start afresh here: hooks see blocks whole.)
		c.runObserved(budget)
		return c.exit
	}
	if c.jitOK {
		c.cache.linkAny() // translations link to any block
	}
	var prev, from *Block
	for budget > 0 {
		var b *Block
		if rb != nil {
			b, rb = rb, nil
		} else {
			b, at = c.nextBlock(prev), 0
		}
		n := len(b.Insts) - at
		if uint64(n) > budget {
			n = int(budget)
		}
		c.blk = b
		c.blkStart = at
		c.blkLen = at + n
		if n == len(b.Insts) {
			before := c.runBlock(b, budget, from)
			from = nil
			if c.jitMiss != 0 {
				from = c.blk // its chaining slot for the next block missed
			}
			budget -= before
			b = c.blk
		} else {
			// Cut short by the budget, or the rest of a block it cut
			// short: run the exact handlers, since flags that the rest
			// of the block would overwrite are visible at the stop
			// (deadflags.go).
			from = nil
			c.runExact(b.Insts)
			if StatsOn {
				statInsts(statExact, b.Insts, at, c.blkLen)
			}
		}
		end := c.blkLen
		done := end - at
		c.Icount += uint64(done)
		budget -= uint64(done)
		c.finishBlock(b, end)
		c.blk, c.blkStart = nil, 0
		if c.exit.Reason != ExitNone {
			return c.exit
		}
		if end < len(b.Insts) && budget == 0 {
			c.resumeBlk, c.resumeAt = b, end
		}
		prev = b
	}
	c.exit.Reason = ExitBudget
	return c.exit
}

// takeResume returns the block the last run's budget stopped inside and
// the index of the instruction to go on with, if Run may resume it (see
// Run), or nil.
func (c *CPU) takeResume() (*Block, int) {
	b, at := c.resumeBlk, c.resumeAt
	c.resumeBlk = nil
	if b == nil || !b.valid || b.epoch != c.cache.epoch || b.Insts[at].PC != c.RIP {
		return nil, 0
	}
	return b, at
}

// runExact runs insts[c.blkStart:c.blkLen] through Inst.Fn.
func (c *CPU) runExact(insts []Inst) {
	for c.blkIdx = c.blkStart; c.blkIdx < c.blkLen; c.blkIdx++ {
		in := &insts[c.blkIdx]
		in.Fn(c, in)
	}
}

// finishBlock sets RIP after b's instructions before index end ran
// normally.
func (c *CPU) finishBlock(b *Block, end int) {
	if end == len(b.Insts) {
		if !b.setsRIP {
			c.RIP = b.End
		}
		return
	}
	last := &b.Insts[end-1]
	if last.Flags&InstSetsRIP != 0 {
		return
	}
	c.RIP = last.PC + uint64(last.Len)
}

// nextBlock finds the block at RIP, through prev's successor links when
// possible, decoding it if needed.
func (c *CPU) nextBlock(prev *Block) *Block {
	pc := c.RIP
	if prev != nil {
		if s := prev.succ[0]; s != nil && s.PC == pc && s.valid {
			return s
		}
		if s := prev.succ[1]; s != nil && s.PC == pc && s.valid {
			prev.succ[0], prev.succ[1] = s, prev.succ[0]
			return s
		}
	}
	b := c.cache.lookup(pc)
	if b == nil {
		b = c.decodeNew(pc)
	}
	if b.epoch != c.cache.epoch {
		c.cache.enter(c, b)
	}
	if prev != nil && prev.valid {
		prev.succ[1] = prev.succ[0]
		prev.succ[0] = b
	}
	return b
}

// decodeNew decodes and inserts the block at pc. Decoding allocates, and
// the OnFirstDecode hook runs there: the host's floating-point flags are
// set aside meanwhile (hostfp.go), a fetch fault's panic included.
func (c *CPU) decodeNew(pc uint64) *Block {
	c.setHostFPAside()
	defer c.takeHostFPBack()
	b := c.cache.decodeBlock(pc)
	c.cache.insert(b)
	return b
}

// translate translates b for the current mode. Translating allocates:
// the host's floating-point flags are set aside meanwhile (hostfp.go).
func (c *CPU) translate(b *Block) {
	c.setHostFPAside()
	c.cache.translate(b, c.jitMode)
	c.takeHostFPBack()
}

// recoverExit ends Run: it merges the host's floating-point flags
// (hostfp.go) and turns a panic from a handler or the memory system into
// an exit at the faulting instruction, which does not retire.
func (c *CPU) recoverExit(exit *Exit) {
	c.leaveHostFP()
	r := recover()
	if r == nil {
		return
	}
	var in *Inst
	if b := c.blk; b != nil {
		in = &b.Insts[c.blkIdx]
		c.Icount += uint64(c.blkIdx - c.blkStart)
		c.RIP = in.PC
		c.blk, c.blkStart = nil, 0
	}
	switch e := r.(type) {
	case *Fault:
		if e.NonCanonical {
			c.exit = Exit{Reason: ExitGP, Inst: in, Code: SIKernel}
			break
		}
		code := int32(SEGVMapErr)
		if e.Mapped {
			code = SEGVAccErr
		}
		c.exit = Exit{Reason: ExitFault, Addr: e.Addr, Fault: e, Inst: in, Code: code}
	case exception:
		c.exit = Exit{Reason: e.reason, Inst: in, Code: e.code, Err: e.err}
		if e.reason == ExitBreakpoint && in != nil {
			// int3 is a trap: it retires and RIP points past it.
			c.RIP = in.PC + uint64(in.Len)
			c.Icount++
		}
	default:
		panic(r)
	}
	*exit = c.exit
}

// Retired is the number of instructions this CPU has retired, exact also
// inside a block (for observers called during execution).
func (c *CPU) Retired() uint64 {
	if c.blk != nil {
		return c.Icount + uint64(c.blkIdx-c.blkStart)
	}
	return c.Icount
}

// Step executes exactly one instruction.
func (c *CPU) Step() Exit { return c.Run(1) }

// CurrentInst is the instruction being executed, for observers and
// handlers that leave the loop (nil between blocks).
func (c *CPU) CurrentInst() *Inst {
	if c.blk == nil {
		return nil
	}
	return &c.blk.Insts[c.blkIdx]
}

// InvalidateCode drops decoded code for the pages overlapping [addr, addr+n).
func (c *CPU) InvalidateCode(addr, n uint64) {
	for pn := addr >> PageShift; pn <= (addr+n-1)>>PageShift; pn++ {
		c.cache.InvalidatePage(pn)
	}
}

// Cache returns the CPU's code cache.
func (c *CPU) Cache() *CodeCache { return c.cache }

// SetExit makes the current block stop after the executing instruction and
// Run return r (for handlers such as syscall).
func (c *CPU) setExit(r ExitReason) {
	c.exit.Reason = r
	c.blkLen = c.blkIdx + 1
}
