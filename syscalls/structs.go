package syscalls

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"ttd/internal/linux"
	"ttd/tracefile"
)

// structArg appends a struct argument as strace prints it (abbreviated,
// as without -v), recording its bytes as a buffer. An output struct of a
// failed call, a NULL pointer or memory the re-simulation does not know
// prints as the address.
func (d *decoder) structArg(b []byte, i int, sp arg) []byte {
	c := d.c
	v := c.Raw[i]
	if v == 0 {
		return append(b, "NULL"...)
	}
	out := false
	switch sp.k {
	case kStatOut, kStatxOut, kIovOut, kTimespecOut, kRlimitOut, kSigsetOut, kSigactOut, kPipeOut, kDents, kWstatusOut, kUnameOut,
		kSysinfoOut, kCpusetOut, kStatfsOut, kTimevalOut, kEpollEventsOut, kStackOut, kU32Out, kGidsOut:
		out = true
		if d.failed() {
			if sp.k != kIovOut {
				return appendHex(b, v)
			}
			out = false // a failed readv's vector is shown, its buffers as addresses
		}
	}
	size := 0
	switch sp.k {
	case kStatOut:
		size = 144
	case kStatxOut:
		size = 256
	case kIovIn, kIovOut:
		size = 16 * int(min(c.Raw[sp.p], 1024))
	case kTimespecIn, kTimespecOut, kTimevalOut, kRlimitIn, kRlimitOut:
		size = 16
	case kUtimes:
		size = 32
	case kSigsetIn, kSigsetOut:
		if c.Raw[sp.p] != 8 { // the kernel's sigset_t is 8 bytes: any other size is refused
			return appendHex(b, v)
		}
		size = 8
	case kSigactIn, kSigactOut:
		size = 32
	case kPipeOut:
		size = 8
	case kStackIn, kStackOut:
		size = 24
	case kU32Out:
		size = 4
	case kGidsOut:
		size = 4 * int(min(max(c.Ret, 0), 1<<16))
	case kEpollEventIn:
		size = 12
		if c.Raw[1] == 2 { // EPOLL_CTL_DEL: the kernel reads no event
			return appendHex(b, v)
		}
	case kEpollEventsOut:
		size = 12 * int(min(max(c.Ret, 0), 1024))
	case kSockaddrIn:
		size = int(min(c.Raw[sp.p], 128))
	case kDents:
		size = int(c.Ret)
	case kWstatusOut:
		size = 4
		if c.Ret == 0 {
			return appendHex(b, v)
		}
	case kUnameOut:
		size = 390
	case kSysinfoOut:
		size = 112
	case kStatfsOut:
		size = 120
	case kCpusetOut:
		size = int(min(c.Ret, 1<<12))
	case kPollfds:
		size = 8 * int(min(c.Raw[sp.p], 1024))
	case kCloneArgs:
		size = int(min(c.Raw[sp.p], 88))
		if size < 64 {
			return appendHex(b, v)
		}
	case kTimeOut:
		size = 8
		out = true
	case kSiginfoIn:
		size = 32
	case kMsghdr:
		size = 56
		out = c.Nr == linux.SysRecvmsg
		if out && d.failed() {
			return appendHex(b, v)
		}
	}
	m, miss := d.buffer(i, out, v, size)
	if miss > 0 {
		if sp.k == kSockaddrIn {
			if m, ok := d.knownSockaddr(v, size); ok {
				return appendSockaddr(b, m)
			}
		}
		return appendHex(b, v)
	}
	switch sp.k {
	case kStatOut:
		mode := uint64(le32(m, 24))
		b = append(b, "{st_mode="...)
		b = linux.AppendMode(b, mode)
		if t := mode & linux.S_IFMT; t == linux.S_IFCHR || t == linux.S_IFBLK {
			b = appendMakedev(append(b, ", st_rdev="...), le64(m, 40))
		} else {
			b = strconv.AppendInt(append(b, ", st_size="...), int64(le64(m, 48)), 10)
		}
		return append(b, ", ...}"...)
	case kStatxOut:
		b = linux.StatxMask.Append(append(b, "{stx_mask="...), uint64(le32(m, 0)))
		b = strconv.AppendUint(append(b, ", stx_attributes="...), le64(m, 8), 10)
		b = linux.AppendMode(append(b, ", stx_mode="...), uint64(le16(m, 28)))
		b = strconv.AppendUint(append(b, ", stx_size="...), le64(m, 40), 10)
		return append(b, ", ...}"...)
	case kIovIn, kIovOut:
		n := len(m) / 16
		left := int64(-1) // bytes of data the call moved (readv: the result)
		addrs := sp.k == kIovOut && d.failed()
		if out {
			left = c.Ret
		}
		b = append(b, '[')
		for k := 0; k < n; k++ {
			if k > 0 {
				b = append(b, ", "...)
			}
			base, l := le64(m, 16*k), le64(m, 16*k+8)
			b = append(b, "{iov_base="...)
			show := l
			if left >= 0 && uint64(left) < show {
				show = uint64(left)
			}
			switch {
			case addrs || l > 1<<30:
				b = appendPtr(b, base)
			case left == 0: // the data ran out before this buffer
				b = append(b, `""`...)
			default:
				data, miss := d.buffer(i, out, base, int(show))
				if miss > 0 {
					b = appendHex(b, base)
				} else {
					b = appendQuoted(b, data, d.strSize)
				}
			}
			if left > 0 {
				left -= int64(show)
			}
			b = strconv.AppendUint(append(b, ", iov_len="...), l, 10)
			b = append(b, '}')
		}
		return append(b, ']')
	case kTimespecIn, kTimespecOut:
		return appendTimespec(b, m)
	case kTimevalOut:
		b = strconv.AppendInt(append(b, "{tv_sec="...), int64(le64(m, 0)), 10)
		b = strconv.AppendInt(append(b, ", tv_usec="...), int64(le64(m, 8)), 10)
		return append(b, '}')
	case kUtimes:
		b = appendTimeComment(appendTimespec(append(b, '['), m[:16]), m[:16])
		b = appendTimeComment(appendTimespec(append(b, ", "...), m[16:]), m[16:])
		return append(b, ']')
	case kRlimitIn, kRlimitOut:
		b = appendRlim(append(b, "{rlim_cur="...), le64(m, 0))
		b = appendRlim(append(b, ", rlim_max="...), le64(m, 8))
		return append(b, '}')
	case kSigsetIn, kSigsetOut:
		var set uint64
		for k := 0; k < len(m) && k < 8; k++ {
			set |= uint64(m[k]) << (8 * k)
		}
		return appendSigset(b, set)
	case kSigactIn, kSigactOut:
		h, flags, restorer, mask := le64(m, 0), le64(m, 8), le64(m, 16), le64(m, 24)
		b = append(b, "{sa_handler="...)
		switch h {
		case 0:
			b = append(b, "SIG_DFL"...)
		case 1:
			b = append(b, "SIG_IGN"...)
		default:
			b = appendHex(b, h)
		}
		b = appendSigset(append(b, ", sa_mask="...), mask)
		b = linux.SigactionFlags.Append(append(b, ", sa_flags="...), flags)
		if flags&0x04000000 != 0 {
			b = appendPtr(append(b, ", sa_restorer="...), restorer)
		}
		return append(b, '}')
	case kU32Out, kGidsOut:
		b = append(b, '[')
		for k := 0; k+4 <= len(m); k += 4 {
			if k > 0 {
				b = append(b, ", "...)
			}
			if v := le32(m, k); v == 0xffffffff {
				b = append(b, "-1"...) // strace's (uid_t)-1
			} else {
				b = strconv.AppendUint(b, uint64(v), 10)
			}
		}
		return append(b, ']')
	case kStackIn, kStackOut:
		b = appendPtr(append(b, "{ss_sp="...), le64(m, 0))
		b = linux.SigaltstackFlags.AppendPrefixed(append(b, ", ss_flags="...), uint64(le32(m, 8)), "SS_")
		b = strconv.AppendUint(append(b, ", ss_size="...), le64(m, 16), 10)
		return append(b, '}')
	case kEpollEventIn:
		return appendEpollEvent(b, m)
	case kEpollEventsOut:
		b = append(b, '[')
		for k := 0; k+12 <= len(m); k += 12 {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = appendEpollEvent(b, m[k:])
		}
		return append(b, ']')
	case kPipeOut:
		b = strconv.AppendInt(append(b, '['), int64(int32(le32(m, 0))), 10)
		b = strconv.AppendInt(append(b, ", "...), int64(int32(le32(m, 4))), 10)
		return append(b, ']')
	case kSockaddrIn:
		return appendSockaddr(b, m)
	case kDents:
		n := 0
		for off := 0; off+19 <= len(m); n++ {
			rl := int(le16(m, off+16))
			if rl == 0 {
				break
			}
			off += rl
		}
		b = appendHex(b, v)
		b = strconv.AppendInt(append(b, " /* "...), int64(n), 10)
		return append(b, " entries */"...)
	case kWstatusOut:
		return appendWstatus(b, le32(m, 0))
	case kTimeOut:
		return append(strconv.AppendInt(append(b, '['), int64(le64(m, 0)), 10), ']')
	case kSiginfoIn:
		rec := tracefile.Signal{Signo: int(int32(le32(m, 0))), Code: int(int32(le32(m, 8)))}
		return appendSiginfoBytes(b, &rec, m)
	case kMsghdr:
		return d.appendMsghdr(b, i, m, out)
	case kPollfds:
		b = append(b, '[')
		ready := 0
		for k := 0; k+8 <= len(m); k += 8 {
			if k > 0 {
				b = append(b, ", "...)
			}
			fd, ev, rev := int32(le32(m, k)), uint64(le16(m, k+4)), uint64(le16(m, k+6))
			b = strconv.AppendInt(append(b, "{fd="...), int64(fd), 10)
			if fd >= 0 {
				b = linux.PollEvents.Append(append(b, ", events="...), ev)
			}
			b = append(b, '}')
			if rev != 0 && !d.failed() {
				if ready > 0 {
					d.pollOut = append(d.pollOut, ", "...)
				} else {
					d.pollOut = append(d.pollOut, '[')
				}
				ready++
				d.pollOut = strconv.AppendInt(append(d.pollOut, "{fd="...), int64(fd), 10)
				d.pollOut = append(linux.PollEvents.Append(append(d.pollOut, ", revents="...), rev), '}')
			}
		}
		if ready > 0 {
			d.pollOut = append(d.pollOut, ']')
		}
		return append(b, ']')
	case kCloneArgs:
		flags := le64(m, 0)
		b = linux.CloneFlags.Append(append(b, "{flags="...), flags)
		if flags&0x1000 != 0 {
			b = appendPtr(append(b, ", pidfd="...), le64(m, 8))
		}
		if flags&(0x1000000|0x200000) != 0 {
			b = appendPtr(append(b, ", child_tid="...), le64(m, 16))
		}
		if flags&0x100000 != 0 {
			b = appendPtr(append(b, ", parent_tid="...), le64(m, 24))
		}
		if sig := le64(m, 32); sig != 0 {
			b = append(append(b, ", exit_signal="...), linux.SignalName(int(sig))...)
		} else {
			b = append(b, ", exit_signal=0"...)
		}
		b = appendPtr(append(b, ", stack="...), le64(m, 40))
		b = appendHex(append(b, ", stack_size="...), le64(m, 48))
		if flags&0x80000 != 0 {
			b = appendPtr(append(b, ", tls="...), le64(m, 56))
		}
		b = append(b, '}')
		if flags&0x100000 != 0 && !d.failed() {
			if pt := le64(m, 24); pt != 0 {
				tid, miss := d.buffer(i, true, pt, 4)
				if miss == 0 {
					b = strconv.AppendInt(append(b, " => {parent_tid=["...), int64(int32(le32(tid, 0))), 10)
					b = append(b, "]}"...)
				}
			}
		}
		return b
	case kStatfsOut:
		return appendStatfs(b, m)
	case kSysinfoOut:
		u := func(name string, off int) { b = strconv.AppendUint(append(append(b, name...), '='), le64(m, off), 10) }
		b = strconv.AppendInt(append(b, "{uptime="...), int64(le64(m, 0)), 10)
		b = append(b, ", loads=["...)
		for k := 0; k < 3; k++ {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendUint(b, le64(m, 8+8*k), 10)
		}
		b = append(b, "], "...)
		for k, name := range []string{"totalram", "freeram", "sharedram", "bufferram", "totalswap", "freeswap"} {
			u(name, 32+8*k)
			b = append(b, ", "...)
		}
		b = strconv.AppendUint(append(b, "procs="...), uint64(le16(m, 80)), 10)
		u(", totalhigh", 88)
		u(", freehigh", 96)
		b = strconv.AppendUint(append(b, ", mem_unit="...), uint64(le32(m, 104)), 10)
		return append(b, '}')
	case kCpusetOut:
		return appendCpuset(b, m)
	case kUnameOut:
		field := func(k int) []byte {
			f := m[65*k : 65*k+65]
			for j, c := range f {
				if c == 0 {
					return f[:j]
				}
			}
			return f
		}
		b = appendQuoted(append(b, "{sysname="...), field(0), -1)
		b = appendQuoted(append(b, ", nodename="...), field(1), -1)
		return append(b, ", ...}"...)
	}
	return appendHex(b, v)
}

