package symbols

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// SystemTap static probes (USDT): the .note.stapsdt notes that
// <sys/sdt.h>'s STAP_PROBE macros leave in a binary (glibc's setjmp and
// memory_* probes when it is built with --enable-systemtap, libstdc++'s
// throw/catch/rethrow, python's function__entry...). Each note is
//
//	pc, base, semaphore      three 8-byte addresses
//	provider\0 name\0 args\0
//
// where pc is the probe's nop, base the link-time address of the
// .stapsdt.base section (pc moves with it when a prelinker moved the
// section), semaphore a 2-byte counter the probe site tests (0: none),
// and args the operands the probe passes, "SIZE@OPERAND" separated by
// spaces in AT&T syntax (8@%rdi, -4@-20(%rbp), 4@$42, 8@sym(%rip)),
// SIZE in bytes and negative when signed.

// USDTProbe is one static probe of a module, at its runtime address.
type USDTProbe struct {
	Module     string // the module's path
	Provider   string
	Name       string
	Addr       uint64 // the probe's nop
	Semaphore  uint64 // runtime address of its semaphore, 0 if none
	ArgsString string // as the note spells them
	Args       []USDTArg
}

// USDTArgKind says where a probe argument lives.
type USDTArgKind uint8

const (
	USDTReg USDTArgKind = iota + 1 // a register: Reg
	USDTImm                        // a constant: Disp
	USDTMem                        // memory at Disp + Base + Index*Scale (Base, Index may be "")
)

// USDTArg is one decoded probe argument. Register names are the 64-bit
// registers' ("rax", "r8", "rip"); RegBytes and RegHigh say which part
// of the register the operand names (4 for %eax, 1 with RegHigh for %ah).
type USDTArg struct {
	Size     int  // bytes: 1, 2, 4 or 8
	Signed   bool // the size was written negative
	Kind     USDTArgKind
	Reg      string // USDTReg: the register
	RegBytes int
	RegHigh  bool
	Disp     int64 // USDTImm: the value; USDTMem: the displacement
	Base     string
	Index    string
	Scale    int64
	Text     string // as written
	symbol   string // sym(%rip) before it is resolved
}

// USDTProbes lists the static probes of every module, in module load
// order and then in the order of the notes.
func (t *Table) USDTProbes() []USDTProbe {
	var out []USDTProbe
	for _, img := range t.imageList() {
		out = append(out, img.usdt...)
	}
	return out
}

// ReadUSDTNotes decodes the .note.stapsdt section of an ELF file at
// link-time addresses (bias 0). A malformed note is an error giving its
// offset in the section.
func ReadUSDTNotes(f *elf.File) ([]USDTProbe, error) {
	return readUSDT(f, "", 0, nil)
}

// readUSDT decodes the notes; sym resolves a symbolic operand
// (sym(%rip)) to its link-time address.
func readUSDT(f *elf.File, path string, bias uint64, sym func(string) (uint64, bool)) ([]USDTProbe, error) {
	sec := f.Section(".note.stapsdt")
	if sec == nil || sec.Type != elf.SHT_NOTE {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf(".note.stapsdt: %w", err)
	}
	var baseAddr uint64
	haveBase := false
	if b := f.Section(".stapsdt.base"); b != nil {
		baseAddr, haveBase = b.Addr, true
	}
	var out []USDTProbe
	err = walkNotes(data, f.ByteOrder, func(off uint64, owner string, typ uint32, desc []byte) error {
		if owner != "stapsdt" || typ != 3 {
			return nil
		}
		p, err := decodeUSDT(desc, f.ByteOrder)
		if err != nil {
			return fmt.Errorf(".note.stapsdt at offset %#x: %w", off, err)
		}
		if haveBase && p.Addr != 0 {
			// The note holds the base it was linked with; a prelinker
			// that moved .stapsdt.base moved the probes with it.
			p.Addr += baseAddr - p.baseLink
			if p.Semaphore != 0 {
				p.Semaphore += baseAddr - p.baseLink
			}
		}
		for i := range p.Args {
			a := &p.Args[i]
			if a.Kind == USDTMem && a.Base == "rip" && a.symbol != "" {
				// sym(%rip) names the symbol's address itself.
				if sym == nil {
					a.Base = ""
					continue // link-time listing: keep the text only
				}
				addr, ok := sym(a.symbol)
				if !ok {
					return fmt.Errorf(".note.stapsdt at offset %#x: argument %q: no symbol %q in the module", off, a.Text, a.symbol)
				}
				a.Base, a.Disp = "", int64(addr+bias)+a.Disp
			}
			a.symbol = ""
		}
		pr := p.USDTProbe
		pr.Module = path
		pr.Addr += bias
		if pr.Semaphore != 0 {
			pr.Semaphore += bias
		}
		out = append(out, pr)
		return nil
	})
	return out, err
}

