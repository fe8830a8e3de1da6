package x86

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
)

// Handler executes one decoded instruction.
type Handler func(c *CPU, in *Inst)

// Operand kinds.
const (
	KNone  uint8 = iota
	KReg         // general register; Reg 0-15, Size 1/2/4/8
	KReg8H       // AH, CH, DH, BH: bits 8-15 of register Reg (0-3)
	KMem         // memory at Base+Index<<Scale+Disp (+segment base)
	KImm         // immediate in Imm, already truncated to the operand size
	KRel         // branch target: Imm is the absolute address
	KXMM         // XMM register Reg
	KMMX         // MMX register Reg
	KST          // x87 ST(Reg)
	KSeg         // segment register (Reg: 0 ES,1 CS,2 SS,3 DS,4 FS,5 GS)
)

// NoReg marks an absent base or index register. It is 16 so that ea can
// index it like a register that always reads 0 (CPU.rzero follows CPU.R).
const NoReg = 16

// Segment overrides that matter in 64-bit mode.
const (
	SegNone uint8 = iota
	SegFS
	SegGS
)

// Operand is one decoded operand in compact form.
type Operand struct {
	Kind  uint8
	Reg   uint8
	Size  uint8 // bytes
	Base  uint8
	Index uint8
	Scale uint8 // shift count: 0-3
	Seg   uint8
	A32   bool   // 32-bit address size (a 67 prefix): the address wraps at 4 GiB
	Imm   uint64 // displacement for KMem, value for KImm, target for KRel
}

// Inst is a decoded instruction in the form the interpreter executes.
// Its fields are ordered so that it has no padding, and it is 80 bytes:
// a program's hot instructions should take as few cache lines as they
// can, and a short program's decoded instructions are most of the memory
// ttd touches first (python3 -c pass decodes 193,000, 18 MB at the 96
// bytes Inst had; the size of fresh memory is what costs). The prefixes
// and the address size are bits of Flags, the ID before markDeadFlags
// and markFused is handlerID(Fn), and wrapped handlers (syncWrap, the
// SSE fast paths) find the handler they wrap without a field of their
// own.
type Inst struct {
	Fn Handler
	PC uint64
	Op x86asm.Op
	// Aux is handler-specific data fixed at decode time (e.g. a
	// condition code or an opcode byte).
	Aux uint32
	// ID selects the case of the dispatch loop's switch that runs Fn
	// directly (0: call through Fn). See directHandlers. It starts as
	// handlerID(Fn), which markDeadFlags and markFused may change to a
	// variant's for the instruction's place in its block.
	ID      uint16
	Len     uint8
	OpSize  uint8 // operand size in bytes (x86asm DataSize/8)
	MemSize uint8 // size of the memory operand in bytes, if any
	Lock    bool
	NArgs   uint8
	Flags   uint8 // InstEndsBlock etc., the rep prefix (Rep) and InstAddr32
	// Args are the operands. No instruction without a VEX prefix (which
	// ttd's CPU does not report) has more than three.
	Args [3]Operand
}

// instSize is the size of an Inst; a test keeps it from growing unseen.
const instSize = 80

// Rep prefixes (Inst.Rep).
const (
	RepNone uint8 = iota
	RepE
	RepNE
)

// Inst flags.
const (
	// InstEndsBlock marks instructions after which the block stops:
	// control transfers and instructions that leave the loop.
	InstEndsBlock = 1 << iota
	// InstSetsRIP marks instructions whose handler sets c.RIP itself.
	InstSetsRIP
	// InstAddr32 marks a 32-bit address size (a 67 prefix): 4 bytes,
	// else 8.
	InstAddr32
	// instRepShift is where the two bits of the rep prefix begin
	// (RepNone, RepE, RepNE).
	instRepShift = iota
)

// Rep returns the instruction's rep prefix: RepNone, RepE or RepNE.
func (in *Inst) Rep() uint8 { return in.Flags >> instRepShift & 3 }

// setRep records the rep prefix r.
func (in *Inst) setRep(r uint8) { in.Flags = in.Flags&^(3<<instRepShift) | r<<instRepShift }

// AddrSize returns the address size in bytes: 4 or 8.
func (in *Inst) AddrSize() uint8 {
	if in.Flags&InstAddr32 != 0 {
		return 4
	}
	return 8
}

// Bytes returns a short description of the instruction for error messages.
func (in *Inst) String() string {
	return fmt.Sprintf("%v at %#x", in.Op, in.PC)
}

