package emu

import (
	"debug/elf"
	"encoding/binary"
	"sync"

	"golang.org/x/sys/unix"

	"ttd/internal/linux"
)

// The vDSO. Linux maps a small shared object into every process and
// names it in the auxiliary vector (AT_SYSINFO_EHDR); ld.so adds it to
// the link map as linux-vdso.so.1 (ldd lists it), and libc and Go's
// runtime call its clock_gettime, gettimeofday, time, clock_getres and
// getcpu instead of making the syscalls. The kernel's versions read the
// clock from the [vvar] pages; ttd's make the syscall, so that time
// stays one emulated, recorded fact whichever way a program asks. The
// image is built here (vdsoImage), with the symbols, versions (LINUX_2.6)
// and section headers of the kernel's, so that ld.so, Go's runtime and
// tools that read it (gdb, readelf on a dump) find what they expect.
// The kernel's newer getrandom entry is left out: libc falls back to the
// syscall when the vDSO lacks it.
//
// The mappings are those of Linux 6.18 on x86-64: [vvar] (4 pages),
// [vvar_vclock] (2) and [vdso] (2), placed as the kernel places them with
// randomisation off, in the mmap area just below the interpreter.

// atSysinfoEhdr is the auxiliary vector's key for the vDSO's address.
const atSysinfoEhdr = 33

const (
	vvarPages       = 4
	vvarVclockPages = 2
	vdsoPages       = 2
)

// vdsoFuncs are the functions the vDSO exports, each under its __vdso_
// name (global) and its plain name (weak), and the syscalls they make.
var vdsoFuncs = []struct {
	name string
	nr   uint32
}{
	{"clock_gettime", linux.SysClockGettime},
	{"gettimeofday", linux.SysGettimeofday},
	{"time", linux.SysTime},
	{"clock_getres", linux.SysClockGetres},
	{"getcpu", linux.SysGetcpu},
}

const (
	vdsoSoname  = "linux-vdso.so.1"
	vdsoVersion = "LINUX_2.6"
)

// vdsoImage is the vDSO's ELF image, built once.
var vdsoImage = sync.OnceValue(buildVDSO)

// elfHash is the System V ABI's symbol hash (DT_HASH, vd_hash).
func elfHash(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h = h<<4 + uint32(s[i])
		g := h & 0xf0000000
		if g != 0 {
			h ^= g >> 24
		}
		h &^= g
	}
	return h
}

