package emu

import "golang.org/x/sys/unix"

// /proc/PID/mem: a process's memory as a file, read and written at the
// file offset (gdb's way to its inferior's memory), as ptrace's peeks
// and pokes reach it. The descriptor's host file (an empty memfd) keeps
// the offset.

// procMemIO reads (or writes) n bytes of the memory e is at addr in the
// caller's memory, at offset off (-1: the descriptor's offset, which
// moves).
func (t *Thread) procMemIO(e *fdEntry, addr uint64, n int, off int64, write bool) (uint64, error) {
	q := e.proc.mem
	if q.released || q.MM == nil {
		return 0, unix.EIO
	}
	pos := off
	if off < 0 {
		cur, err := unix.Seek(e.host, 0, unix.SEEK_CUR)
		if err != nil {
			return 0, errno(err)
		}
		pos = cur
	}
	b := t.buf(n)
	if write {
		if err := t.CopyIn(addr, b); err != nil {
			return 0, err
		}
	}
	mem := q.MM.Mem
	done := 0
	for done < n {
		a := uint64(pos) + uint64(done)
		k := min(n-done, int(pageSize-a%pageSize))
		var err error
		if write {
			err = mem.Poke(a, b[done:done+k])
		} else {
			err = mem.Peek(a, b[done:done+k])
		}
		if err != nil {
			break
		}
		done += k
	}
	if done == 0 && n > 0 {
		return 0, unix.EIO
	}
	if write && len(q.threads) > 0 {
		q.threads[0].foreignWrite(uint64(pos), uint64(done))
	}
	if !write {
		if err := t.CopyOut(addr, b[:done]); err != nil {
			return 0, err
		}
	}
	if off < 0 {
		if _, err := unix.Seek(e.host, pos+int64(done), unix.SEEK_SET); err != nil {
			return 0, errno(err)
		}
	}
	return uint64(done), nil
}
