package x86

import (
	"fmt"
	"reflect"

	"golang.org/x/arch/x86/x86asm"
)

// maxBlockInsts bounds a block's length.
const maxBlockInsts = 64

// Builder chooses the handler for a decoded instruction, specialised by its
// operand forms. It returns nil when the form is not implemented.
type Builder func(in *Inst) Handler

var builders [x86asm.Op(4096)]Builder
var endsBlock [x86asm.Op(4096)]bool

// register installs a builder for op.
func register(op x86asm.Op, b Builder) {
	if builders[op] != nil {
		panic(fmt.Sprintf("x86: %v registered twice", op))
	}
	builders[op] = b
}

// handle installs one handler for every form of op.
func handle(op x86asm.Op, h Handler) { register(op, func(*Inst) Handler { return h }) }

// terminator marks ops that end a block (control transfers, exits).
func terminator(ops ...x86asm.Op) {
	for _, op := range ops {
		endsBlock[op] = true
	}
}

// Implemented reports whether op has a handler (for tests and tools).
func Implemented(op x86asm.Op) bool { return builders[op] != nil }

var regTable [256]struct {
	kind, reg, size uint8
}

func init() {
	set := func(first x86asm.Reg, n int, kind, size uint8) {
		for i := 0; i < n; i++ {
			regTable[int(first)+i] = struct{ kind, reg, size uint8 }{kind, uint8(i), size}
		}
	}
	set(x86asm.AL, 4, KReg, 1)
	for i := 0; i < 4; i++ {
		regTable[int(x86asm.AH)+i] = struct{ kind, reg, size uint8 }{KReg8H, uint8(i), 1}
	}
	for i := 0; i < 12; i++ {
		regTable[int(x86asm.SPB)+i] = struct{ kind, reg, size uint8 }{KReg, uint8(4 + i), 1}
	}
	set(x86asm.AX, 16, KReg, 2)
	set(x86asm.EAX, 16, KReg, 4)
	set(x86asm.RAX, 16, KReg, 8)
	set(x86asm.F0, 8, KST, 10)
	set(x86asm.M0, 8, KMMX, 8)
	set(x86asm.X0, 16, KXMM, 16)
	set(x86asm.ES, 6, KSeg, 2)
}

// fetch reads up to 15 code bytes at pc into buf, checking execute
// permission; it returns how many bytes are readable.
func (cc *CodeCache) fetch(pc uint64, buf []byte) int {
	var f pageFetcher
	return f.fetch(cc.mem, pc, buf)
}

// pageFetcher fetches the code of one block: it looks each page up once
// rather than once per instruction (a map lookup each: about 1.5% of
// `ttd run python3 -c pass`, 230,000 instructions in 20,000 blocks). It
// lives only while decodeBlock runs, when no guest code runs and no
// page is unmapped or protected, so the page it keeps stays right.
type pageFetcher struct {
	pn   uint64
	e    pte
	have bool
}

// fetch is CodeCache.fetch through f's page.
func (f *pageFetcher) fetch(m *Memory, pc uint64, buf []byte) int {
	n := 0
	for n < len(buf) {
		a := pc + uint64(n)
		if pn := a >> PageShift; !f.have || f.pn != pn {
			f.pn, f.e, f.have = pn, m.at(pn), true
		}
		if f.e.page == nil || f.e.perm&PermExec == 0 {
			break
		}
		n += copy(buf[n:], f.e.page.Data[a&pageMask:])
	}
	return n
}