// ea computes the effective address of a memory operand. An absent base
// or index is register NoReg, which reads as 0, so the common forms take
// no branches.
//
// The masks cost nothing and spare the bounds and shift-count checks:
// Base and Index are at most NoReg and Scale at most 3, and the view of
// 32 registers stays inside the CPU (R, rzero and the fields after them).
// Seg and A32 are tested with one load (segA32).
func (c *CPU) ea(o *Operand) uint64 {
	r := (*[32]uint64)(unsafe.Pointer(&c.R))
	a := o.Imm + r[o.Base&31] + r[o.Index&31]<<(o.Scale&3)
	if *(*uint16)(unsafe.Pointer(&o.Seg)) != 0 {
		return c.eaSeg(o, a)
	}
	return a
}

// segA32 checks at compile time that Operand.A32 follows Seg, so that ea
// tests both with one 16-bit load, and that SegNone is 0.
var _ = [1]struct{}{}[unsafe.Offsetof(Operand{}.A32)-unsafe.Offsetof(Operand{}.Seg)-1+uintptr(SegNone)]

// cpuTail checks at compile time that the CPU has room after R for ea's
// view of 32 registers.
var _ = [1]struct{}{}[min(1, unsafe.Sizeof(CPU{})/(unsafe.Offsetof(CPU{}.R)+32*8))-1]

// eaSeg finishes ea for 32-bit addresses and fs/gs overrides.
func (c *CPU) eaSeg(o *Operand, a uint64) uint64 {
	if o.A32 {
		a = uint64(uint32(a))
	}
	switch o.Seg {
	case SegNone:
	case SegFS:
		a += c.FSBase
	case SegGS:
		a += c.GSBase
	}
	return a
}

// EA is the exported effective-address computation for the observers.
func (c *CPU) EA(o *Operand) uint64 { return c.ea(o) }

var sizeMask = [9]uint64{1: 0xff, 2: 0xffff, 4: 0xffffffff, 8: ^uint64(0)}

// getReg reads a general register operand of size sz.
func (c *CPU) getReg(o *Operand) uint64 {
	if o.Kind == KReg8H {
		return (c.R[o.Reg] >> 8) & 0xff
	}
	return c.R[o.Reg] & sizeMask[o.Size]
}

// setReg writes a general register with x86-64 semantics: 32-bit writes
// zero-extend, 8- and 16-bit writes merge.
func (c *CPU) setReg(o *Operand, v uint64) {
	switch o.Size {
	case 8:
		c.R[o.Reg] = v
	case 4:
		c.R[o.Reg] = uint64(uint32(v))
	case 2:
		c.R[o.Reg] = c.R[o.Reg]&^0xffff | v&0xffff
	case 1:
		if o.Kind == KReg8H {
			c.R[o.Reg] = c.R[o.Reg]&^0xff00 | (v&0xff)<<8
		} else {
			c.R[o.Reg] = c.R[o.Reg]&^0xff | v&0xff
		}
	}
}

// get reads an integer operand (register, memory or immediate).
func (c *CPU) get(o *Operand) uint64 {
	switch o.Kind {
	case KReg, KReg8H:
		return c.getReg(o)
	case KMem:
		return c.load(c.ea(o), int(o.Size))
	}
	return o.Imm
}

// set writes an integer operand.
func (c *CPU) set(o *Operand, v uint64) {
	if o.Kind == KMem {
		c.store(c.ea(o), int(o.Size), v)
		return
	}
	c.setReg(o, v)
}

// load reads guest memory through the observer, if any.
func (c *CPU) load(a uint64, size int) uint64 {
	switch size {
	case 1:
		return c.load8(a)
	case 2:
		return c.load16(a)
	case 4:
		return c.load32(a)
	}
	return c.load64(a)
}

// store writes guest memory and tells the observer.
func (c *CPU) store(a uint64, size int, v uint64) {
	switch size {
	case 1:
		c.store8(a, v)
	case 2:
		c.store16(a, v)
	case 4:
		c.store32(a, v)
	default:
		c.store64(a, v)
	}
}

// Guest memory access. The fast path of a load or store checks only c.rtlb
// or c.wtlb: Mem's own TLBs while nobody observes, an always-missing one
// otherwise (see syncTLB). Everything else — a TLB miss, an access that
// crosses a page, the prediction cache, the observer — is in loadSlow and
// storeSlow.
//
// The hot handlers spell the fast path out as
//
//	v, ok := c.tryLoad64(a)
//	if !ok || c.Pred != nil && !c.Pred.Hit(a, 8, v) {
//		v = c.loadSlow(a, 8)
//	}
//
// and a store as c.tryStore64(a, v) and, while recording, c.Pred.Put, else
// storeSlow. While
// recording (CPU.Pred set) the TLBs are Mem's own, a read the prediction
// cache predicts costs an inline compare, and only the others reach
// loadSlow and the observer.
//
// rather than call load64: a function that makes a call costs more than
// Go's inliner allows by default, and a handler inlined into the dispatch
// loop gets only the default budget for the calls in its body (PGO's hot
// budget applies to call sites of the loop itself). tryLoad and tryStore
// make no call, so they inline there.