func appendMakedev(b []byte, dev uint64) []byte {
	major := dev>>8&0xfff | dev>>32&^0xfff
	minor := dev&0xff | dev>>12&^0xff
	b = appendHex(append(b, "makedev("...), major)
	return append(appendHex(append(b, ", "...), minor), ')')
}

func appendTimespec(b, m []byte) []byte {
	sec, nsec := int64(le64(m, 0)), int64(le64(m, 8))
	b = strconv.AppendInt(append(b, "{tv_sec="...), sec, 10)
	b = append(b, ", tv_nsec="...)
	switch nsec {
	case 1<<30 - 1:
		b = append(b, "UTIME_NOW"...)
	case 1<<30 - 2:
		b = append(b, "UTIME_OMIT"...)
	default:
		b = strconv.AppendInt(b, nsec, 10)
	}
	return append(b, '}')
}

// appendTimeComment appends the date strace adds after a time it sets
// (utimensat): " /* 2001-09-09T01:46:40+0000 */", in local time.
func appendTimeComment(b, m []byte) []byte {
	sec, nsec := int64(le64(m, 0)), int64(le64(m, 8))
	if nsec == 1<<30-1 || nsec == 1<<30-2 || nsec < 0 || nsec >= 1e9 {
		return b
	}
	tm := time.Unix(sec, nsec)
	b = tm.AppendFormat(append(b, " /* "...), "2006-01-02T15:04:05")
	if nsec != 0 {
		b = append(b, '.')
		b = append(b, fmt.Sprintf("%09d", nsec)...)
	}
	b = tm.AppendFormat(b, "-0700")
	return append(b, " */"...)
}

