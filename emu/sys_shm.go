package emu

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// System V shared memory. A segment is the machine's: its pages are
// x86.Page objects that every address space attaching it holds (the
// VMA's shm field sends page faults there, mm.source), so a write in
// one process is seen by the others at once, and fork shares them as
// it shares every MAP_SHARED page. Segments live until IPC_RMID and the
// end of their last attachment. As in Linux, an attachment is a mapping
// of the segment in an address space: fork adds one per mapping the
// child inherits, exit, exec and munmap take theirs away (attached
// counts them when asked).

// shmSegment is one segment.
type shmSegment struct {
	id, key    int
	obj        uint64 // its name for observers (Region.Obj)
	size       uint64
	mode       uint32
	cpid, lpid int
	removed    bool
	// ctime, atime and dtime are the last change, attach and detach
	// (seconds; 0: never).
	ctime, atime, dtime int64
	// pages are the materialised pages, by page index in the segment.
	pages map[uint64]*x86.Page
}

// shmMax bounds a segment (Linux's SHMMAX is larger; a guest asking
// for more than this is refused with EINVAL as Linux would past its).
const shmMax = 1 << 34

// page returns the segment's page i, made zeroed the first time (each
// attachment gives it its own protection: Memory's page table).
func (s *shmSegment) page(i uint64) *x86.Page { return objectPage(s.pages, i) }

// attached counts the mappings of segment s in the address spaces of
// the processes that have not ended (shm_nattch): each VMA of it, as
// Linux counts each vm_area_struct it opens.
func (m *Machine) attached(s *shmSegment) int {
	n := 0
	seen := map[*MM]bool{}
	for _, p := range m.procs {
		if p.MM == nil || seen[p.MM] {
			continue
		}
		seen[p.MM] = true
		for _, v := range p.MM.vmas {
			if v.shm == s {
				n++
			}
		}
	}
	return n
}

// shmSweep destroys the removed segments nothing maps any more.
func (m *Machine) shmSweep() {
	for id, s := range m.shm {
		if s.removed && m.attached(s) == 0 {
			delete(m.shm, id)
		}
	}
}

// Shmget implements Linux syscall shmget(2).
func Shmget(t *Thread, a *SyscallArgs) (uint64, error) {
	m := t.P.m
	m.shmSweep()
	key, size, flags := int(int32(a.A[0])), a.A[1], a.Int(2)
	if key != unix.IPC_PRIVATE {
		for _, s := range m.shm {
			if s.key == key && !s.removed {
				if flags&unix.IPC_CREAT != 0 && flags&unix.IPC_EXCL != 0 {
					return 0, unix.EEXIST
				}
				if size > s.size {
					return 0, unix.EINVAL
				}
				return uint64(s.id), nil
			}
		}
		if flags&unix.IPC_CREAT == 0 {
			return 0, unix.ENOENT
		}
	}
	if size == 0 || size > shmMax {
		return 0, unix.EINVAL
	}
	if m.shm == nil {
		m.shm = map[int]*shmSegment{}
	}
	m.shmNext++
	s := &shmSegment{id: m.shmNext, key: key, obj: m.newObj(), size: size, mode: uint32(flags) & 0o777, cpid: t.P.PID,
		ctime: time.Now().Unix(), pages: map[uint64]*x86.Page{}}
	m.shm[s.id] = s
	return uint64(s.id), nil
}

// Shmat implements Linux syscall shmat(2).
func Shmat(t *Thread, a *SyscallArgs) (uint64, error) {
	m, mm := t.P.m, t.P.MM
	m.shmSweep()
	s := m.shm[a.Int(0)]
	if s == nil {
		return 0, unix.EINVAL
	}
	addr, flags := a.A[1], a.Int(2)
	length := pageUp(s.size)
	prot := unix.PROT_READ | unix.PROT_WRITE
	if flags&unix.SHM_RDONLY != 0 {
		prot = unix.PROT_READ
	}
	if addr != 0 {
		if flags&unix.SHM_RND != 0 {
			addr &^= shmLBA - 1
		}
		if addr%pageSize != 0 || addr < mmapMin || addr+length > taskSize || addr+length < addr {
			return 0, unix.EINVAL
		}
	} else {
		var ok bool
		if addr, ok = mm.findFree(length); !ok {
			return 0, unix.ENOMEM
		}
	}
	mm.unmap(addr, addr+length)
	mm.insert(&vma{start: addr, end: addr + length, prot: prot, shared: true, shm: s, fileEnd: noFileEnd,
		name: "/SYSV" + hex8(uint32(s.key))})
	s.lpid, s.atime = t.P.PID, time.Now().Unix()
	if t.P.obs != nil {
		t.P.obs.Mmap(t, MmapEvent{Addr: addr, Len: length, Prot: prot, Flags: unix.MAP_SHARED | unix.MAP_ANONYMOUS})
	}
	return addr, nil
}

// shmLBA is SHM_RND's alignment on x86-64.
const shmLBA = pageSize

// hex8 formats v as 8 hex digits (as /proc/PID/maps names segments).
func hex8(v uint32) string {
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// Shmdt implements Linux syscall shmdt(2): it detaches the segment
// attached at addr.
func Shmdt(t *Thread, a *SyscallArgs) (uint64, error) {
	mm, addr := t.P.MM, a.A[0]
	v := mm.find(addr)
	if v == nil || v.shm == nil || v.start != addr || v.off != 0 {
		return 0, unix.EINVAL
	}
	s := v.shm
	end := v.start + pageUp(s.size)
	mm.unmap(addr, end)
	s.lpid, s.dtime = t.P.PID, time.Now().Unix()
	t.P.m.shmSweep()
	return 0, nil
}

// Shmctl implements Linux syscall shmctl(2): IPC_RMID and IPC_STAT.
func Shmctl(t *Thread, a *SyscallArgs) (uint64, error) {
	m := t.P.m
	m.shmSweep()
	s := m.shm[a.Int(0)]
	if s == nil {
		return 0, unix.EINVAL
	}
	switch a.Int(1) &^ 0x100 { // IPC_64
	case unix.IPC_RMID:
		s.removed = true
		m.shmSweep()
		return 0, nil
	case unix.IPC_STAT:
		b := make([]byte, 112) // struct shmid64_ds
		le := binary.LittleEndian
		le.PutUint32(b[0:], uint32(s.key))
		le.PutUint32(b[4:], uint32(unix.Getuid()))
		le.PutUint32(b[8:], uint32(unix.Getgid()))
		le.PutUint32(b[12:], uint32(unix.Getuid()))
		le.PutUint32(b[16:], uint32(unix.Getgid()))
		mode := s.mode
		if s.removed {
			mode |= 0o1000 // SHM_DEST
		}
		le.PutUint32(b[20:], mode)
		le.PutUint64(b[48:], s.size)
		le.PutUint64(b[56:], uint64(s.atime))
		le.PutUint64(b[64:], uint64(s.dtime))
		le.PutUint64(b[72:], uint64(s.ctime))
		le.PutUint32(b[80:], uint32(s.cpid))
		le.PutUint32(b[84:], uint32(s.lpid))
		le.PutUint64(b[88:], uint64(m.attached(s)))
		return 0, t.CopyOut(a.A[2], b)
	}
	t.unsupported("shmctl command " + itoa(a.Int(1)))
	return 0, unix.EINVAL
}
