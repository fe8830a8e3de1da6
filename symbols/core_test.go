package symbols

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// coreFile is what the tests need from a core file written by gdb's
// gcore: the threads' registers, the memory, and the mapped files.
type coreFile struct {
	threads []Regs
	segs    []coreSeg
	files   []coreMapping
}

type coreSeg struct {
	addr, memsz uint64
	data        []byte
}

type coreMapping struct {
	start, end, off uint64
	path            string
}

const (
	ntPrstatus = 1
	ntFile     = 0x46494c45
	prRegOff   = 112 // offsetof(struct elf_prstatus, pr_reg) on x86-64
)

// userRegs is the order of struct user_regs_struct, as Regs indexes.
var userRegs = []int{R15, R14, R13, R12, RBP, RBX, R11, R10, R9, R8, RAX, RCX, RDX, RSI, RDI, -1, RIP, -1, -1, RSP}

func readCore(path string) (*coreFile, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Type != elf.ET_CORE {
		return nil, errors.New("not a core file")
	}
	c := &coreFile{}
	for _, p := range f.Progs {
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			return nil, err
		}
		switch p.Type {
		case elf.PT_LOAD:
			c.segs = append(c.segs, coreSeg{p.Vaddr, p.Memsz, data})
		case elf.PT_NOTE:
			if err := c.parseNotes(data); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(c.segs, func(i, j int) bool { return c.segs[i].addr < c.segs[j].addr })
	return c, nil
}

func (c *coreFile) parseNotes(b []byte) error {
	le := binary.LittleEndian
	for len(b) >= 12 {
		namesz, descsz, typ := le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:])
		off := 12 + (int(namesz)+3)&^3
		end := off + int(descsz)
		if end > len(b) {
			return errors.New("truncated note")
		}
		desc := b[off:end]
		switch typ {
		case ntPrstatus:
			if len(desc) < prRegOff+len(userRegs)*8 {
				return errors.New("short NT_PRSTATUS")
			}
			var r Regs
			for i, idx := range userRegs {
				if idx >= 0 {
					r[idx] = le.Uint64(desc[prRegOff+8*i:])
				}
			}
			c.threads = append(c.threads, r)
		case ntFile:
			n := le.Uint64(desc)
			page := le.Uint64(desc[8:])
			names := bytes.Split(desc[16+24*n:], []byte{0})
			for i := uint64(0); i < n && int(i) < len(names); i++ {
				e := desc[16+24*i:]
				c.files = append(c.files, coreMapping{le.Uint64(e), le.Uint64(e[8:]), le.Uint64(e[16:]) * page, string(names[i])})
			}
		}
		b = b[(end+3)&^3:]
	}
	return nil
}

// mem reads the core's memory; bytes of segments gcore left out (or
// beyond a segment's file size) are reported unknown.
func (c *coreFile) mem(addr uint64, buf []byte) ([]bool, error) {
	known := make([]bool, len(buf))
	mapped, all := false, true
	for _, s := range c.segs {
		if addr+uint64(len(buf)) <= s.addr || addr >= s.addr+s.memsz {
			continue
		}
		mapped = true
		for i := range buf {
			a := addr + uint64(i)
			if a >= s.addr && a-s.addr < uint64(len(s.data)) {
				buf[i] = s.data[a-s.addr]
				known[i] = true
			}
		}
	}
	if !mapped {
		return nil, fmt.Errorf("address %#x not mapped", addr)
	}
	for _, k := range known {
		all = all && k
	}
	if all {
		return nil, nil
	}
	return known, nil
}

// modules returns one Module per mapped file, loaded where its offset-0
// mapping starts.
func (c *coreFile) modules() []Module {
	var out []Module
	seen := map[string]bool{}
	for _, m := range c.files {
		if m.off == 0 && !seen[m.path] {
			seen[m.path] = true
			out = append(out, Module{Path: m.path, LoadAddr: m.start})
		}
	}
	return out
}

// thread returns the registers of the thread stopped at pc.
func (c *coreFile) thread(pc uint64) (Regs, bool) {
	for _, r := range c.threads {
		if r[RIP] == pc {
			return r, true
		}
	}
	return Regs{}, false
}
