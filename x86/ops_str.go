package x86

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// String instructions. in.Aux is the element size in bytes. With a rep
// prefix the whole repetition runs as one instruction; a fault part-way
// leaves RCX, RSI and RDI describing the remaining work, so the
// instruction restarts where it stopped, as on hardware.

func (c *CPU) strStep(size uint64) uint64 {
	if c.df() {
		return -size
	}
	return size
}

func opMovs(c *CPU, in *Inst) {
	size := uint64(in.Aux)
	seg := in.Args[1].Seg // a segment override applies to the source
	if in.Rep() == RepNone {
		c.movsOne(size, seg)
		return
	}
	if seg == SegNone && c.Obs == nil && !c.df() {
		c.repMovsFast(size)
	}
	for c.R[RCX] != 0 {
		c.movsOne(size, seg)
		c.R[RCX]--
	}
}

func (c *CPU) segBase(seg uint8) uint64 {
	switch seg {
	case SegFS:
		return c.FSBase
	case SegGS:
		return c.GSBase
	}
	return 0
}

func (c *CPU) movsOne(size uint64, seg uint8) {
	v := c.load(c.R[RSI]+c.segBase(seg), int(size))
	c.store(c.R[RDI], int(size), v)
	d := c.strStep(size)
	c.R[RSI] += d
	c.R[RDI] += d
}

// repMovsFast copies page-sized chunks while source and destination do
// not overlap within a chunk.
func (c *CPU) repMovsFast(size uint64) {
	m := c.Mem
	for c.R[RCX] != 0 {
		src, dst := c.R[RSI], c.R[RDI]
		n := c.R[RCX] * size
		if r := PageSize - src&pageMask; n > r {
			n = r
		}
		if r := PageSize - dst&pageMask; n > r {
			n = r
		}
		n -= n % size
		if n == 0 || (dst > src && dst < src+n) || (src > dst && src < dst+n) {
			return
		}
		sp := m.translate(src, false)
		dp := m.translate(dst, true)
		copy(dp.Data[dst&pageMask:dst&pageMask+n], sp.Data[src&pageMask:src&pageMask+n])
		c.R[RSI] += n
		c.R[RDI] += n
		c.R[RCX] -= n / size
	}
}

func opStos(c *CPU, in *Inst) {
	size := uint64(in.Aux)
	v := c.R[RAX] & sizeMask[size]
	if in.Rep() == RepNone {
		c.store(c.R[RDI], int(size), v)
		c.R[RDI] += c.strStep(size)
		return
	}
	if (c.Obs == nil || c.Pred != nil) && !c.df() {
		// While recording or replaying, the prediction cache takes
		// the stores as a whole (the observer sees none of them:
		// aligned stores do not cross a word).
		c.repStosFast(size, v)
	}
	for c.R[RCX] != 0 {
		c.store(c.R[RDI], int(size), v)
		c.R[RDI] += c.strStep(size)
		c.R[RCX]--
	}
}

func (c *CPU) repStosFast(size, v uint64) {
	var pat [8]byte
	for i := uint64(0); i < 8; i += size {
		storeLE(pat[i:], int(size), v)
	}
	for c.R[RCX] != 0 {
		dst := c.R[RDI]
		if dst%size != 0 {
			return
		}
		n := c.R[RCX] * size
		if r := PageSize - dst&pageMask; n > r {
			n = r
		}
		if n == 0 {
			return
		}
		dp := c.Mem.translate(dst, true)
		fillPattern(dp.Data[dst&pageMask:dst&pageMask+n], &pat)
		if c.Pred != nil {
			c.Pred.PutPattern(dst, int(n), binary.LittleEndian.Uint64(pat[:]))
		}
		c.R[RDI] += n
		c.R[RCX] -= n / size
	}
}

// fillPattern fills b, whose length is a multiple of the element size,
// with pat, an element repeated over 8 bytes: its first bytes, then
// copies of what it holds, doubling (memmove), instead of an element at
// a time (rep stos of a page of quadwords took 17% of running
// malloc_stress).
func fillPattern(b []byte, pat *[8]byte) {
	k := copy(b, pat[:])
	for k < len(b) {
		k += copy(b[k:], b[:k])
	}
}

func opLods(c *CPU, in *Inst) {
	size := uint64(in.Aux)
	seg := in.Args[1].Seg
	do := func() {
		v := c.load(c.R[RSI]+c.segBase(seg), int(size))
		o := Operand{Kind: KReg, Reg: RAX, Size: uint8(size)}
		c.setReg(&o, v)
		c.R[RSI] += c.strStep(size)
	}
	if in.Rep() == RepNone {
		do()
		return
	}
	for c.R[RCX] != 0 {
		do()
		c.R[RCX]--
	}
}

func opCmps(c *CPU, in *Inst) {
	size := uint64(in.Aux)
	seg := in.Args[0].Seg
	do := func() {
		a := c.load(c.R[RSI]+c.segBase(seg), int(size))
		b := c.load(c.R[RDI], int(size))
		aluSub(c, uint8(size), a, b)
		d := c.strStep(size)
		c.R[RSI] += d
		c.R[RDI] += d
	}
	if in.Rep() == RepNone {
		do()
		return
	}
	for c.R[RCX] != 0 {
		do()
		c.R[RCX]--
		if (in.Rep() == RepE) != c.cond(4) {
			break
		}
	}
}

func opScas(c *CPU, in *Inst) {
	size := uint64(in.Aux)
	acc := c.R[RAX] & sizeMask[size]
	do := func() {
		b := c.load(c.R[RDI], int(size))
		aluSub(c, uint8(size), acc, b)
		c.R[RDI] += c.strStep(size)
	}
	if in.Rep() == RepNone {
		do()
		return
	}
	for c.R[RCX] != 0 {
		do()
		c.R[RCX]--
		if (in.Rep() == RepE) != c.cond(4) {
			break
		}
	}
}

func init() {
	str := func(h Handler, ops ...x86asm.Op) {
		for i, op := range ops {
			size := uint32(1) << i
			register(op, func(in *Inst) Handler { in.Aux = size; return h })
		}
	}
	str(opMovs, x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ)
	str(opStos, x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ)
	str(opLods, x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ)
	str(opCmps, x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ)
	str(opScas, x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ)
}