func appendRlim(b []byte, v uint64) []byte {
	if v == ^uint64(0) {
		return append(b, "RLIM64_INFINITY"...)
	}
	if v > 0 && v%1024 == 0 {
		return append(strconv.AppendUint(b, v/1024, 10), "*1024"...)
	}
	return strconv.AppendUint(b, v, 10)
}

// appendSigset appends a signal set as strace does: "[INT TERM]", and
// "~[...]" listing the signals left out when more than half are in.
func appendSigset(b []byte, set uint64) []byte {
	n := 0
	for s := 0; s < 64; s++ {
		if set>>s&1 != 0 {
			n++
		}
	}
	want := uint64(1)
	if n > 32 {
		b = append(b, '~')
		want = 0
	}
	b = append(b, '[')
	first := true
	for s := 1; s <= 64; s++ {
		if set>>(s-1)&1 != want {
			continue
		}
		if !first {
			b = append(b, ' ')
		}
		first = false
		b = append(b, linux.SignalName(s)[3:]...)
	}
	return append(b, ']')
}

func appendWstatus(b []byte, st uint32) []byte {
	switch {
	case st&0x7f == 0:
		b = append(b, "[{WIFEXITED(s) && WEXITSTATUS(s) == "...)
		b = strconv.AppendUint(b, uint64(st>>8&0xff), 10)
		return append(b, "}]"...)
	case st&0xff == 0x7f:
		b = append(b, "[{WIFSTOPPED(s) && WSTOPSIG(s) == "...)
		return append(append(b, linux.SignalName(int(st>>8&0xff))...), "}]"...)
	default:
		b = append(b, "[{WIFSIGNALED(s) && WTERMSIG(s) == "...)
		b = append(b, linux.SignalName(int(st&0x7f))...)
		if st&0x80 != 0 {
			b = append(b, " && WCOREDUMP(s)"...)
		}
		return append(b, "}]"...)
	}
}