// decodeBlock decodes the block starting at pc. A fetch fault at pc
// itself panics with *Fault; later ones end the block early.
func (cc *CodeCache) decodeBlock(pc uint64) *Block {
	if cc.store.active() {
		if b := cc.store.take(cc, pc); b != nil {
			cc.Shared++
			return b
		}
	}
	if cc.file != nil {
		if b := cc.file.take(cc, pc); b != nil {
			cc.FromFile++
			if StatsOn {
				statCount(&stats.fromFile, 1)
			}
			if cc.store.active() {
				cc.store.keep(cc, b)
			}
			return b
		}
	}
	b := &Block{PC: pc}
	var buf [16]byte
	// Decode into the cache's scratch buffers and copy the result once:
	// growing the block's slices instruction by instruction was a
	// quarter of the time of short programs (decoding dominates them).
	b.Insts, cc.code = cc.insts[:0], cc.code[:0]
	code := cc.code
	at := pc
	var reused *Block // the block whose instructions from pc b copies
	var pages pageFetcher
	if b2, k := cc.containing(pc); b2 != nil {
		// pc is inside a block already decoded (the target of a jump
		// into code that another block ran through): the same bytes
		// decode to the same instructions, and a block from pc ends
		// where b2 ends (see containing).
		for _, in := range b2.Insts[k:] {
			in.ID = handlerID(in.Fn) // markDeadFlags and markFused start afresh
			b.Insts = append(b.Insts, in)
		}
		code = append(code, b2.Bytes[pc-b2.PC:]...)
		at = b2.End
		reused = b2
		cc.Reused += uint64(len(b2.Insts) - k)
		if StatsOn {
			statCount(&stats.reused, uint64(len(b2.Insts)-k))
		}
	}
	for reused == nil && len(b.Insts) < maxBlockInsts {
		n := pages.fetch(cc.mem, at, buf[:15])
		if n == 0 {
			if at == pc {
				p := cc.mem.PageAt(pc >> PageShift)
				panic(&Fault{Addr: pc, Exec: true, Mapped: p != nil})
			}
			b.truncated = true
			break
		}
		b.Insts = append(b.Insts, Inst{})
		in := &b.Insts[len(b.Insts)-1]
		decodeInto(in, at, buf[:n])
		if in.Len == 0 {
			// Truncated by an unreadable page after pc: stop before it,
			// unless it is the first instruction (then it faults).
			b.Insts = b.Insts[:len(b.Insts)-1]
			if at == pc {
				cc.insts = b.Insts[:0]
				panic(&Fault{Addr: at + uint64(n), Exec: true})
			}
			b.truncated = true
			break
		}
		gate(in, cc.Features)
		code = append(code, buf[:in.Len]...)
		at += uint64(in.Len)
		if in.Flags&InstEndsBlock != 0 {
			break
		}
		// Keep blocks within two pages.
		if (at>>PageShift)-b.firstPage() >= 1 {
			break
		}
	}
	b.End = at
	cc.insts, cc.code = b.Insts[:0], code[:0]
	markDeadFlags(b)
	markFused(b)
	if reused != nil && sameIDs(b.Insts, reused.Insts[len(reused.Insts)-len(b.Insts):]) {
		// The instructions from pc to the end of the block they came
		// from are the same as that block's, variants and all (a
		// suffix's flags die and its pairs fuse as they did there,
		// unless the first was the second of a pair): share them
		// rather than copy. Nothing writes an instruction after
		// decodeBlock. (16% of the instructions of python3 -c pass
		// were such copies.)
		n := len(reused.Insts)
		b.Insts = reused.Insts[n-len(b.Insts) : n : n]
		n = len(reused.Bytes)
		code = reused.Bytes[n-len(code) : n : n]
	} else {
		b.Insts = keep(&cc.instSlab, b.Insts, instSlabLen)
		code = keep(&cc.codeSlab, code, codeSlabLen)
	}
	b.setsRIP = len(b.Insts) > 0 && b.Insts[len(b.Insts)-1].Flags&InstSetsRIP != 0
	b.Bytes = code
	cc.Decodes++
	if cc.file != nil && cc.cacheable(b) {
		b.forFile = true
		cc.FileMisses++
	}
	if cc.store.active() {
		cc.store.keep(cc, b)
	}
	return b
}

// sameIDs reports whether a and b, instructions decoded from the same
// bytes, are alike: markDeadFlags and markFused change only their IDs.
func sameIDs(a, b []Inst) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// Decoded blocks take their instructions and code bytes from slabs
// rather than an allocation each: python3 -c pass decodes 20,000 blocks,
// and a small allocation of instructions sets up the heap's pointer
// bitmap for each (a large one, a slab, has none).
const (
	instSlabLen = 512 // 48 KiB of Inst
	codeSlabLen = 16 << 10
)

// keep copies s to the free end of *slab, starting a slab of n elements
// when that has no room, and returns the copy, whose capacity is its
// length (appending to it cannot reach the next block's).
func keep[T any](slab *[]T, s []T, n int) []T {
	if cap(*slab)-len(*slab) < len(s) {
		*slab = make([]T, 0, n) // (append grows it for a larger s)
	}
	i := len(*slab)
	*slab = append(*slab, s...)
	return (*slab)[i:len(*slab):len(*slab)]
}

// keepZero returns n zeroed elements from the free end of *slab,
// starting a slab of chunk elements when that has no room (a larger n
// gets its own), their capacity their length. Translation state made for
// each adopted block (chaining slots, resume entries) came from a
// makeslice each, 1.8% of a warm python3 -c pass.
func keepZero[T any](slab *[]T, n, chunk int) []T {
	if n > chunk/4 {
		return make([]T, n)
	}
	if cap(*slab)-len(*slab) < n {
		*slab = make([]T, 0, chunk)
	}
	i := len(*slab)
	*slab = (*slab)[:i+n]
	return (*slab)[i : i+n : i+n]
}

