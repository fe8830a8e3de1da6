package x86

import "unsafe"

// setSyncInner keeps h, a static handler (staticHandler), in in's third
// operand's Imm as its function value's address, for syncStatic: the
// garbage collector need not see it (it is in the binary's image), and
// a code file may hold it (its stamp names the binary).
func setSyncInner(in *Inst, h Handler) { in.Args[2].Imm = uint64(handlerAddr(h)) }

// syncInnerOf is the handler setSyncInner kept in in.
func syncInnerOf(in *Inst) Handler {
	p := uintptr(in.Args[2].Imm)
	return *(*Handler)(unsafe.Pointer(&p))
}