//go:noinline
func (c *CPU) loadSlow(a uint64, size int) uint64 {
	v := c.Mem.Read(a, size)
	if p := c.Pred; p != nil && p.Hit(a, size, v) {
		return v // a TLB miss the prediction cache predicts
	}
	if c.Obs != nil {
		v = c.Obs.MemRead(c, a, size, v)
	}
	return v
}

//go:noinline
func (c *CPU) storeSlow(a uint64, size int, v uint64) {
	c.Mem.Write(a, size, v)
	if p := c.Pred; p != nil && p.Put(a, size, v) {
		return
	}
	if c.Obs != nil {
		c.Obs.MemWrite(c, a, size, v)
	}
}

func (c *CPU) tryLoad8(a uint64) (uint64, bool) {
	if e := &c.rtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift {
		return uint64(e.page.Data[a&pageMask]), true
	}
	return 0, false
}

func (c *CPU) tryLoad16(a uint64) (uint64, bool) {
	if e := &c.rtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-2 {
		return uint64(binary.LittleEndian.Uint16(e.page.Data[a&pageMask:])), true
	}
	return 0, false
}

func (c *CPU) tryLoad32(a uint64) (uint64, bool) {
	if e := &c.rtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-4 {
		return uint64(binary.LittleEndian.Uint32(e.page.Data[a&pageMask:])), true
	}
	return 0, false
}

func (c *CPU) tryLoad64(a uint64) (uint64, bool) {
	if e := &c.rtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-8 {
		return binary.LittleEndian.Uint64(e.page.Data[a&pageMask:]), true
	}
	return 0, false
}

func (c *CPU) tryStore8(a uint64, v uint64) bool {
	if e := &c.wtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift {
		e.page.Data[a&pageMask] = uint8(v)
		return true
	}
	return false
}

func (c *CPU) tryStore16(a uint64, v uint64) bool {
	if e := &c.wtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-2 {
		binary.LittleEndian.PutUint16(e.page.Data[a&pageMask:], uint16(v))
		return true
	}
	return false
}

func (c *CPU) tryStore32(a uint64, v uint64) bool {
	if e := &c.wtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-4 {
		binary.LittleEndian.PutUint32(e.page.Data[a&pageMask:], uint32(v))
		return true
	}
	return false
}

func (c *CPU) tryStore64(a uint64, v uint64) bool {
	if e := &c.wtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-8 {
		binary.LittleEndian.PutUint64(e.page.Data[a&pageMask:], v)
		return true
	}
	return false
}

// load8 … store64 are the fast path and the slow path together, for the
// handlers that are not hot enough to spell them out.

func (c *CPU) load8(a uint64) uint64 {
	if v, ok := c.tryLoad8(a); ok && (c.Pred == nil || c.Pred.Hit(a, 1, v)) {
		return v
	}
	return c.loadSlow(a, 1)
}

func (c *CPU) load16(a uint64) uint64 {
	if v, ok := c.tryLoad16(a); ok && (c.Pred == nil || c.Pred.Hit(a, 2, v)) {
		return v
	}
	return c.loadSlow(a, 2)
}

func (c *CPU) load32(a uint64) uint64 {
	if v, ok := c.tryLoad32(a); ok && (c.Pred == nil || c.Pred.Hit(a, 4, v)) {
		return v
	}
	return c.loadSlow(a, 4)
}

func (c *CPU) load64(a uint64) uint64 {
	if v, ok := c.tryLoad64(a); ok && (c.Pred == nil || c.Pred.Hit(a, 8, v)) {
		return v
	}
	return c.loadSlow(a, 8)
}

func (c *CPU) store8(a uint64, v uint64) {
	if !c.tryStore8(a, v) || c.Pred != nil && !c.Pred.Put(a, 1, v&0xff) {
		c.storeSlow(a, 1, v&0xff)
	}
}

func (c *CPU) store16(a uint64, v uint64) {
	if !c.tryStore16(a, v) || c.Pred != nil && !c.Pred.Put(a, 2, v&0xffff) {
		c.storeSlow(a, 2, v&0xffff)
	}
}

func (c *CPU) store32(a uint64, v uint64) {
	if !c.tryStore32(a, v) || c.Pred != nil && !c.Pred.Put(a, 4, v&0xffffffff) {
		c.storeSlow(a, 4, v&0xffffffff)
	}
}