// containing returns a valid block that has an instruction starting at pc
// after its first, and that instruction's index, or nil. Such a block
// started on pc's page: a block stops after the first instruction that
// ends on the page after its first (decodeBlock), so no instruction of it
// starts on a later page. A block from pc therefore ends where it does,
// unless it was cut at maxBlockInsts: those are not returned. Only the
// page's most recent blocks are searched, to bound the cost on pages of
// many blocks.
func (cc *CodeCache) containing(pc uint64) (*Block, int) {
	bs := cc.byPage[pc>>PageShift]
	for i := len(bs) - 1; i >= 0 && i >= len(bs)-32; i-- {
		b := bs[i]
		if !b.valid || pc <= b.PC || pc >= b.End || len(b.Insts) >= maxBlockInsts || b.firstPage() != pc>>PageShift {
			continue
		}
		for k := 1; k < len(b.Insts); k++ {
			if b.Insts[k].PC == pc {
				return b, k
			}
		}
	}
	return nil, 0
}

// Decode decodes one instruction at pc from code (for disassemblers and
// tests); Len 0 means the bytes were truncated.
func Decode(pc uint64, code []byte) Inst { return decodeInst(pc, code) }

func decodeInst(pc uint64, code []byte) Inst {
	var in Inst
	decodeInto(&in, pc, code)
	return in
}

// truncated reports whether code, the bytes up to an unreadable page, is
// the start of a valid instruction that needs more of them: the CPU
// faults on the fetch of the page then, not on an invalid opcode.
// x86asm does not always say ErrTruncated: it may decode a lone prefix
// or opcode byte as an invalid instruction of length 1.
func truncated(code []byte) bool {
	var buf [15]byte
	copy(buf[:], code)
	xi, err := x86asm.Decode(buf[:], 64)
	return err == nil && xi.Op != 0 && xi.Len > len(code) || endbrLen(buf[:]) > len(code)
}

// decodeInto decodes the instruction at pc into in, in place: decodeBlock
// decodes into its scratch buffer, so an instruction is not allocated
// (handler builders take its address, which made a local escape).
func decodeInto(in *Inst, pc uint64, code []byte) {
	*in = Inst{PC: pc}
	if fastDecode(in, pc, code) {
		decodeFinish(in)
		return
	}
	decodeSlow(in, pc, code)
}