// walkNotes calls fn for each note of an SHT_NOTE section's bytes, with
// its offset; a note running past the section is an error giving it.
func walkNotes(data []byte, bo binary.ByteOrder, fn func(off uint64, owner string, typ uint32, desc []byte) error) error {
	align4 := func(n uint64) uint64 { return (n + 3) &^ 3 }
	for off := uint64(0); off < uint64(len(data)); {
		if uint64(len(data))-off < 12 {
			return fmt.Errorf(".note.stapsdt at offset %#x: truncated note header", off)
		}
		namesz, descsz, typ := uint64(bo.Uint32(data[off:])), uint64(bo.Uint32(data[off+4:])), bo.Uint32(data[off+8:])
		nameOff := off + 12
		descOff := nameOff + align4(namesz)
		if namesz > uint64(len(data)) || descsz > uint64(len(data)) || descOff+descsz > uint64(len(data)) {
			return fmt.Errorf(".note.stapsdt at offset %#x: note (name %d bytes, descriptor %d bytes) runs past the section's %d bytes", off, namesz, descsz, len(data))
		}
		owner := strings.TrimRight(string(data[nameOff:nameOff+namesz]), "\x00")
		if err := fn(off, owner, typ, data[descOff:descOff+descsz]); err != nil {
			return err
		}
		off = descOff + align4(descsz)
	}
	return nil
}

type rawUSDT struct {
	USDTProbe
	baseLink uint64
}

func decodeUSDT(d []byte, bo binary.ByteOrder) (rawUSDT, error) {
	var p rawUSDT
	if len(d) < 24 {
		return p, fmt.Errorf("descriptor of %d bytes, want at least 24", len(d))
	}
	p.Addr, p.baseLink, p.Semaphore = bo.Uint64(d), bo.Uint64(d[8:]), bo.Uint64(d[16:])
	rest := d[24:]
	var strs [3]string
	for i := range strs {
		n := strings.IndexByte(string(rest), 0)
		if n < 0 {
			if i == 2 { // an argument string may end with the descriptor
				strs[i], rest = string(rest), nil
				break
			}
			return p, fmt.Errorf("unterminated %s string", [3]string{"provider", "name", "arguments"}[i])
		}
		strs[i], rest = string(rest[:n]), rest[n+1:]
	}
	p.Provider, p.Name, p.ArgsString = strs[0], strs[1], strs[2]
	args, err := ParseUSDTArgs(p.ArgsString)
	if err != nil {
		return p, fmt.Errorf("probe %s:%s: %w", p.Provider, p.Name, err)
	}
	p.Args = args
	return p, nil
}

