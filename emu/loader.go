package emu

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Auxiliary vector keys (include/uapi/linux/auxvec.h).
const (
	atNull         = 0
	atPhdr         = 3
	atPhent        = 4
	atPhnum        = 5
	atPagesz       = 6
	atBase         = 7
	atFlags        = 8
	atEntry        = 9
	atUID          = 11
	atEUID         = 12
	atGID          = 13
	atEGID         = 14
	atPlatform     = 15
	atHwcap        = 16
	atClktck       = 17
	atSecure       = 23
	atRandom       = 25
	atHwcap2       = 26
	atExecfn       = 31
	atMinSigStkSz  = 51
	minSigStackSz  = 2048
	maxScriptDepth = 4
)

// ErrNotExecutable is wrapped by LoadErrors for files that are not x86-64
// ELF programs or scripts.
var ErrNotExecutable = errors.New("not an x86-64 ELF executable")

// fdReader reads a host file descriptor with pread.
type fdReader int

func (r fdReader) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		k, err := unix.Pread(int(r), b[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, errEOF
		}
		n += k
	}
	return n, nil
}

var errEOF = fmt.Errorf("unexpected end of file")

// loadedELF is what the loader learnt about one mapped ELF file.
type loadedELF struct {
	bias   uint64
	entry  uint64
	phdr   uint64
	phnum  int
	phent  int
	end    uint64 // end of the highest segment
	interp string
	dyn    bool // ET_DYN
}