// decodeSlow is decodeInto through x86asm (and decodeVEX), for the
// instructions the fast decoder defers.
func decodeSlow(in *Inst, pc uint64, code []byte) {
	*in = Inst{PC: pc}
	if decodeVEX(in, pc, code) {
		if in.Len != 0 {
			in.PC = pc
		}
		return
	}
	xi, err := x86asm.Decode(code, 64)
	if len(code) < 15 && (err != nil || xi.Op == 0) && truncated(code) {
		*in = Inst{}
		return
	}
	if err != nil || xi.Len == 0 {
		// x86asm does not know endbr64 and friends (F3 0F 1E xx): with CET
		// off they are NOPs, as are rdssp and the reserved-NOP space; nor
		// the prefetch and hint NOPs 0F 0D /r and 0F 18 /4-7.
		if l := endbrLen(code); l > 0 {
			in.Len = uint8(l)
			in.Op = x86asm.NOP
			in.Fn = opNop
			return
		}
		in.Len = 1
		if xi.Len > 0 {
			in.Len = uint8(xi.Len)
		}
		in.Fn = illegal
		in.Flags = InstEndsBlock
		return
	}
	in.Len = uint8(xi.Len)
	in.Op = xi.Op
	if xi.Op == 0 {
		if l := endbrLen(code); l > 0 {
			in.Len = uint8(l)
			in.Op = x86asm.NOP
			in.Fn = opNop
			return
		}
		in.Fn = illegal
		in.Flags = InstEndsBlock
		return
	}
	in.OpSize = uint8(xi.DataSize / 8)
	if xi.AddrSize == 32 {
		in.Flags |= InstAddr32
	}
	in.MemSize = uint8(xi.MemBytes)
	var seg uint8
	for _, p := range xi.Prefix {
		if p == 0 {
			break
		}
		if p&(x86asm.PrefixImplicit) != 0 {
			continue
		}
		switch p & 0xff {
		case 0xf0:
			in.Lock = true
		case 0xf3:
			in.setRep(RepE)
		case 0xf2:
			in.setRep(RepNE)
		case 0x64:
			seg = SegFS
		case 0x65:
			seg = SegGS
		}
		if p&x86asm.PrefixInvalid != 0 {
			in.Fn = illegal
			in.Flags = InstEndsBlock
			return
		}
	}
	next := pc + uint64(xi.Len)
	for i, a := range xi.Args {
		if a == nil {
			break
		}
		if i == len(in.Args) {
			in.Fn = unimplementedOperand
			in.Flags = InstEndsBlock
			return
		}
		o := &in.Args[i]
		in.NArgs = uint8(i + 1)
		switch a := a.(type) {
		case x86asm.Reg:
			r := regTable[a]
			if r.kind == KNone {
				in.Fn = unimplementedOperand
				in.Flags = InstEndsBlock
				return
			}
			o.Kind, o.Reg, o.Size = r.kind, r.reg, r.size
		case x86asm.Mem:
			o.Kind = KMem
			o.Size = uint8(xi.MemBytes)
			o.Base, o.Index = NoReg, NoReg
			o.Imm = uint64(a.Disp)
			if op := xi.Opcode >> 24; op < 0xa0 || op > 0xa3 {
				// x86asm zero-extends disp32; the CPU sign-extends it
				// (only the moffs forms of mov carry 64-bit addresses).
				o.Imm = uint64(int64(int32(a.Disp)))
			}
			switch a.Base {
			case 0:
			case x86asm.RIP, x86asm.EIP:
				o.Imm += next
			default:
				o.Base = regTable[a.Base].reg
			}
			if a.Index != 0 {
				o.Index = regTable[a.Index].reg
				switch a.Scale {
				case 2:
					o.Scale = 1
				case 4:
					o.Scale = 2
				case 8:
					o.Scale = 3
				}
			}
			switch a.Segment {
			case x86asm.FS:
				o.Seg = SegFS
			case x86asm.GS:
				o.Seg = SegGS
			default:
				o.Seg = seg
			}
			o.A32 = xi.AddrSize == 32
		case x86asm.Imm:
			o.Kind = KImm
			o.Size = in.OpSize
			o.Imm = uint64(int64(a))
		case x86asm.Rel:
			o.Kind = KRel
			o.Imm = next + uint64(int64(a))
			if xi.DataSize == 16 {
				o.Imm &= 0xffff
			}
		}
	}
	in.Aux = xi.Opcode
	decodeFinish(in)
}

// decodeFinish chooses the handler of a decoded instruction (the part of
// decoding the fast decoder and x86asm's share).
func decodeFinish(in *Inst) {
	if endsBlock[in.Op] {
		in.Flags |= InstEndsBlock
	}
	if bld := builders[in.Op]; bld != nil {
		in.Fn = bld(in)
	}
	if in.Fn == nil {
		in.Fn = unimplemented
		in.Flags |= InstEndsBlock
	} else if in.Lock && !lockable(in) {
		// A lock prefix is #UD except on read-modify-write memory forms.
		in.Fn = illegal
		in.Flags |= InstEndsBlock
	} else if isSync(in) {
		wrapSync(in)
	}
	in.ID = handlerID(in.Fn)
}

func funcPC(h Handler) uintptr { return reflect.ValueOf(h).Pointer() }

// isSync reports whether in is a point of inter-thread synchronisation:
// lock-prefixed, implicitly locked (xchg with memory, cmpxchg, xadd) or a
// fence.
func isSync(in *Inst) bool {
	switch in.Op {
	case x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE, x86asm.CMPXCHG, x86asm.CMPXCHG8B,
		x86asm.CMPXCHG16B, x86asm.XADD:
		return true
	case x86asm.XCHG:
		return in.Args[0].Kind == KMem || in.Args[1].Kind == KMem
	}
	return in.Lock
}

// lockable reports whether a lock prefix is allowed on in.
func lockable(in *Inst) bool {
	switch in.Op {
	case x86asm.ADD, x86asm.ADC, x86asm.AND, x86asm.BTC, x86asm.BTR, x86asm.BTS, x86asm.CMPXCHG,
		x86asm.CMPXCHG8B, x86asm.CMPXCHG16B, x86asm.DEC, x86asm.INC, x86asm.NEG, x86asm.NOT, x86asm.OR,
		x86asm.SBB, x86asm.SUB, x86asm.XOR, x86asm.XADD, x86asm.XCHG:
		return in.Args[0].Kind == KMem || in.Op == x86asm.XCHG && in.Args[1].Kind == KMem
	}
	return false
}