// ParseUSDTArgs decodes a note's argument string ("8@%rdi -4@-20(%rbp)").
func ParseUSDTArgs(s string) ([]USDTArg, error) {
	var out []USDTArg
	for _, f := range strings.Fields(s) {
		a, err := parseUSDTArg(f)
		if err != nil {
			return nil, fmt.Errorf("argument %d %q: %w", len(out), f, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func parseUSDTArg(f string) (USDTArg, error) {
	a := USDTArg{Text: f, Size: 8}
	op := f
	if at := strings.IndexByte(f, '@'); at >= 0 {
		n, err := strconv.Atoi(f[:at])
		if err != nil {
			return a, fmt.Errorf("bad size %q", f[:at])
		}
		if n < 0 {
			a.Signed, n = true, -n
		}
		switch n {
		case 1, 2, 4, 8:
		default:
			return a, fmt.Errorf("size %d is not 1, 2, 4 or 8", n)
		}
		a.Size, op = n, f[at+1:]
	}
	switch {
	case op == "":
		return a, fmt.Errorf("no operand")
	case op[0] == '%':
		reg, bytes, high, ok := usdtReg(op[1:])
		if !ok {
			return a, fmt.Errorf("unknown register %q", op)
		}
		a.Kind, a.Reg, a.RegBytes, a.RegHigh = USDTReg, reg, bytes, high
		return a, nil
	case op[0] == '$':
		v, err := parseUSDTInt(op[1:])
		if err != nil {
			return a, fmt.Errorf("bad constant %q", op)
		}
		a.Kind, a.Disp = USDTImm, v
		return a, nil
	}
	a.Kind = USDTMem
	paren := strings.IndexByte(op, '(')
	disp := op
	if paren >= 0 {
		if !strings.HasSuffix(op, ")") {
			return a, fmt.Errorf("unbalanced parenthesis")
		}
		disp = op[:paren]
		parts := strings.Split(op[paren+1:len(op)-1], ",")
		if len(parts) > 3 {
			return a, fmt.Errorf("too many address parts")
		}
		for i, part := range parts {
			part = strings.TrimSpace(part)
			switch i {
			case 0, 1:
				if part == "" {
					continue
				}
				if part[0] != '%' {
					return a, fmt.Errorf("%q is not a register", part)
				}
				reg, bytes, high, ok := usdtReg(part[1:])
				if !ok || bytes != 8 && reg != "rip" || high {
					return a, fmt.Errorf("unknown address register %q", part)
				}
				if i == 0 {
					a.Base = reg
				} else {
					a.Index = reg
				}
			case 2:
				sc, err := strconv.Atoi(part)
				if err != nil || sc != 1 && sc != 2 && sc != 4 && sc != 8 {
					return a, fmt.Errorf("bad scale %q", part)
				}
				a.Scale = int64(sc)
			}
		}
		if a.Index != "" && a.Scale == 0 {
			a.Scale = 1
		}
	}
	if disp != "" {
		if v, err := parseUSDTInt(disp); err == nil {
			a.Disp = v
		} else {
			// sym, sym+8, sym-8
			name, off := disp, int64(0)
			if i := strings.LastIndexAny(disp, "+-"); i > 0 {
				v, err := parseUSDTInt(disp[i:])
				if err != nil {
					return a, fmt.Errorf("bad displacement %q", disp)
				}
				name, off = disp[:i], v
			}
			if a.Base != "rip" && a.Base != "" || a.Index != "" {
				return a, fmt.Errorf("symbolic displacement %q with a base register other than %%rip", disp)
			}
			a.symbol, a.Disp = name, off
			if a.Base == "" {
				a.Base = "rip"
			}
		}
	}
	return a, nil
}

func parseUSDTInt(s string) (int64, error) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	} else if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, err
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

// usdtReg maps an AT&T register name (without %) to its 64-bit register
// and the part of it named.
func usdtReg(n string) (reg string, bytes int, high bool, ok bool) {
	legacy := []string{"ax", "bx", "cx", "dx"}
	for _, l := range legacy {
		r := "r" + l
		switch n {
		case "r" + l:
			return r, 8, false, true
		case "e" + l:
			return r, 4, false, true
		case l:
			return r, 2, false, true
		case l[:1] + "l":
			return r, 1, false, true
		case l[:1] + "h":
			return r, 1, true, true
		}
	}
	for _, l := range []string{"si", "di", "bp", "sp"} {
		r := "r" + l
		switch n {
		case "r" + l:
			return r, 8, false, true
		case "e" + l:
			return r, 4, false, true
		case l:
			return r, 2, false, true
		case l + "l":
			return r, 1, false, true
		}
	}
	if n == "rip" {
		return "rip", 8, false, true
	}
	if strings.HasPrefix(n, "r") {
		num, suffix := n[1:], ""
		for _, sfx := range []string{"d", "w", "b"} {
			if strings.HasSuffix(num, sfx) {
				num, suffix = strings.TrimSuffix(num, sfx), sfx
			}
		}
		if k, err := strconv.Atoi(num); err == nil && k >= 8 && k <= 15 && num == strconv.Itoa(k) {
			return "r" + num, map[string]int{"": 8, "d": 4, "w": 2, "b": 1}[suffix], false, true
		}
	}
	return "", 0, false, false
}

// readUSDT loads the module's static probes; a malformed note costs the
// probes after it and leaves a warning.
func (img *image) readUSDT() {
	sym := func(name string) (uint64, bool) {
		if s := img.symNames[name]; s != nil {
			return s.addr - img.bias, true
		}
		return 0, false
	}
	ps, err := readUSDT(img.file, img.path, img.bias, sym)
	if err != nil {
		img.warnf("%v", err)
	}
	img.usdt = ps
}