// knownSockaddr returns the part of the struct sockaddr of size bytes at
// addr that strace prints, when the recording holds it though not the
// whole struct: a program that fills a struct sockaddr_un's path with
// strcpy passes sizeof the struct, whose bytes after the path's NUL it
// never wrote (glibc's connect to nscd's socket does).
func (d *decoder) knownSockaddr(addr uint64, size int) ([]byte, bool) {
	fam, miss := d.read(addr, 2)
	if miss > 0 || size < 2 {
		return nil, false
	}
	switch le16(fam, 0) {
	case 1: // AF_UNIX: the path up to its NUL (an abstract one is all of it)
		fam = append([]byte(nil), fam...)
		path, ok := d.readString(addr+2, size-2)
		if !ok || len(path) == 0 {
			return nil, false
		}
		return append(fam, path...), true
	case 2: // AF_INET: sin_zero need not be known
		if size < 8 {
			return nil, false
		}
		m, miss := d.read(addr, 8)
		return m, miss == 0
	}
	return nil, false
}

// flockArg appends fcntl's struct flock as strace prints it: the lock an
// F_SETLK asks for or, after an F_GETLK (get), the lock in the way, with
// its l_pid.
func (d *decoder) flockArg(b []byte, v uint64, get bool) []byte {
	if v == 0 {
		return append(b, "NULL"...)
	}
	if get && d.failed() {
		return appendHex(b, v)
	}
	m, miss := d.buffer(2, get, v, 32)
	if miss > 0 {
		return appendHex(b, v)
	}
	b = linux.LockTypes.Append(append(b, "{l_type="...), uint64(le16(m, 0)), "F_")
	b = linux.Seek.Append(append(b, ", l_whence="...), uint64(le16(m, 2)), "SEEK_")
	b = strconv.AppendInt(append(b, ", l_start="...), int64(le64(m, 8)), 10)
	b = strconv.AppendInt(append(b, ", l_len="...), int64(le64(m, 16)), 10)
	if get {
		b = strconv.AppendInt(append(b, ", l_pid="...), int64(int32(le32(m, 24))), 10)
	}
	return append(b, '}')
}