// buildVDSO lays out the image: ELF header, program headers (PT_LOAD
// over all of it, PT_DYNAMIC), .hash, .dynsym, .dynstr, .gnu.version,
// .gnu.version_d, .dynamic, .text, .shstrtab and the section headers.
// Addresses are offsets from 0, as in the kernel's image, which the
// loaders relocate by where it is mapped.
func buildVDSO() []byte {
	le := binary.LittleEndian
	align := func(b []byte, n int) []byte {
		for len(b)%n != 0 {
			b = append(b, 0)
		}
		return b
	}
	// Strings: the soname, the version, then each function's names.
	dynstr := []byte{0}
	str := func(s string) uint32 {
		off := uint32(len(dynstr))
		dynstr = append(append(dynstr, s...), 0)
		return off
	}
	sonameOff, versionOff := str(vdsoSoname), str(vdsoVersion)
	type sym struct {
		name uint32
		bind elf.SymBind
		fn   int
	}
	syms := []sym{{}} // index 0: the undefined symbol
	for i, f := range vdsoFuncs {
		syms = append(syms, sym{str("__vdso_" + f.name), elf.STB_GLOBAL, i}, sym{str(f.name), elf.STB_WEAK, i})
	}

	const (
		ehdrSize = 64
		phdrSize = 56
		nphdr    = 2
		shdrSize = 64
		textIdx  = 7 // section index of .text
	)
	img := make([]byte, ehdrSize+nphdr*phdrSize)

	hashOff := len(img)
	nsym := len(syms)
	img = le.AppendUint32(img, 1) // nbucket
	img = le.AppendUint32(img, uint32(nsym))
	img = le.AppendUint32(img, 1) // bucket[0]: the chain starts at symbol 1
	for i := 0; i < nsym; i++ {
		next := uint32(i + 1)
		if i == 0 || i == nsym-1 {
			next = 0
		}
		img = le.AppendUint32(img, next)
	}

	img = align(img, 8)
	symOff := len(img)
	img = append(img, make([]byte, 24*nsym)...) // filled once .text's address is known

	strOff := len(img)
	img = append(img, dynstr...)

	img = align(img, 2)
	versymOff := len(img)
	for i := 0; i < nsym; i++ {
		v := uint16(2) // LINUX_2.6
		if i == 0 {
			v = 0
		}
		img = le.AppendUint16(img, v)
	}

	img = align(img, 8)
	verdefOff := len(img)
	verdef := func(flags, ndx uint16, name string, nameOff uint32, last bool) {
		next := uint32(28)
		if last {
			next = 0
		}
		img = le.AppendUint16(img, 1) // vd_version
		img = le.AppendUint16(img, flags)
		img = le.AppendUint16(img, ndx)
		img = le.AppendUint16(img, 1) // vd_cnt
		img = le.AppendUint32(img, elfHash(name))
		img = le.AppendUint32(img, 20) // vd_aux: the Verdaux follows
		img = le.AppendUint32(img, next)
		img = le.AppendUint32(img, nameOff) // vda_name
		img = le.AppendUint32(img, 0)       // vda_next
	}
	verdef(1 /* VER_FLG_BASE */, 1, vdsoSoname, sonameOff, false)
	verdef(0, 2, vdsoVersion, versionOff, true)

	img = align(img, 8)
	dynOff := len(img)
	dyn := func(tag elf.DynTag, v uint64) {
		img = le.AppendUint64(img, uint64(tag))
		img = le.AppendUint64(img, v)
	}
	dyn(elf.DT_SONAME, uint64(sonameOff))
	dyn(elf.DT_HASH, uint64(hashOff))
	dyn(elf.DT_STRTAB, uint64(strOff))
	dyn(elf.DT_SYMTAB, uint64(symOff))
	dyn(elf.DT_STRSZ, uint64(len(dynstr)))
	dyn(elf.DT_SYMENT, 24)
	dyn(elf.DT_VERDEF, uint64(verdefOff))
	dyn(elf.DT_VERDEFNUM, 2)
	dyn(elf.DT_VERSYM, uint64(versymOff))
	dyn(elf.DT_NULL, 0)
	dynSize := len(img) - dynOff

	// .text: each function is "mov $nr, %eax; syscall; ret", 16 bytes apart.
	img = align(img, 16)
	textOff := len(img)
	for _, f := range vdsoFuncs {
		fn := []byte{0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xc3}
		le.PutUint32(fn[1:], f.nr)
		img = append(img, fn...)
		img = align(img, 16)
	}
	textSize := len(img) - textOff
	for i, s := range syms[1:] {
		e := img[symOff+24*(i+1):]
		le.PutUint32(e, s.name)
		e[4] = byte(s.bind)<<4 | byte(elf.STT_FUNC)
		le.PutUint16(e[6:], textIdx)
		le.PutUint64(e[8:], uint64(textOff+16*s.fn))
		le.PutUint64(e[16:], 8)
	}
	loadSize := len(img)

	shstr := []byte{0}
	shname := func(s string) uint32 {
		off := uint32(len(shstr))
		shstr = append(append(shstr, s...), 0)
		return off
	}
	type section struct {
		name                     string
		typ                      elf.SectionType
		flags                    elf.SectionFlag
		off, size                int
		link, info, align, entsz uint32
	}
	const a = elf.SHF_ALLOC
	sections := []section{
		{},
		{".hash", elf.SHT_HASH, a, hashOff, 4 * (2 + 1 + nsym), 2, 0, 8, 4},
		{".dynsym", elf.SHT_DYNSYM, a, symOff, 24 * nsym, 3, 1, 8, 24},
		{".dynstr", elf.SHT_STRTAB, a, strOff, len(dynstr), 0, 0, 1, 0},
		{".gnu.version", elf.SHT_GNU_VERSYM, a, versymOff, 2 * nsym, 2, 0, 2, 2},
		{".gnu.version_d", elf.SHT_GNU_VERDEF, a, verdefOff, 56, 3, 2, 8, 0},
		{".dynamic", elf.SHT_DYNAMIC, a | elf.SHF_WRITE, dynOff, dynSize, 3, 0, 8, 16},
		{".text", elf.SHT_PROGBITS, a | elf.SHF_EXECINSTR, textOff, textSize, 0, 0, 16, 0},
		{".shstrtab", elf.SHT_STRTAB, 0, 0, 0, 0, 0, 1, 0},
	}
	names := make([]uint32, len(sections))
	for i, s := range sections[1:] {
		names[i+1] = shname(s.name)
	}
	shstrOff := len(img)
	img = append(img, shstr...)
	sections[len(sections)-1].off, sections[len(sections)-1].size = shstrOff, len(shstr)
	img = align(img, 8)
	shOff := len(img)
	for i, s := range sections {
		var sh [shdrSize]byte
		if i > 0 {
			le.PutUint32(sh[0:], names[i])
			le.PutUint32(sh[4:], uint32(s.typ))
			le.PutUint64(sh[8:], uint64(s.flags))
			if s.flags&a != 0 {
				le.PutUint64(sh[16:], uint64(s.off)) // sh_addr
			}
			le.PutUint64(sh[24:], uint64(s.off))
			le.PutUint64(sh[32:], uint64(s.size))
			le.PutUint32(sh[40:], s.link)
			le.PutUint32(sh[44:], s.info)
			le.PutUint64(sh[48:], uint64(s.align))
			le.PutUint64(sh[56:], uint64(s.entsz))
		}
		img = append(img, sh[:]...)
	}

	h := img[:ehdrSize]
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(h[16:], uint16(elf.ET_DYN))
	le.PutUint16(h[18:], uint16(elf.EM_X86_64))
	le.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(h[32:], ehdrSize) // e_phoff
	le.PutUint64(h[40:], uint64(shOff))
	le.PutUint16(h[52:], ehdrSize)
	le.PutUint16(h[54:], phdrSize)
	le.PutUint16(h[56:], nphdr)
	le.PutUint16(h[58:], shdrSize)
	le.PutUint16(h[60:], uint16(len(sections)))
	le.PutUint16(h[62:], uint16(len(sections)-1))
	phdr := func(i int, typ elf.ProgType, flags elf.ProgFlag, off, size, align int) {
		p := img[ehdrSize+i*phdrSize:]
		le.PutUint32(p[0:], uint32(typ))
		le.PutUint32(p[4:], uint32(flags))
		le.PutUint64(p[8:], uint64(off))
		le.PutUint64(p[16:], uint64(off))
		le.PutUint64(p[24:], uint64(off))
		le.PutUint64(p[32:], uint64(size))
		le.PutUint64(p[40:], uint64(size))
		le.PutUint64(p[48:], uint64(align))
	}
	phdr(0, elf.PT_LOAD, elf.PF_R|elf.PF_X, 0, loadSize, pageSize)
	phdr(1, elf.PT_DYNAMIC, elf.PF_R, dynOff, dynSize, 8)
	if len(img) > vdsoPages*pageSize {
		panic("emu: vDSO image larger than its mapping")
	}
	return img
}

// mapVDSO maps [vvar], [vvar_vclock] and [vdso] in the mmap area and
// returns the vDSO's address (AT_SYSINFO_EHDR), or 0 when the address
// space has no room for them.
func (mm *MM) mapVDSO() uint64 {
	const n = (vvarPages + vvarVclockPages + vdsoPages) * pageSize
	a, ok := mm.findFree(n)
	if !ok {
		return 0
	}
	vclock := a + vvarPages*pageSize
	vdso := vclock + vvarVclockPages*pageSize
	mm.insert(&vma{start: a, end: vclock, prot: unix.PROT_READ, fileEnd: noFileEnd, name: "[vvar]"})
	mm.insert(&vma{start: vclock, end: vdso, prot: unix.PROT_READ, fileEnd: noFileEnd, name: "[vvar_vclock]"})
	mm.insert(&vma{start: vdso, end: a + n, prot: unix.PROT_READ | unix.PROT_EXEC, fileEnd: noFileEnd, name: "[vdso]"})
	if mm.Mem.Poke(vdso, vdsoImage()) != nil {
		mm.unmap(a, a+n)
		return 0
	}
	return vdso
}
