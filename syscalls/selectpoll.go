package syscalls

import (
	"strconv"

	"ttd/internal/linux"
)

// Decoding of select, pselect6, ppoll and ioctl as strace prints them.
// The inputs select and ppoll overwrite (fd sets, timeouts) come from the
// memory captured before the call (entry.go); the results from the
// memory after it.

// entryReader reads memory as it was when the call being decoded began.
type entryReader interface {
	readEntry(addr uint64, b []byte) (missing int)
}

// readEntry implements entryReader for the call at m.callPos.
func (m *replayMemory) readEntry(addr uint64, b []byte) int {
	if cap(m.have) < len(b) {
		m.have = make([]bool, len(b))
	}
	have := m.have[:len(b)]
	clear(have)
	m.fillEntry(m.callPos, addr, b, have)
	miss := 0
	for _, h := range have {
		if !h {
			miss++
		}
	}
	return miss
}

// entryBuffer reads n bytes at addr as they were at the call's entry,
// as an input buffer of argument i.
func (d *decoder) entryBuffer(i int, addr uint64, n int) ([]byte, int) {
	start := len(d.arena)
	d.arena = append(d.arena, make([]byte, n)...)
	b := d.arena[start : start+n]
	miss := n
	if d.entry != nil {
		miss = d.entry.readEntry(addr, b)
	}
	d.c.Buffers = append(d.c.Buffers, Buffer{Arg: i, Addr: addr, Data: b, Missing: miss})
	return b, miss
}

// fdsetBytes is the size of the fd sets of a select with nfds.
func fdsetBytes(nfds uint64) int { return (int(min(nfds, 1024)) + 63) / 64 * 8 }

// appendFdset appends the descriptors of set below nfds: "[3 4]".
func appendFdset(b, set []byte, nfds uint64) []byte {
	b = append(b, '[')
	first := true
	for fd := 0; fd < int(min(nfds, 1024)) && fd/8 < len(set); fd++ {
		if set[fd/8]>>(fd%8)&1 != 0 {
			if !first {
				b = append(b, ' ')
			}
			first = false
			b = strconv.AppendInt(b, int64(fd), 10)
		}
	}
	return append(b, ']')
}

// selectArg appends the arguments select and pselect6 overwrite.
func (d *decoder) selectArg(b []byte, i int, sp arg) []byte {
	c := d.c
	v := c.Raw[i]
	if v == 0 {
		return append(b, "NULL"...)
	}
	switch sp.k {
	case kFdsetIn:
		m, miss := d.entryBuffer(i, v, fdsetBytes(c.Raw[0]))
		if miss > 0 {
			return appendHex(b, v)
		}
		return appendFdset(b, m, c.Raw[0])
	case kTimespecEntry, kTimevalEntry:
		m, miss := d.entryBuffer(i, v, 16)
		if miss > 0 {
			return appendHex(b, v)
		}
		if sp.k == kTimevalEntry {
			return appendTimeval(b, m)
		}
		return appendTimespec(b, m)
	case kPselectMask:
		// struct { const sigset_t *ss; size_t ss_len; }
		m, miss := d.buffer(i, false, v, 16)
		if miss > 0 {
			return appendHex(b, v)
		}
		ss, n := le64(m, 0), le64(m, 8)
		b = append(b, "{sigmask="...)
		if ss == 0 {
			b = append(b, "NULL"...)
		} else if set, miss := d.buffer(i, false, ss, int(min(n, 8))); miss > 0 || len(set) == 0 {
			b = appendHex(b, ss)
		} else {
			var w uint64
			for k := range set {
				w |= uint64(set[k]) << (8 * k)
			}
			b = appendSigset(b, w)
		}
		b = strconv.AppendUint(append(b, ", sigsetsize="...), n, 10)
		return append(b, '}')
	}
	return appendHex(b, v)
}

func appendTimeval(b, m []byte) []byte {
	b = strconv.AppendInt(append(b, "{tv_sec="...), int64(le64(m, 0)), 10)
	b = strconv.AppendInt(append(b, ", tv_usec="...), int64(le64(m, 8)), 10)
	return append(b, '}')
}

// appendLeft appends ", left {…}": the time a call's timeout argument
// holds after it (nothing if it is NULL or unknown).
func (d *decoder) appendLeft(b []byte, i int, timeval bool) []byte {
	v := d.c.Raw[i]
	if v == 0 {
		return b
	}
	m, miss := d.buffer(i, true, v, 16)
	if miss > 0 {
		return b
	}
	b = append(b, "left "...)
	if timeval {
		return appendTimeval(b, m)
	}
	return appendTimespec(b, m)
}