func appendSockaddr(b, m []byte) []byte {
	if len(m) < 2 {
		return append(b, "{}"...)
	}
	fam := uint64(le16(m, 0))
	b = linux.AddressFamilies.Append(append(b, "{sa_family="...), fam, "AF_")
	switch {
	case fam == 1: // AF_UNIX
		p := m[2:]
		for j, c := range p {
			if c == 0 && j > 0 {
				p = p[:j]
				break
			}
		}
		if len(p) > 0 && p[0] == 0 {
			b = append(b, ", sun_path=@"...)
			b = appendQuoted(b, p[1:], -1)
		} else {
			b = appendQuoted(append(b, ", sun_path="...), p, -1)
		}
	case fam == 2 && len(m) >= 8: // AF_INET
		b = strconv.AppendUint(append(b, ", sin_port=htons("...), uint64(m[2])<<8|uint64(m[3]), 10)
		b = append(b, "), sin_addr=inet_addr(\""...)
		for k := 0; k < 4; k++ {
			if k > 0 {
				b = append(b, '.')
			}
			b = strconv.AppendUint(b, uint64(m[4+k]), 10)
		}
		b = append(b, "\")"...)
	case fam == 10 && len(m) >= 28: // AF_INET6
		b = strconv.AppendUint(append(b, ", sin6_port=htons("...), uint64(m[2])<<8|uint64(m[3]), 10)
		b = strconv.AppendUint(append(b, "), sin6_flowinfo=htonl("...), uint64(binary.BigEndian.Uint32(m[4:])), 10)
		b = netip.AddrFrom16([16]byte(m[8:24])).AppendTo(append(b, "), inet_pton(AF_INET6, \""...))
		b = strconv.AppendUint(append(b, "\", &sin6_addr), sin6_scope_id="...), uint64(le32(m, 24)), 10)
	case fam == 16 && len(m) >= 12: // AF_NETLINK
		b = strconv.AppendUint(append(b, ", nl_pid="...), uint64(le32(m, 4)), 10)
		// C's %#08x: eight characters, "0x" counted unless the value is 0.
		v := uint64(le32(m, 8))
		g := strconv.AppendUint(nil, v, 16)
		b = append(b, ", nl_groups="...)
		width := 8
		if v != 0 {
			b, width = append(b, "0x"...), 6
		}
		for k := len(g); k < width; k++ {
			b = append(b, '0')
		}
		b = append(b, g...)
	}
	return append(b, '}')
}