// wrapSync makes in, a point of synchronisation (isSync), tell the
// observer of it before it runs (Observer.Sync). A static handler (all
// of them in practice) is wrapped by syncStatic, which finds it in the
// third operand, unused by every synchronising instruction: the
// instruction's handlers are then both static, and a code file keeps
// its block (python3 -c pass has about 650 blocks with a locked
// instruction, which were decoded afresh in every run). Any other is
// wrapped in a closure (syncWrap).
func wrapSync(in *Inst) {
	if in.NArgs < 3 && staticHandler(in.Fn) {
		setSyncInner(in, in.Fn)
		in.Fn = syncStatic
		return
	}
	in.Fn = syncWrap(in.Fn)
}

// syncStatic runs in, which wrapSync wrapped: the observer hears of it
// (Observer.Sync), then its own handler runs.
func syncStatic(c *CPU, in *Inst) {
	if c.Obs != nil {
		c.Obs.Sync(c, in)
	}
	syncInnerOf(in)(c, in)
}

// syncWrap returns h wrapped so that the observer hears of the
// instruction's synchronisation before it runs (Observer.Sync), for a
// handler h that is not static (wrapSync). The wrapper is a closure,
// made per instruction decoded. Not inlined: the closure's code is then
// the same wherever it is made (tests compare it).
//
//go:noinline
func syncWrap(h Handler) Handler {
	return func(c *CPU, in *Inst) {
		if c.Obs != nil {
			c.Obs.Sync(c, in)
		}
		h(c, in)
	}
}

// endbrLen recognises F3 0F 1E /r (endbr64, endbr32, rdssp, reserved NOPs),
// with other prefixes and a REX prefix between F3 and the opcode
// (rdsspq is F3 REX.W 0F 1E /1).
func endbrLen(code []byte) int {
	if n := hintNopLen(code); n > 0 {
		return n // the hint NOPs x86asm rejects: 0F 0D /r, 0F 18 /4-7
	}
	i := 0
	f3 := false
	for i < len(code) && (code[i] == 0x66 || code[i] == 0xf3 || code[i]&0xf0 == 0x40) {
		f3 = f3 || code[i] == 0xf3
		i++
	}
	if f3 && i+2 < len(code) && code[i] == 0x0f && code[i+1] == 0x1e && code[i+2] >= 0xc0 {
		return i + 3
	}
	return 0
}

// hintNopLen decodes 0F 0D /r and 0F 18 /r (after optional prefixes) with
// a register or memory ModRM operand, returning the instruction length.
func hintNopLen(code []byte) int {
	i := 0
	for i < len(code) && (code[i] == 0x66 || code[i] == 0xf2 || code[i] == 0xf3 || code[i]&0xf0 == 0x40) {
		i++
	}
	if i+2 >= len(code) || code[i] != 0x0f || (code[i+1] != 0x0d && code[i+1] != 0x18) {
		return 0
	}
	return modrmEnd(code, i+2)
}

// modrmEnd returns the offset just past the ModRM operand at code[i], or 0.
func modrmEnd(code []byte, i int) int {
	if i >= len(code) {
		return 0
	}
	m := code[i]
	mod, rm := m>>6, m&7
	n := i + 1
	if mod != 3 && rm == 4 {
		if n >= len(code) {
			return 0
		}
		if mod == 0 && code[n]&7 == 5 {
			n += 4
		}
		n++
	}
	switch {
	case mod == 0 && rm == 5:
		n += 4
	case mod == 1:
		n++
	case mod == 2:
		n += 4
	}
	if n > len(code) {
		return 0
	}
	return n
}

func opNop(c *CPU, in *Inst) {}

func illegal(c *CPU, in *Inst) { c.raise(ExitIllegal, ILLIllOpc) }

func unimplemented(c *CPU, in *Inst) {
	c.unimpl(in, in.Op.String())
}

func unimplementedOperand(c *CPU, in *Inst) {
	c.unimpl(in, in.Op.String()+" (operand form)")
}

func (c *CPU) unimpl(in *Inst, mnem string) {
	var buf [15]byte
	n := c.cache.fetch(in.PC, buf[:in.Len])
	panic(exception{reason: ExitUnimplemented, err: &UnimplementedError{PC: in.PC, Bytes: buf[:n], Mnem: mnem}})
}

// Disasm formats the instruction at pc from code in GNU syntax for messages.
func Disasm(pc uint64, code []byte) string {
	if l := endbrLen(code); l > 0 {
		return "endbr64"
	}
	xi, err := x86asm.Decode(code, 64)
	if err != nil {
		return "(bad)"
	}
	return x86asm.GNUSyntax(xi, pc, nil)
}
