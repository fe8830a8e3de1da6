package symbols

import (
	"debug/elf"
	"errors"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// ErrNoTLS is returned for a module without thread-local storage.
var ErrNoTLS = errors.New("no thread-local storage (PT_TLS)")

// ExecTLSOffset is how far below the thread pointer (fs_base on x86-64)
// the executable's thread-local storage block starts, as glibc and musl
// lay out the static TLS of x86-64 (variant II): the executable's block
// is the first, just below the thread control block, its size rounded
// up to its alignment keeping the first byte's offset in the alignment
// (glibc's _dl_determine_tlsoffset). A DW_OP_form_tls_address offset o
// of the executable's variables is then at fs_base - ExecTLSOffset + o.
func ExecTLSOffset(f *elf.File) (uint64, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_TLS {
			continue
		}
		align := max(p.Align, 1)
		firstbyte := (-p.Vaddr) & (align - 1)
		return roundUp(p.Memsz-firstbyte, align) + firstbyte, nil
	}
	return 0, ErrNoTLS
}

func roundUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// globalValue is the value of global g of type typ: at its address, or
// for a thread-local variable in the frame's thread's block.
func (c *evalCtx) globalValue(g *globalVar, typ godwarf.Type) value {
	if !g.tls {
		return value{typ: typ, addr: g.addr, inMem: true}
	}
	if c.frame == nil || c.frame.TP == 0 {
		return value{typ: typ, err: fmt.Errorf("thread-local %s: no thread here", g.name)}
	}
	if imgs := c.t.imageList(); len(imgs) == 0 || imgs[0] != g.img {
		// A shared library's block is found through the thread's
		// dynamic thread vector, in its memory: the caller's job.
		if c.frame.ModuleTLS == nil {
			return value{typ: typ, err: fmt.Errorf("thread-local %s of %s: no way to find a library's thread-local block here", g.name, g.img.path)}
		}
		a, err := c.frame.ModuleTLS(g.img.loadAddr, g.addr)
		if err != nil {
			return value{typ: typ, err: fmt.Errorf("thread-local %s: %w", g.name, err)}
		}
		return value{typ: typ, addr: a, inMem: true}
	}
	if g.img.tlsErr != nil {
		return value{typ: typ, err: fmt.Errorf("thread-local %s: %w", g.name, g.img.tlsErr)}
	}
	return value{typ: typ, addr: c.frame.TP - g.img.tlsOff + g.addr, inMem: true}
}
