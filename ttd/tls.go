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
// below the thread's fs_base by the block's static offset. Those of
// shared libraries: ModuleTLSAddress.
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

// ModuleTLSAddress is the address of offset o in the thread-local
// storage block of the module loaded at base (a shared library; gdb's
// qGetTLSAddr names it by the lm that qXfer:libraries-svr4 gave it) for
// thread tid at the current position. glibc on x86-64 keeps a thread's
// dynamic thread vector at fs_base+8: entry modid (16 bytes each) points
// at the module's block, and module ids go, from 1, to the modules with
// a PT_TLS segment in the order they were loaded, the executable first.
func (s *Session) ModuleTLSAddress(tid int, base, o uint64) (uint64, error) {
	r, err := s.Registers(tid)
	if err != nil {
		return 0, err
	}
	if r.FSBase == 0 {
		return 0, fmt.Errorf("thread %d has no thread pointer (fs_base) yet at position %d", r.Tid, s.pos)
	}
	mods, err := s.Modules()
	if err != nil {
		return 0, err
	}
	modid, name := 0, ""
	for _, m := range mods {
		if m.Path == "" || m.Path[0] == '[' || m.Position > s.pos {
			continue
		}
		has, err := hasTLS(m)
		if err != nil {
			return 0, fmt.Errorf("thread-local storage of %s: %w", m.Path, err)
		}
		if has {
			modid++
		}
		if m.LoadAddr == base {
			if !has {
				return 0, fmt.Errorf("%s has no thread-local storage", m.Path)
			}
			name = m.Path
			break
		}
	}
	if name == "" {
		return 0, fmt.Errorf("no module is loaded at %#x at position %d", base, s.pos)
	}
	read := func(addr uint64, what string) (uint64, error) {
		m, err := s.ReadMemory(addr, 8)
		if err != nil {
			return 0, err
		}
		v, ok := m.Uint(8)
		if !ok {
			return 0, fmt.Errorf("%s of thread %d (at %#x) is not in the recording at position %d", what, r.Tid, addr, s.pos)
		}
		return v, nil
	}
	dtv, err := read(r.FSBase+8, "the dynamic thread vector pointer")
	if err != nil {
		return 0, err
	}
	block, err := read(dtv+16*uint64(modid), fmt.Sprintf("entry %d of the dynamic thread vector", modid))
	if err != nil {
		return 0, err
	}
	if block == 0 || block == ^uint64(0) {
		return 0, fmt.Errorf("the thread-local block of %s is not allocated for thread %d at position %d (glibc allocates a dlopened module's block on first use)", name, r.Tid, s.pos)
	}
	return block + o, nil
}

// hasTLS reports whether module m has a thread-local storage segment.
func hasTLS(m ModuleFile) (bool, error) {
	var f *elf.File
	var err error
	if m.Data != nil {
		f, err = elf.NewFile(bytes.NewReader(m.Data))
	} else {
		f, err = elf.Open(m.Path)
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_TLS && p.Memsz > 0 {
			return true, nil
		}
	}
	return false, nil
}
