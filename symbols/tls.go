package symbols

import (
	"debug/elf"
	"errors"
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