// appendMsghdr appends a struct msghdr: its iovecs (for recvmsg, the
// bytes received), its control messages (SCM_RIGHTS descriptors).
func (d *decoder) appendMsghdr(b []byte, i int, m []byte, out bool) []byte {
	name, namelen := le64(m, 0), le32(m, 8)
	iov, iovlen := le64(m, 16), le64(m, 24)
	ctl, ctllen, flags := le64(m, 32), le64(m, 40), le32(m, 48)
	b = appendPtr(append(b, "{msg_name="...), name)
	b = strconv.AppendUint(append(b, ", msg_namelen="...), uint64(namelen), 10)
	b = append(b, ", msg_iov="...)
	left := int64(-1)
	if out {
		left = d.c.Ret
	}
	b = d.appendIovec(b, i, iov, min(iovlen, 1024), out, left)
	b = strconv.AppendUint(append(b, ", msg_iovlen="...), iovlen, 10)
	if ctllen > 0 {
		b = append(b, ", msg_control="...)
		cm, miss := d.buffer(i, out, ctl, int(min(ctllen, 4096)))
		if miss > 0 {
			b = appendHex(b, ctl)
		} else {
			b = append(b, '[')
			for off := 0; off+16 <= len(cm); {
				l := int(le64(cm, off))
				if l < 16 || off+l > len(cm) {
					break
				}
				if off > 0 {
					b = append(b, ", "...)
				}
				level, typ := le32(cm, off+8), le32(cm, off+12)
				b = strconv.AppendInt(append(b, "{cmsg_len="...), int64(l), 10)
				if level == 1 {
					b = append(b, ", cmsg_level=SOL_SOCKET"...)
				} else {
					b = strconv.AppendUint(append(b, ", cmsg_level="...), uint64(level), 10)
				}
				if level == 1 && typ == 1 {
					b = append(b, ", cmsg_type=SCM_RIGHTS, cmsg_data=["...)
					for k := off + 16; k+4 <= off+l; k += 4 {
						if k > off+16 {
							b = append(b, ", "...)
						}
						b = strconv.AppendInt(b, int64(int32(le32(cm, k))), 10)
					}
					b = append(b, "]}"...)
				} else {
					b = strconv.AppendUint(append(b, ", cmsg_type="...), uint64(typ), 10)
					b = append(b, '}')
				}
				off += (l + 7) &^ 7
			}
			b = append(b, ']')
		}
	}
	b = strconv.AppendUint(append(b, ", msg_controllen="...), ctllen, 10)
	b = linux.MsgFlags.Append(append(b, ", msg_flags="...), uint64(flags))
	return append(b, '}')
}