// selectRet appends select's and pselect6's result: the count, and the
// ready descriptors of each set and the time left.
func (d *decoder) selectRet(b []byte) []byte {
	c := d.c
	b = strconv.AppendInt(b, c.Ret, 10)
	if c.Ret == 0 {
		return append(b, " (Timeout)"...)
	}
	start := len(b)
	b = append(b, " ("...)
	n := fdsetBytes(c.Raw[0])
	for k, name := range [3]string{"in", "out", "except"} {
		p := c.Raw[1+k]
		if p == 0 {
			continue
		}
		m, miss := d.buffer(1+k, true, p, n)
		if miss > 0 {
			continue
		}
		empty := true
		for _, x := range m {
			if x != 0 {
				empty = false
			}
		}
		if empty {
			continue
		}
		if len(b) > start+2 {
			b = append(b, ", "...)
		}
		b = appendFdset(append(append(b, name...), ' '), m, c.Raw[0])
	}
	if c.Raw[4] != 0 {
		if len(b) > start+2 {
			b = append(b, ", "...)
		}
		b = d.appendLeft(b, 4, c.Nr == linux.SysSelect)
	}
	if len(b) == start+2 {
		return b[:start]
	}
	return append(b, ')')
}

// ppollRet appends ppoll's result: poll's, and the time left.
func (d *decoder) ppollRet(b []byte) []byte {
	c := d.c
	b = strconv.AppendInt(b, c.Ret, 10)
	if c.Ret == 0 {
		return append(b, " (Timeout)"...)
	}
	b = append(b, " ("...)
	b = append(b, d.pollOut...)
	if c.Raw[2] != 0 {
		if len(d.pollOut) > 0 {
			b = append(b, ", "...)
		}
		b = d.appendLeft(b, 2, false)
	}
	return append(b, ')')
}

// ioctlHasArg reports whether strace prints ioctl's third argument.
func ioctlHasArg(req uint64) bool { return req != 0x5451 && req != 0x5450 } // FIOCLEX, FIONCLEX

// ioctlArg appends ioctl's third argument, by request.
func (d *decoder) ioctlArg(b []byte) []byte {
	c := d.c
	v := c.Raw[2]
	switch c.Raw[1] {
	case 0x541b, 0x540f: // FIONREAD, TIOCGPGRP: an int written
		if d.failed() || v == 0 {
			return appendPtr(b, v)
		}
		if m, miss := d.buffer(2, true, v, 4); miss == 0 {
			return append(strconv.AppendInt(append(b, '['), int64(int32(le32(m, 0))), 10), ']')
		}
	case 0x5421, 0x5452, 0x5410: // FIONBIO, FIOASYNC, TIOCSPGRP: an int read
		if v == 0 {
			return appendPtr(b, v)
		}
		if m, miss := d.buffer(2, false, v, 4); miss == 0 {
			return append(strconv.AppendInt(append(b, '['), int64(int32(le32(m, 0))), 10), ']')
		}
	case 0x5413, 0x5414: // TIOCGWINSZ (written), TIOCSWINSZ (read)
		out := c.Raw[1] == 0x5413
		if out && d.failed() || v == 0 {
			return appendPtr(b, v)
		}
		if m, miss := d.buffer(2, out, v, 8); miss == 0 {
			b = strconv.AppendUint(append(b, "{ws_row="...), uint64(le16(m, 0)), 10)
			b = strconv.AppendUint(append(b, ", ws_col="...), uint64(le16(m, 2)), 10)
			b = strconv.AppendUint(append(b, ", ws_xpixel="...), uint64(le16(m, 4)), 10)
			b = strconv.AppendUint(append(b, ", ws_ypixel="...), uint64(le16(m, 6)), 10)
			return append(b, '}')
		}
	case 0x5401, 0x5402, 0x5403, 0x5404: // TCGETS (written), TCSETS* (read): struct termios
		out := c.Raw[1] == 0x5401
		if out && d.failed() || v == 0 {
			return appendPtr(b, v)
		}
		if m, miss := d.buffer(2, out, v, linux.TermiosSize); miss == 0 {
			return linux.AppendTermios(b, le32(m, 0), le32(m, 4), le32(m, 8), le32(m, 12))
		}
	case 0x40049409: // FICLONE: the source descriptor
		return strconv.AppendInt(b, int64(int32(v)), 10)
	case 0x80045430: // TIOCGPTN: an int written
		if d.failed() || v == 0 {
			return appendPtr(b, v)
		}
		if m, miss := d.buffer(2, true, v, 4); miss == 0 {
			return append(strconv.AppendInt(append(b, '['), int64(int32(le32(m, 0))), 10), ']')
		}
	case 0x40045431: // TIOCSPTLCK: an int read
		if v == 0 {
			return appendPtr(b, v)
		}
		if m, miss := d.buffer(2, false, v, 4); miss == 0 {
			return append(strconv.AppendInt(append(b, '['), int64(int32(le32(m, 0))), 10), ']')
		}
	default:
		return appendHex(b, v)
	}
	return appendHex(b, v)
}

