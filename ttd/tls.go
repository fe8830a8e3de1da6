package ttd

import (
	"bytes"
	"debug/elf"
	"fmt"

	"ttd/symbols"
)

// TLSAddress is the address of offset o in the executable's
// thread-local storage block for thread tid at the current position
// (DW_OP_form_tls_address of a __thread variable of the program):
// below the thread's fs_base by the block's static offset. Thread-local
// variables of shared libraries are not supported yet.
func (s *Session) TLSAddress(tid int, o uint64) (uint64, error) {
	r, err := s.Registers(tid)
	if err != nil {
		return 0, err
	}
	if r.FSBase == 0 {
		return 0, fmt.Errorf("thread %d has no thread pointer (fs_base) yet at position %d", r.Tid, s.pos)
	}
	off, err := s.execTLSOffset()
	if err != nil {
		return 0, err
	}
	return r.FSBase - off + o, nil
}

func (s *Session) execTLSOffset() (uint64, error) {
	mods, err := s.Modules()
	if err != nil {
		return 0, err
	}
	for _, m := range mods {
		if m.Path == "" || m.Path[0] == '[' {
			continue
		}
		var f *elf.File
		if m.Data != nil {
			f, err = elf.NewFile(bytes.NewReader(m.Data))
		} else {
			f, err = elf.Open(m.Path)
		}
		if err != nil {
			return 0, fmt.Errorf("thread-local storage of %s: %w", m.Path, err)
		}
		defer f.Close()
		off, err := symbols.ExecTLSOffset(f)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", m.Path, err)
		}
		return off, nil
	}
	return 0, fmt.Errorf("the recording names no executable")
}