// appendIovec appends n struct iovec at addr with their bytes (left: the
// bytes the call moved, -1 for all).
func (d *decoder) appendIovec(b []byte, i int, addr, n uint64, out bool, left int64) []byte {
	m, miss := d.buffer(i, out, addr, int(16*n))
	if miss > 0 {
		return appendHex(b, addr)
	}
	b = append(b, '[')
	for k := 0; k < int(n); k++ {
		if k > 0 {
			b = append(b, ", "...)
		}
		base, l := le64(m, 16*k), le64(m, 16*k+8)
		show := l
		if left >= 0 && uint64(left) < show {
			show = uint64(left)
		}
		b = append(b, "{iov_base="...)
		if left == 0 || l > 1<<30 {
			b = appendPtr(b, base)
		} else if data, miss := d.buffer(i, out, base, int(show)); miss > 0 {
			b = appendHex(b, base)
		} else {
			b = appendQuoted(b, data, d.strSize)
		}
		if left > 0 {
			left -= int64(show)
		}
		b = strconv.AppendUint(append(b, ", iov_len="...), l, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendStatfs appends a struct statfs as strace prints it:
// {f_type=EXT2_SUPER_MAGIC, f_bsize=4096, …, f_fsid={val=[0x4d4692b0,
// 0x79e99a49]}, f_namelen=255, f_frsize=4096, f_flags=ST_VALID|ST_RELATIME}.
func appendStatfs(b []byte, m []byte) []byte {
	b = append(b, "{f_type="...)
	if name, ok := linux.FsMagic.Name(le64(m, 0)); ok {
		b = append(b, name...)
	} else {
		b = appendHex(b, le64(m, 0))
	}
	for k, name := range []string{"f_bsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree"} {
		b = strconv.AppendUint(append(append(append(b, ", "...), name...), '='), le64(m, 8+8*k), 10)
	}
	b = appendHex(append(b, ", f_fsid={val=["...), uint64(le32(m, 56)))
	b = appendHex(append(b, ", "...), uint64(le32(m, 60)))
	b = strconv.AppendUint(append(b, "]}, f_namelen="...), le64(m, 64), 10)
	b = strconv.AppendUint(append(b, ", f_frsize="...), le64(m, 72), 10)
	b = linux.StatfsFlags.Append(append(b, ", f_flags="...), le64(m, 80))
	return append(b, '}')
}

// appendEpollEvent appends a packed struct epoll_event (events, then the
// 64-bit data at byte 4) as strace prints it.
func appendEpollEvent(b []byte, m []byte) []byte {
	b = linux.EpollEvents.AppendPrefixed(append(b, "{events="...), uint64(le32(m, 0)), "EPOLL")
	data := le64(m, 4)
	b = strconv.AppendUint(append(b, ", data={u32="...), data&0xffffffff, 10)
	b = strconv.AppendUint(append(b, ", u64="...), data, 10)
	return append(b, "}}"...)
}
