package emu

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// MemRange is a range of guest memory.
type MemRange struct {
	Addr uint64
	Len  uint64
}

// Guest memory as the kernel side of a syscall reaches it: every access
// checks the guest's page permissions and fails with EFAULT, and every
// write goes through CopyOut so that an observer learns what the kernel
// wrote.

// CopyIn reads len(b) bytes of guest memory at addr.
func (t *Thread) CopyIn(addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if addr+uint64(len(b)) < addr || addr+uint64(len(b)) > taskSize {
		return unix.EFAULT
	}
	if t.P.MM.Mem.ReadBytes(addr, b) != nil {
		return unix.EFAULT
	}
	return nil
}

// CopyOut writes b to guest memory at addr.
func (t *Thread) CopyOut(addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if addr+uint64(len(b)) < addr || addr+uint64(len(b)) > taskSize {
		return unix.EFAULT
	}
	if t.P.MM.Mem.WriteBytes(addr, b) != nil {
		return unix.EFAULT
	}
	if t.P.obs != nil {
		t.writes = append(t.writes, MemRange{addr, uint64(len(b))})
	}
	return nil
}

// CopyInString reads a NUL-terminated string of at most max bytes
// (ENAMETOOLONG beyond).
func (t *Thread) CopyInString(addr uint64, max int) (string, error) {
	var buf []byte
	var chunk [256]byte
	for len(buf) < max {
		// Read up to the end of the page so a string ending just
		// before an unmapped page is fine.
		n := uint64(len(chunk))
		if rest := pageSize - addr%pageSize; rest < n {
			n = rest
		}
		if err := t.CopyIn(addr, chunk[:n]); err != nil {
			return "", err
		}
		for i := uint64(0); i < n; i++ {
			if chunk[i] == 0 {
				return string(append(buf, chunk[:i]...)), nil
			}
		}
		buf = append(buf, chunk[:n]...)
		addr += n
	}
	return "", unix.ENAMETOOLONG
}

// copyInPath reads a path name argument.
func (t *Thread) copyInPath(addr uint64) (string, error) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	return t.CopyInString(addr, unix.PathMax)
}

func (t *Thread) readU32(addr uint64) (uint32, error) {
	var b [4]byte
	err := t.CopyIn(addr, b[:])
	return binary.LittleEndian.Uint32(b[:]), err
}

func (t *Thread) readU64(addr uint64) (uint64, error) {
	var b [8]byte
	err := t.CopyIn(addr, b[:])
	return binary.LittleEndian.Uint64(b[:]), err
}

func (t *Thread) writeU32(addr uint64, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return t.CopyOut(addr, b[:])
}

func (t *Thread) writeU64(addr uint64, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return t.CopyOut(addr, b[:])
}

// copyInStruct reads a kernel struct.
func copyInStruct[T any](t *Thread, addr uint64, v *T) error {
	return t.CopyIn(addr, structBytes(v))
}

// copyOutStruct writes a kernel struct.
func copyOutStruct[T any](t *Thread, addr uint64, v *T) error {
	return t.CopyOut(addr, structBytes(v))
}

// iovec is one element of a readv/writev vector.
type iovec struct{ base, len uint64 }

// copyInIovecs reads an iovec array (at most IOV_MAX entries).
func (t *Thread) copyInIovecs(addr uint64, n uint64) ([]iovec, error) {
	if n > 1024 {
		return nil, unix.EINVAL
	}
	b := make([]byte, 16*n)
	if err := t.CopyIn(addr, b); err != nil {
		return nil, err
	}
	v := make([]iovec, n)
	var total uint64
	for i := range v {
		v[i].base = binary.LittleEndian.Uint64(b[16*i:])
		v[i].len = binary.LittleEndian.Uint64(b[16*i+8:])
		total += v[i].len
		if int64(v[i].len) < 0 || int64(total) < 0 {
			return nil, unix.EINVAL
		}
	}
	return v, nil
}
