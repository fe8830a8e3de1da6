package emu

import (
	"golang.org/x/sys/unix"
)

const (
	mapSharedValidate = 0x03
	mapTypeMask       = 0x0f
	mapFixedNoreplace = 0x100000
	mremapMaymove     = 1
	mremapFixed       = 2
	mremapDontunmap   = 4
)

// Brk implements Linux syscall brk(2).
func Brk(t *Thread, a *SyscallArgs) (uint64, error) {
	mm := t.P.MM
	want := a.A[0]
	if want < mm.brkStart || want > taskSize {
		return mm.brk, nil
	}
	oldEnd, newEnd := pageUp(mm.brk), pageUp(want)
	switch {
	case newEnd > oldEnd:
		if !mm.isFree(oldEnd, newEnd) || newEnd-mm.brkStart > t.P.rlimits[unix.RLIMIT_DATA].Cur {
			return mm.brk, nil
		}
		mm.insert(&vma{start: oldEnd, end: newEnd, prot: unix.PROT_READ | unix.PROT_WRITE, fileEnd: noFileEnd, name: "[heap]"})
	case newEnd < oldEnd:
		mm.unmap(newEnd, oldEnd)
	}
	mm.brk = want
	return want, nil
}

// Mmap implements Linux syscall mmap(2). What the program writes through
// a MAP_SHARED file mapping reaches the file at msync, munmap and exit
// (mm_shared.go); changes to the file are seen only in pages not touched
// yet.
func Mmap(t *Thread, a *SyscallArgs) (uint64, error) {
	addr, length, prot, flags, fd, off := a.A[0], a.A[1], a.Int(2), a.Int(3), a.Int(4), a.A[5]
	mm := t.P.MM
	if length == 0 || off%pageSize != 0 {
		return 0, unix.EINVAL
	}
	length = pageUp(length)
	if length == 0 || length > taskSize {
		return 0, unix.ENOMEM
	}
	if prot&^(unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC|unix.PROT_GROWSDOWN|unix.PROT_GROWSUP) != 0 {
		return 0, unix.EINVAL
	}
	prot &= unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC
	shared := false
	switch flags & mapTypeMask {
	case unix.MAP_PRIVATE:
	case unix.MAP_SHARED, mapSharedValidate:
		shared = true
	default:
		return 0, unix.EINVAL
	}
	v := &vma{prot: prot, shared: shared, fileEnd: noFileEnd}
	ev := MmapEvent{Prot: prot, Flags: flags}
	if flags&unix.MAP_ANONYMOUS == 0 {
		e, err := t.P.fds.get(fd)
		if err != nil {
			return 0, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(e.host, &st); err != nil {
			return 0, errno(err)
		}
		fl, err := unix.FcntlInt(uintptr(e.host), unix.F_GETFL, 0)
		if err != nil {
			return 0, errno(err)
		}
		acc := fl & unix.O_ACCMODE
		if acc == unix.O_WRONLY || (shared && prot&unix.PROT_WRITE != 0 && acc != unix.O_RDWR) {
			return 0, unix.EACCES
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG, unix.S_IFBLK:
		case unix.S_IFCHR:
			if st.Rdev != unix.Mkdev(1, 5) { // /dev/zero maps as anonymous memory
				return 0, unix.ENODEV
			}
		case unix.S_IFDIR:
			return 0, unix.ENODEV
		default:
			return 0, unix.EACCES
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR {
			path, _ := readFDPath(e.host)
			mf, err := newMappedFile(e.host, path)
			if err != nil {
				return 0, errno(err)
			}
			v.file = mf
			if shared && st.Mode&unix.S_IFMT == unix.S_IFREG {
				v.file.shared = t.P.m.filePagesFor(&st)
			}
			v.off = off
			v.name = path
			ev.Path, ev.Offset, ev.FileLen = path, off, length
		}
	}
	if shared && v.file == nil {
		v.anon = t.P.m.newAnonShared()
	}
	release := func() {
		if v.file != nil {
			v.file.unref()
		}
	}
	switch {
	case flags&(unix.MAP_FIXED|mapFixedNoreplace) != 0:
		if addr%pageSize != 0 || addr < mmapMin || addr+length > taskSize || addr+length < addr {
			release()
			if addr < mmapMin && addr%pageSize == 0 {
				return 0, unix.EPERM
			}
			return 0, unix.EINVAL
		}
		if flags&unix.MAP_FIXED == 0 && !mm.isFree(addr, addr+length) {
			release()
			return 0, unix.EEXIST
		}
	default:
		// (A hint at or above stackTop is not honoured: under x86's
		// host window, UseHostWindow, pages there are slow, and Go's
		// runtime and V8 try hints near the top of the space first.)
		hint := pageDown(addr)
		if hint >= mmapMin && hint+length <= stackTop && hint+length > hint && mm.isFree(hint, hint+length) {
			addr = hint
			break
		}
		var ok bool
		if flags&unix.MAP_32BIT != 0 {
			addr, ok = mm.findFreeBelow(length, 0x80000000)
		} else {
			addr, ok = mm.findFree(length)
		}
		if !ok {
			release()
			return 0, unix.ENOMEM
		}
	}
	mm.unmap(addr, addr+length)
	v.start, v.end = addr, addr+length
	mm.insert(v)
	if t.P.obs != nil {
		ev.Addr, ev.Len = addr, length
		t.P.obs.Mmap(t, ev)
	}
	return addr, nil
}

// readFDPath names the file behind a host descriptor.
func readFDPath(h int) (string, error) {
	b := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+itoa(h), b)
	if err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

// findFreeBelow is findFree for MAP_32BIT: the highest free range ending
// at or below limit.
func (mm *MM) findFreeBelow(length, limit uint64) (uint64, bool) {
	hi := limit
	for i := len(mm.vmas) - 1; i >= -1; i-- {
		lo := uint64(mmapMin)
		if i >= 0 {
			v := mm.vmas[i]
			if v.start >= hi {
				continue
			}
			lo = max(lo, v.end)
		}
		if lo < hi && hi-lo >= length {
			return hi - length, true
		}
		if i >= 0 {
			hi = min(hi, mm.vmas[i].start)
		}
	}
	return 0, false
}

// checkRange validates a page-aligned range argument.
func checkRange(addr, length uint64) (uint64, error) {
	if addr%pageSize != 0 {
		return 0, unix.EINVAL
	}
	end := addr + pageUp(length)
	if end < addr || end > taskSize {
		return 0, unix.EINVAL
	}
	return end, nil
}

// Munmap implements Linux syscall munmap(2).
func Munmap(t *Thread, a *SyscallArgs) (uint64, error) {
	end, err := checkRange(a.A[0], a.A[1])
	if err != nil || a.A[1] == 0 {
		return 0, unix.EINVAL
	}
	t.P.MM.unmap(a.A[0], end)
	return 0, nil
}

// Mprotect implements Linux syscall mprotect(2).
func Mprotect(t *Thread, a *SyscallArgs) (uint64, error) {
	end, err := checkRange(a.A[0], a.A[1])
	if err != nil {
		return 0, err
	}
	prot := a.Int(2)
	if prot&^(unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC|unix.PROT_GROWSDOWN|unix.PROT_GROWSUP) != 0 {
		return 0, unix.EINVAL
	}
	prot &= unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC
	mm := t.P.MM
	if end == a.A[0] {
		return 0, nil
	}
	if !mm.mapped(a.A[0], end) {
		return 0, unix.ENOMEM
	}
	mm.protect(a.A[0], end, prot)
	return 0, nil
}

// Mremap implements Linux syscall mremap(2).
func Mremap(t *Thread, a *SyscallArgs) (uint64, error) {
	old, oldLen, newLen, flags, newAddr := a.A[0], pageUp(a.A[1]), pageUp(a.A[2]), a.Int(3), a.A[4]
	mm := t.P.MM
	if old%pageSize != 0 || newLen == 0 || flags&^(mremapMaymove|mremapFixed|mremapDontunmap) != 0 {
		return 0, unix.EINVAL
	}
	if flags&mremapFixed != 0 && flags&mremapMaymove == 0 || flags&mremapDontunmap != 0 {
		return 0, unix.EINVAL
	}
	if oldLen == 0 {
		return 0, unix.EINVAL // duplicating shared mappings is not supported
	}
	v := mm.find(old)
	if v == nil || old+oldLen > v.end {
		return 0, unix.EFAULT
	}
	if flags&mremapFixed != 0 {
		if newAddr%pageSize != 0 || newAddr < mmapMin || newAddr+newLen > taskSize ||
			(newAddr < old+oldLen && old < newAddr+newLen) {
			return 0, unix.EINVAL
		}
		mm.unmap(newAddr, newAddr+newLen)
		if newLen < oldLen {
			mm.unmap(old+newLen, old+oldLen)
			oldLen = newLen
		}
		mm.move(old, oldLen, newAddr)
		mm.growTail(newAddr+oldLen, newAddr+newLen)
		return newAddr, nil
	}
	if newLen <= oldLen {
		mm.unmap(old+newLen, old+oldLen)
		return old, nil
	}
	if old+oldLen == v.end && mm.isFree(old+oldLen, old+newLen) && old+newLen <= taskSize {
		mm.growTail(old+oldLen, old+newLen)
		return old, nil
	}
	if flags&mremapMaymove == 0 {
		return 0, unix.ENOMEM
	}
	dst, ok := mm.findFree(newLen)
	if !ok {
		return 0, unix.ENOMEM
	}
	mm.move(old, oldLen, dst)
	mm.growTail(dst+oldLen, dst+newLen)
	return dst, nil
}

// growTail extends the VMA ending at lo to end at hi (free space).
func (mm *MM) growTail(lo, hi uint64) {
	if lo >= hi {
		return
	}
	v := mm.find(lo - 1)
	w := *v
	w.start, w.end = lo, hi
	if w.file != nil {
		w.off += lo - v.start
		w.file.ref()
	} else if w.shm != nil || w.anon != nil {
		w.off += lo - v.start
	}
	mm.insert(&w)
}

// Madvise implements Linux syscall madvise(2). MADV_DONTNEED and
// MADV_FREE drop the pages: they read back as zeros (or as the file's
// contents for a private file mapping); other advice is accepted and
// ignored.
func Madvise(t *Thread, a *SyscallArgs) (uint64, error) {
	end, err := checkRange(a.A[0], a.A[1])
	if err != nil {
		return 0, err
	}
	mm := t.P.MM
	switch a.Int(2) {
	case unix.MADV_DONTNEED, unix.MADV_FREE, unix.MADV_REMOVE:
		if !mm.mapped(a.A[0], end) {
			return 0, unix.ENOMEM
		}
		mm.dropPages(a.A[0], end)
	case unix.MADV_NORMAL, unix.MADV_RANDOM, unix.MADV_SEQUENTIAL, unix.MADV_WILLNEED,
		unix.MADV_DONTFORK, unix.MADV_DOFORK, unix.MADV_MERGEABLE, unix.MADV_UNMERGEABLE,
		unix.MADV_HUGEPAGE, unix.MADV_NOHUGEPAGE, unix.MADV_DONTDUMP, unix.MADV_DODUMP,
		unix.MADV_WIPEONFORK, unix.MADV_KEEPONFORK, unix.MADV_COLD, unix.MADV_PAGEOUT:
		if !mm.mapped(a.A[0], end) {
			return 0, unix.ENOMEM
		}
	default:
		return 0, unix.EINVAL
	}
	return 0, nil
}

// Msync implements Linux syscall msync(2): the changed bytes of shared
// file mappings in the range are written back to their files.
func Msync(t *Thread, a *SyscallArgs) (uint64, error) {
	end, err := checkRange(a.A[0], a.A[1])
	if err != nil {
		return 0, err
	}
	if a.A[2]&^uint64(unix.MS_ASYNC|unix.MS_SYNC|unix.MS_INVALIDATE) != 0 || a.A[2]&unix.MS_ASYNC != 0 && a.A[2]&unix.MS_SYNC != 0 {
		return 0, unix.EINVAL
	}
	if !t.P.MM.mapped(a.A[0], end) {
		return 0, unix.ENOMEM
	}
	return 0, errno(t.P.MM.writeBack(a.A[0], end))
}

// Mincore implements Linux syscall mincore(2): a page is resident when
// ttd has materialised it.
func Mincore(t *Thread, a *SyscallArgs) (uint64, error) {
	end, err := checkRange(a.A[0], a.A[1])
	if err != nil {
		return 0, err
	}
	mm := t.P.MM
	if !mm.mapped(a.A[0], end) {
		return 0, unix.ENOMEM
	}
	n := (end - a.A[0]) / pageSize
	if n > 1<<24 {
		return 0, unix.ENOMEM
	}
	vec := make([]byte, n)
	for i := range vec {
		if mm.Mem.Lookup(a.A[0]/pageSize+uint64(i)) != nil {
			vec[i] = 1
		}
	}
	return 0, t.CopyOut(a.A[2], vec)
}

// Mlock implements Linux syscall mlock(2): guest pages stay in ttd's
// memory anyway, so locking checks what the kernel checks (the range
// mapped, RLIMIT_MEMLOCK without CAP_IPC_LOCK) and changes nothing.
func Mlock(t *Thread, a *SyscallArgs) (uint64, error) {
	return 0, mlockRange(t, a.A[0], a.A[1], true)
}

// Mlock2 implements Linux syscall mlock2(2) (MLOCK_ONFAULT or 0).
func Mlock2(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.A[2]&^unix.MLOCK_ONFAULT != 0 {
		return 0, unix.EINVAL
	}
	return 0, mlockRange(t, a.A[0], a.A[1], true)
}

// Munlock implements Linux syscall munlock(2).
func Munlock(t *Thread, a *SyscallArgs) (uint64, error) {
	return 0, mlockRange(t, a.A[0], a.A[1], false)
}

// Mlockall implements Linux syscall mlockall(2).
func Mlockall(t *Thread, a *SyscallArgs) (uint64, error) {
	f := a.A[0]
	if f == 0 || f&^uint64(unix.MCL_CURRENT|unix.MCL_FUTURE|unix.MCL_ONFAULT) != 0 || f == unix.MCL_ONFAULT {
		return 0, unix.EINVAL
	}
	if t.P.rlimits[unix.RLIMIT_MEMLOCK].Cur == 0 && unix.Geteuid() != 0 {
		return 0, unix.EPERM
	}
	return 0, nil
}

// Munlockall implements Linux syscall munlockall(2).
func Munlockall(t *Thread, a *SyscallArgs) (uint64, error) { return 0, nil }

// mlockRange checks [addr, addr+length) as mlock and munlock do: the
// start rounded down to its page, every page mapped.
func mlockRange(t *Thread, addr, length uint64, lock bool) error {
	start := pageDown(addr)
	end := pageUp(addr + length)
	if addr+length < addr || end < start {
		return unix.EINVAL
	}
	if lock && unix.Geteuid() != 0 {
		lim := t.P.rlimits[unix.RLIMIT_MEMLOCK].Cur
		if lim == 0 {
			return unix.EPERM
		}
		if end-start > lim {
			return unix.ENOMEM
		}
	}
	if start == end {
		return nil
	}
	if end > taskSize || !t.P.MM.mapped(start, end) {
		return unix.ENOMEM
	}
	return nil
}