func (c *CPU) store64(a uint64, v uint64) {
	if !c.tryStore64(a, v) || c.Pred != nil && !c.Pred.Put(a, 8, v) {
		c.storeSlow(a, 8, v)
	}
}

// missTLB returns a TLB that never hits: the handlers use it while an
// observer is attached. It is made on first use: built at package
// initialisation, its 512 KiB (built on the stack, then copied) cost
// every ttd command, `ttd --version` included, about 5 ms of CPU in page
// faults and copying, and `ttd run` never uses it.
var missTLB = sync.OnceValue(func() *[tlbSize]tlbEntry {
	t := new([tlbSize]tlbEntry)
	for i := range t {
		t[i].tag = noTag
	}
	return t
})

// syncTLB points the handlers' fast paths at Mem's TLBs, or at missTLB
// when an observer must see every access (it has not set Pred). Run calls
// it on entry; Obs, Pred and Mem change only between runs.
func (c *CPU) syncTLB() {
	if c.Obs != nil && c.Pred == nil && !c.blind() {
		t := missTLB()
		c.rtlb, c.wtlb = t, t
	} else {
		c.rtlb, c.wtlb = c.Mem.rtlb, c.Mem.wtlb
	}
}

// load128 reads 16 bytes (two observed 8-byte reads). Its fast path
// takes both halves with one TLB check and, while recording, both
// prediction checks inline (memcpy and memset move most of their bytes
// this way).
func (c *CPU) load128(a uint64) XMM {
	if e := &c.rtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-16 {
		lo := binary.LittleEndian.Uint64(e.page.Data[a&pageMask:])
		hi := binary.LittleEndian.Uint64(e.page.Data[a&pageMask+8:])
		if p := c.Pred; p == nil {
			return XMM{lo, hi}
		} else if p.Hit(a, 8, lo) {
			if p.Hit(a+8, 8, hi) {
				return XMM{lo, hi}
			}
			return XMM{lo, c.loadSlow(a+8, 8)}
		}
		return XMM{c.loadSlow(a, 8), c.load64(a + 8)}
	}
	if a&pageMask > PageSize-16 {
		// Crosses a page: check both before observing either half, so
		// a fault is precise (and at the first inaccessible byte).
		c.Mem.translate(a, false)
		c.Mem.translate((a+15)&^pageMask, false)
	}
	return XMM{c.load64(a), c.load64(a + 8)}
}

// store128 writes 16 bytes (two observed 8-byte writes), with a fast path
// like load128's.
func (c *CPU) store128(a uint64, v XMM) {
	if e := &c.wtlb[(a>>PageShift)&tlbMask]; e.tag == a>>PageShift && a&pageMask <= PageSize-16 {
		binary.LittleEndian.PutUint64(e.page.Data[a&pageMask:], v[0])
		binary.LittleEndian.PutUint64(e.page.Data[a&pageMask+8:], v[1])
		if p := c.Pred; p != nil {
			if !p.Put(a, 8, v[0]) {
				c.storeSlow(a, 8, v[0])
			}
			if !p.Put(a+8, 8, v[1]) {
				c.storeSlow(a+8, 8, v[1])
			}
		}
		return
	}
	if a&pageMask > PageSize-16 {
		// Crosses a page: check both first so a fault leaves memory
		// unchanged.
		c.Mem.translate(a, true)
		c.Mem.translate((a+15)&^pageMask, true)
	}
	c.store64(a, v[0])
	c.store64(a+8, v[1])
}

// LoadBytes reads n bytes of guest memory into b through the observer (for
// fxrstor, x87 80-bit loads and the like).
func (c *CPU) LoadBytes(a uint64, b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := c.load64(a + uint64(i))
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for ; i < len(b); i++ {
		b[i] = byte(c.load(a+uint64(i), 1))
	}
}

// StoreBytes writes b to guest memory through the observer.
func (c *CPU) StoreBytes(a uint64, b []byte) {
	if len(b) > 0 {
		c.Mem.Write8(a+uint64(len(b))-1, c.Mem.Read8(a+uint64(len(b))-1))
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		var v uint64
		for j := 0; j < 8; j++ {
			v |= uint64(b[i+j]) << (8 * j)
		}
		c.store64(a+uint64(i), v)
	}
	for ; i < len(b); i++ {
		c.store(a+uint64(i), 1, uint64(b[i]))
	}
}

// push and pop use the 64-bit stack.
func (c *CPU) push(v uint64) {
	sp := c.R[RSP] - 8
	c.store64(sp, v)
	c.R[RSP] = sp
}

func (c *CPU) pop() uint64 {
	v := c.load64(c.R[RSP])
	c.R[RSP] += 8
	return v
}