// cloneArgs appends clone's arguments as strace prints them on x86-64
// (raw order: flags, stack, parent_tid, child_tid, tls): child_stack,
// flags, then parent_tid, child_tidptr and tls when the flags use them.
// What the kernel writes at exit (the tids) starts the resumed part.
func (d *decoder) cloneArgs(b []byte) []byte {
	c := d.c
	flags := c.Raw[0]
	b = appendPtr(append(b, "child_stack="...), c.Raw[1])
	b = append(b, ", flags="...)
	b = linux.CloneFlags.Append(b, flags&^0xff)
	if sig := flags & 0xff; sig != 0 {
		if flags&^0xff != 0 {
			b = append(b, '|')
		}
		b = append(b, linux.SignalName(int(sig))...)
	}
	const parentSettid, childSettid, childCleartid, settls, pidfd = 0x100000, 0x1000000, 0x200000, 0x80000, 0x1000
	if flags&(parentSettid|pidfd) != 0 {
		d.split = len(b)
		b = appendPtr(append(b, ", parent_tid="...), c.Raw[2])
	}
	if flags&(childSettid|childCleartid) != 0 {
		if d.split == 0 {
			d.split = len(b)
		}
		b = appendPtr(append(b, ", child_tidptr="...), c.Raw[3])
	}
	if flags&settls != 0 {
		b = appendPtr(append(b, ", tls="...), c.Raw[4])
	}
	return b
}

// futexArgs appends futex's arguments after the operation, those the
// operation uses, as strace prints them: the value; the timeout for the
// waits; the second value and address for the requeues; the bit set
// for the bitset operations (FUTEX_BITSET_MATCH_ANY when all ones).
func (d *decoder) futexArgs(b []byte) []byte {
	c := d.c
	val := func(b []byte, v uint64) []byte { return strconv.AppendInt(b, int64(int32(v)), 10) }
	bitset := func(b []byte, v uint64) []byte {
		if uint32(v) == 0xffffffff {
			return append(b, "FUTEX_BITSET_MATCH_ANY"...)
		}
		return appendHex(b, uint64(uint32(v)))
	}
	timeout := func(b []byte) []byte {
		v := c.Raw[3]
		if v == 0 {
			return append(b, "NULL"...)
		}
		m, miss := d.buffer(3, false, v, 16)
		if miss > 0 {
			return appendHex(b, v)
		}
		return appendTimespec(b, m)
	}
	b = val(b, c.Raw[2])
	switch c.Raw[1] & 0x7f {
	case 0: // FUTEX_WAIT
		b = timeout(append(b, ", "...))
	case 9: // FUTEX_WAIT_BITSET
		b = timeout(append(b, ", "...))
		b = bitset(append(b, ", "...), c.Raw[5])
	case 10: // FUTEX_WAKE_BITSET
		b = bitset(append(b, ", "...), c.Raw[5])
	case 3: // FUTEX_REQUEUE
		b = val(append(b, ", "...), c.Raw[3])
		b = appendPtr(append(b, ", "...), c.Raw[4])
	case 4, 12: // FUTEX_CMP_REQUEUE, FUTEX_CMP_REQUEUE_PI
		b = val(append(b, ", "...), c.Raw[3])
		b = appendPtr(append(b, ", "...), c.Raw[4])
		b = val(append(b, ", "...), c.Raw[5])
	case 5: // FUTEX_WAKE_OP: the second count, the second address, the operation
		b = strconv.AppendUint(append(b, ", "...), uint64(uint32(c.Raw[3])), 10)
		b = appendPtr(append(b, ", "...), c.Raw[4])
		b = linux.AppendFutexWakeOp(append(b, ", "...), uint32(c.Raw[5]))
	case 1, 7, 8: // FUTEX_WAKE, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI
	default:
		for _, v := range c.Raw[3:] {
			b = appendHex(append(b, ", "...), v)
		}
	}
	return b
}