// exec replaces the process image with the program at path, as execve
// does, on thread t. open is the host path of path (a guest's
// /proc/self/exe is the guest's executable, not ttd), "" when the same.
func (p *Process) exec(t *Thread, path, open string, args, env []string) error {
	execfn := path
	if open == "" {
		open = path
	}
	for depth := 0; ; depth++ {
		fd, err := p.fs.open(open, unix.O_RDONLY, 0)
		if err != nil {
			return &LoadError{Path: path, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return &LoadError{Path: path, Err: err}
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			unix.Close(fd)
			return &LoadError{Path: path, Err: unix.EISDIR}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
			unix.Close(fd)
			return &LoadError{Path: path, Err: unix.EACCES}
		}
		var head [256]byte
		n, _ := unix.Pread(fd, head[:], 0)
		if n >= 2 && head[0] == '#' && head[1] == '!' {
			unix.Close(fd)
			if depth >= maxScriptDepth {
				return &LoadError{Path: path, Err: unix.ELOOP}
			}
			interp, arg, ok := parseShebang(head[2:n])
			if !ok {
				return &LoadError{Path: path, Err: unix.ENOEXEC}
			}
			nargs := []string{interp}
			if arg != "" {
				nargs = append(nargs, arg)
			}
			nargs = append(nargs, path)
			if len(args) > 1 {
				nargs = append(nargs, args[1:]...)
			}
			path, open, args = interp, interp, nargs
			continue
		}
		err = p.loadELF(t, fd, open, execfn, args, env)
		unix.Close(fd)
		return err
	}
}

// parseShebang splits a "#!" line into the interpreter and its argument.
func parseShebang(b []byte) (interp, arg string, ok bool) {
	line, _, found := bytes.Cut(b, []byte{'\n'})
	if !found && len(b) >= 254 {
		// Longer than the kernel's BINPRM_BUF_SIZE: keep what we have.
		line = b
	}
	s := strings.TrimSpace(string(line))
	if s == "" {
		return "", "", false
	}
	interp, arg, _ = strings.Cut(s, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	return interp, strings.TrimSpace(arg), true
}

// loadELF maps the program open as fd (and its interpreter), builds the
// initial stack and points thread t at the entry point.
func (p *Process) loadELF(t *Thread, fd int, path, execfn string, args, env []string) error {
	mm := p.MM
	prog, err := p.mapELF(t, fd, path, true)
	if err != nil {
		return &LoadError{Path: path, Err: err}
	}
	entry := prog.bias + prog.entry
	var interpBase uint64
	if prog.interp != "" {
		ifd, err := unix.Open(prog.interp, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return &LoadError{Path: prog.interp, Err: err}
		}
		in, err := p.mapELF(t, ifd, prog.interp, false)
		unix.Close(ifd)
		if err != nil {
			return &LoadError{Path: prog.interp, Err: err}
		}
		interpBase = in.bias
		entry = in.bias + in.entry
	}
	vdso := mm.mapVDSO()
	mm.brkStart = pageUp(prog.end)
	if prog.interp == "" && prog.dyn {
		// Linux moves the heap of a program without an interpreter
		// (ld.so run directly, a static PIE) out of the mmap area, to
		// ELF_ET_DYN_BASE, whatever the randomisation: the kernel's
		// 0x555555554aaa (2/3 of the task size) rounded up to a page.
		mm.brkStart = etDynBase + pageSize
	}
	mm.brk = mm.brkStart
	if abs, err := p.fs.abs(path); err == nil {
		p.exe = abs
		// /proc/self/exe names the file, not a symlink to it: programs
		// find their $ORIGIN libraries through it.
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			p.exe = r
		}
	} else {
		p.exe = path
	}
	mm.Code.UseCodeFile(codeFileOf(fd, p.exe, mm.Code.Features), mm.fileCode)
	p.argv = args
	p.envc = len(env)

	// The stack: strings at the top, then AT_RANDOM bytes, auxv, envp,
	// argv and argc.
	mm.unmap(stackTop-stackMax, stackTop)
	mm.insert(&vma{start: stackTop - stackMax, end: stackTop, prot: unix.PROT_READ | unix.PROT_WRITE, fileEnd: noFileEnd, name: "[stack]"})
	sp := uint64(stackTop - 8)
	push := func(b []byte) uint64 {
		sp -= uint64(len(b))
		mm.Mem.Poke(sp, b)
		return sp
	}
	pushStr := func(s string) uint64 { return push(append([]byte(s), 0)) }
	execfnAddr := pushStr(execfn)
	envAddrs := make([]uint64, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		envAddrs[i] = pushStr(env[i])
	}
	argAddrs := make([]uint64, len(args))
	for i := len(args) - 1; i >= 0; i-- {
		argAddrs[i] = pushStr(args[i])
	}
	mm.stackLow = 0
	if pageDown(sp) >= stackTop-stackMax+stackExpand {
		mm.stackLow = pageDown(sp) - stackExpand
	}
	sp &^= 15
	platform := pushStr("x86_64")
	var rnd [16]byte
	if _, err := unix.Getrandom(rnd[:], 0); err != nil {
		binary.LittleEndian.PutUint64(rnd[:], uint64(p.PID)*0x9e3779b97f4a7c15)
	}
	random := push(rnd[:])
	_, _, _, hwcap := p.env.CPUID(1, 0)
	auxv := []uint64{
		atSysinfoEhdr, vdso,
		atMinSigStkSz, minSigStackSz,
		atHwcap, uint64(hwcap),
		atPagesz, pageSize,
		atClktck, 100,
		atPhdr, prog.phdr,
		atPhent, uint64(prog.phent),
		atPhnum, uint64(prog.phnum),
		atBase, interpBase,
		atFlags, 0,
		atEntry, prog.bias + prog.entry,
		atUID, uint64(unix.Getuid()),
		atEUID, uint64(unix.Geteuid()),
		atGID, uint64(unix.Getgid()),
		atEGID, uint64(unix.Getegid()),
		atSecure, 0,
		atRandom, random,
		atHwcap2, 0,
		atExecfn, execfnAddr,
		atPlatform, platform,
		atNull, 0,
	}
	p.auxv = auxv
	words := 1 + len(args) + 1 + len(env) + 1 + len(auxv)
	sp = (sp - uint64(8*words)) &^ 15
	table := make([]byte, 0, 8*words)
	put := func(v uint64) { table = binary.LittleEndian.AppendUint64(table, v) }
	put(uint64(len(args)))
	for _, a := range argAddrs {
		put(a)
	}
	put(0)
	for _, a := range envAddrs {
		put(a)
	}
	put(0)
	for _, v := range auxv {
		put(v)
	}
	mm.Mem.Poke(sp, table)

	c := t.CPU
	c.R = [16]uint64{}
	c.R[x86.RSP] = sp
	c.RIP = entry
	c.FSBase, c.GSBase = 0, 0
	c.SetRflags(0x202)
	return nil
}

// mapELF maps the PT_LOAD segments of the ELF file open as fd. A main
// program of type ET_DYN with an interpreter goes to ELF_ET_DYN_BASE,
// an interpreter and an ET_DYN program without one to the top-down mmap
// area, ET_EXEC at its link addresses.
func (p *Process) mapELF(t *Thread, fd int, path string, main bool) (*loadedELF, error) {
	f, err := elf.NewFile(fdReader(fd))
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotExecutable, err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || (f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN) {
		return nil, fmt.Errorf("%w (%v %v %v)", ErrNotExecutable, f.Class, f.Machine, f.Type)
	}
	info := &loadedELF{entry: f.Entry, phnum: len(f.Progs), phent: 56, dyn: f.Type == elf.ET_DYN}
	lo, hi := ^uint64(0), uint64(0)
	var phdrVaddr uint64
	var hasPhdr bool
	for _, ph := range f.Progs {
		switch ph.Type {
		case elf.PT_LOAD:
			if ph.Memsz == 0 {
				continue
			}
			if ph.Vaddr%pageSize != ph.Off%pageSize {
				return nil, fmt.Errorf("%w (misaligned segment)", ErrNotExecutable)
			}
			lo = min(lo, pageDown(ph.Vaddr))
			hi = max(hi, pageUp(ph.Vaddr+ph.Memsz))
		case elf.PT_INTERP:
			if main {
				b := make([]byte, ph.Filesz)
				if _, err := fdReader(fd).ReadAt(b, int64(ph.Off)); err != nil {
					return nil, err
				}
				info.interp = string(bytes.TrimRight(b, "\x00"))
			}
		case elf.PT_PHDR:
			phdrVaddr, hasPhdr = ph.Vaddr, true
		}
	}
	if hi == 0 {
		return nil, fmt.Errorf("%w (no loadable segments)", ErrNotExecutable)
	}
	mm := p.MM
	if f.Type == elf.ET_DYN {
		if main && info.interp != "" {
			info.bias = etDynBase - lo
		} else {
			// An interpreter, and a main program that has none (ld.so
			// run directly, a static PIE): the top-down mmap area.
			a, ok := mm.findFree(hi - lo)
			if !ok {
				return nil, unix.ENOMEM
			}
			info.bias = a - lo
		}
	} else if lo < mmapMin || hi > taskSize {
		return nil, fmt.Errorf("%w (segments outside the user address space)", ErrNotExecutable)
	}
	// The mappings are named as the kernel names them: the file's
	// path with its symbolic links resolved (/lib64/ld-linux-x86-64.so.2
	// is /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 on Debian).
	name, err := readFDPath(fd)
	if err != nil {
		name = path
		if abs, err := p.fs.abs(path); err == nil {
			name = abs
		}
	}
	mf, err := newMappedFile(fd, name)
	if err != nil {
		return nil, err
	}
	defer mf.unref()
	for _, ph := range f.Progs {
		if ph.Type != elf.PT_LOAD || ph.Memsz == 0 {
			continue
		}
		prot := 0
		if ph.Flags&elf.PF_R != 0 {
			prot |= unix.PROT_READ
		}
		if ph.Flags&elf.PF_W != 0 {
			prot |= unix.PROT_WRITE
		}
		if ph.Flags&elf.PF_X != 0 {
			prot |= unix.PROT_EXEC
		}
		start := pageDown(info.bias + ph.Vaddr)
		end := pageUp(info.bias + ph.Vaddr + ph.Memsz)
		// The file's pages, then, as Linux maps a bss that reaches past
		// the file's last page, anonymous memory for the rest.
		fileEnd := info.bias + ph.Vaddr + ph.Filesz
		mid := min(pageUp(fileEnd), end)
		mm.unmap(start, end)
		if start < mid {
			mm.insert(&vma{start: start, end: mid, prot: prot, file: mf.ref(), off: pageDown(ph.Off), fileEnd: fileEnd, name: mf.path})
			if p.obs != nil {
				p.obs.Mmap(t, MmapEvent{Addr: start, Len: mid - start, Prot: prot, Flags: unix.MAP_PRIVATE | unix.MAP_FIXED,
					Path: mf.path, Offset: pageDown(ph.Off), FileLen: fileEnd - start})
			}
		}
		if mid < end {
			mm.insert(&vma{start: mid, end: end, prot: prot, fileEnd: noFileEnd})
			if p.obs != nil {
				p.obs.Mmap(t, MmapEvent{Addr: mid, Len: end - mid, Prot: prot, Flags: unix.MAP_PRIVATE | unix.MAP_FIXED | unix.MAP_ANONYMOUS})
			}
		}
		info.end = max(info.end, info.bias+ph.Vaddr+ph.Memsz)
	}
	if hasPhdr {
		info.phdr = info.bias + phdrVaddr
	} else {
		// The program headers are at e_phoff in the file: find the
		// segment mapping that offset.
		phoff, err := readPhoff(fd)
		if err != nil {
			return nil, err
		}
		for _, ph := range f.Progs {
			if ph.Type == elf.PT_LOAD && ph.Off <= phoff && phoff < ph.Off+ph.Filesz {
				info.phdr = info.bias + ph.Vaddr + phoff - ph.Off
			}
		}
	}
	return info, nil
}

// readPhoff reads e_phoff from an ELF64 header.
func readPhoff(fd int) (uint64, error) {
	var b [8]byte
	if _, err := fdReader(fd).ReadAt(b[:], 32); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// codeFileOf is the persistent file of decoded code (x86.CodeFile) for
// the program open as fd at exe, nil when the cache is off: the key
// tells programs and their versions apart (path, size, mtime, inode),
// the file's blocks are checked against guest memory when taken.
func codeFileOf(fd int, exe string, f x86.Features) *x86.CodeFile {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return nil
	}
	key := fmt.Sprintf("%s\x00%d\x00%d.%d\x00%d:%d", exe, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Dev, st.Ino)
	if x86.WindowOn() {
		// The file keeps translations too, and those of the host
		// window (UseHostWindow) take host addresses from it: a run
		// without it must not take them.
		key += "\x00window"
		if x86.WinFaultOn() {
			// Translations of reads without TLB checks
			// (x86's winfault_linux.go) in their own mode, since
			// session 31 (before, in the mode of those with).
			key += "\x00fault31"
		}
	}
	return x86.OpenCodeFile(key, f)
}
