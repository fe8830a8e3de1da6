package syscalls

import (
	"encoding/binary"
	"strconv"

	"ttd/internal/linux"
)

// decode fills c's Args, Buffers, Text and RetText from its number, raw
// arguments and result, reading memory through d.m.
func (d *decoder) decode(c *Call) {
	d.c = c
	d.arena = d.arena[:0]
	d.pollOut = d.pollOut[:0:0]
	c.Args, c.Buffers = c.Args[:0], c.Buffers[:0]
	c.Name = linux.SyscallName(c.Nr)
	s, known := sigs[c.Nr]
	b := append(c.Text[:0], c.Name...)
	b = append(b, '(')
	if !known {
		n, ok := nargs[c.Nr]
		if !ok {
			n = 6
		}
		s.args = hexArgs[:n]
	}
	c.Split = -1
	for i, sp := range s.args {
		if (c.Nr == linux.SysOpenat && i == 3 || c.Nr == linux.SysOpen && i == 2) && c.Raw[i-1]&(linux.O_CREAT|linux.O_TMPFILE&^linux.O_DIRECTORY) == 0 {
			break // open's mode is printed only when it is used
		}
		if c.Nr == linux.SysFcntl && i == 2 && !fcntlHasArg(c.Raw[1]) || c.Nr == linux.SysIoctl && i == 2 && !ioctlHasArg(c.Raw[1]) {
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		start := len(b)
		if c.Split < 0 && writtenArg(sp.k, c.Nr) {
			c.Split = start
		}
		var ty ArgType
		var data []byte
		b, ty, data = d.arg(b, i, sp)
		c.Args = append(c.Args, Arg{Type: ty, Value: c.Raw[i], Text: string(b[start:]), Data: data})
	}
	if c.Split < 0 {
		c.Split = len(b)
	}
	if d.split > 0 {
		c.Split, d.split = d.split, 0
	}
	c.Text = append(b, ')')
	c.RetText = d.ret(c.RetText[:0], s.ret)
}

// writtenArg reports whether strace prints an argument of kind k when
// the call returns rather than when it is entered: what the kernel
// writes. A call a thread blocks in prints as "<unfinished ...>" up to
// its first such argument.
func writtenArg(k kind, nr int) bool {
	switch k {
	case kBufOut, kStrOut, kStatOut, kStatxOut, kIovOut, kTimespecOut, kRlimitOut, kSigsetOut, kSigactOut,
		kPipeOut, kDents, kWstatusOut, kUnameOut, kTimeOut, kPtrOut, kSysinfoOut, kCpusetOut, kStatfsOut, kTimevalOut,
		kEpollEventsOut, kStackOut, kU32Out, kGidsOut, kRusageOut, kItimervalOut, kItimerspecOut, kIntOut, kSiginfoOut,
		kSockoptOut, kSocklenOut, kMincoreOut, kPtrValOut, kSizeOut:
		return true
	case kMsghdr:
		return nr == linux.SysRecvmsg
	}
	return false
}

var hexArgs = a(kHex, kHex, kHex, kHex, kHex, kHex)

func fcntlHasArg(cmd uint64) bool {
	switch cmd {
	case 1, 3, 9, 11, 1025, 1032, 1034: // F_GETFD F_GETFL F_GETOWN F_GETSIG F_GETLEASE F_GETPIPE_SZ F_GET_SEALS
		return false
	}
	return true
}

func (d *decoder) failed() bool {
	return d.c.Ret < 0 && d.c.Ret >= -linux.MaxErrno
}

// buffer records a buffer of the call and returns its bytes.
func (d *decoder) buffer(i int, out bool, addr uint64, n int) ([]byte, int) {
	data, miss := d.read(addr, n)
	d.c.Buffers = append(d.c.Buffers, Buffer{Arg: i, Out: out, Addr: addr, Data: data, Missing: miss})
	return data, miss
}

// arg appends argument i's text and says what it is.
func (d *decoder) arg(b []byte, i int, sp arg) ([]byte, ArgType, []byte) {
	c := d.c
	v := c.Raw[i]
	switch sp.k {
	case kInt:
		return strconv.AppendInt(b, int64(int32(v)), 10), ArgInt, nil
	case kLong, kOff:
		return strconv.AppendInt(b, int64(v), 10), ArgInt, nil
	case kUint:
		return strconv.AppendUint(b, v, 10), ArgUint, nil
	case kPtr, kPtrOut:
		return appendPtr(b, v), ArgPtr, nil
	case kFd:
		return strconv.AppendInt(b, int64(int32(v)), 10), ArgFd, nil
	case kDirfd:
		if int32(v) == linux.AtFdcwd {
			return append(b, "AT_FDCWD"...), ArgFd, nil
		}
		return strconv.AppendInt(b, int64(int32(v)), 10), ArgFd, nil
	case kPath:
		if v == 0 {
			return append(b, "NULL"...), ArgString, nil
		}
		s, ok := d.readString(v, 4096)
		if !ok {
			return appendHex(b, v), ArgString, nil
		}
		d.c.Buffers = append(d.c.Buffers, Buffer{Arg: i, Addr: v, Data: s})
		return appendQuoted(b, s, -1), ArgString, s
	case kBufIn:
		n := int(c.Raw[sp.p])
		if n > 1<<30 || v == 0 && n > 0 {
			return appendPtr(b, v), ArgBuffer, nil
		}
		data, miss := d.buffer(i, false, v, n)
		if miss > 0 {
			return appendHex(b, v), ArgBuffer, data
		}
		return appendQuoted(b, data, d.strSize), ArgBuffer, data
	case kBufOut, kStrOut:
		if v == 0 {
			return append(b, "NULL"...), ArgBuffer, nil // a size asked (getxattr, listxattr)
		}
		if d.failed() || c.Ret > 1<<30 {
			return appendPtr(b, v), ArgBuffer, nil
		}
		data, miss := d.buffer(i, true, v, int(c.Ret))
		if miss > 0 {
			return appendHex(b, v), ArgBuffer, data
		}
		shown := data
		if sp.k == kStrOut && c.Nr == linux.SysGetcwd && len(shown) > 0 && shown[len(shown)-1] == 0 {
			shown = shown[:len(shown)-1]
		}
		max := d.strSize
		if c.Nr == linux.SysGetcwd {
			max = -1 // a path: strace prints it whole
		}
		return appendQuoted(b, shown, max), ArgBuffer, data
	case kOpenFlags:
		return linux.AppendOpenFlags(b, v), ArgFlags, nil
	case kMode:
		return linux.AppendOctal(b, v), ArgMode, nil
	case kAtFlags:
		return linux.AtFlags.Append(b, v), ArgFlags, nil
	case kAtAccess:
		return linux.AtAccessFlags.Append(b, v), ArgFlags, nil
	case kAccess:
		if v == 0 {
			return append(b, "F_OK"...), ArgFlags, nil
		}
		return linux.AccessModes.Append(b, v), ArgFlags, nil
	case kProt:
		if v == 0 {
			return append(b, "PROT_NONE"...), ArgFlags, nil
		}
		return linux.ProtFlags.Append(b, v), ArgFlags, nil
	case kMmapFlags:
		return linux.AppendMmapFlags(b, v), ArgFlags, nil
	case kSeek:
		return linux.Seek.Append(b, v, "SEEK_"), ArgFlags, nil
	case kMadvise:
		return linux.Madvise.Append(b, v, "MADV_"), ArgFlags, nil
	case kRename:
		return linux.RenameFlags.Append(b, v), ArgFlags, nil
	case kMsync:
		return linux.MsyncFlags.Append(b, v), ArgFlags, nil
	case kMremap:
		return linux.MremapFlags.Append(b, v), ArgFlags, nil
	case kStatxFlags:
		if v&0x6000 == 0 {
			if v == 0 {
				return append(b, "AT_STATX_SYNC_AS_STAT"...), ArgFlags, nil
			}
			// strace 6 prints the sync type first.
			return linux.StatxFlags.Append(append(b, "AT_STATX_SYNC_AS_STAT|"...), v), ArgFlags, nil
		}
		return linux.StatxFlags.Append(b, v), ArgFlags, nil
	case kStatxMask:
		return linux.StatxMask.Append(b, v), ArgFlags, nil
	case kPipe2Flags:
		return linux.Pipe2Flags.Append(b, v), ArgFlags, nil
	case kGrnd:
		return linux.GetrandomFlags.Append(b, v), ArgFlags, nil
	case kEpollCreate:
		return linux.EpollCreateFlags.AppendPrefixed(b, v, "EPOLL_"), ArgFlags, nil
	case kEpollOp:
		return linux.EpollCtl.Append(b, v, "EPOLL_CTL_"), ArgFlags, nil
	case kPrioWhich:
		return linux.PrioWhich.Append(b, v, "PRIO_"), ArgFlags, nil
	case kMlockall:
		return linux.MlockallFlags.AppendPrefixed(b, v, "MCL_"), ArgFlags, nil
	case kMlock2:
		return linux.Mlock2Flags.AppendPrefixed(b, v, "MLOCK_"), ArgFlags, nil
	case kSigHow:
		return linux.SigprocmaskHow.Append(b, v, "SIG_"), ArgFlags, nil
	case kSignal:
		if v == 0 {
			return append(b, '0'), ArgInt, nil
		}
		return append(b, linux.SignalName(int(v))...), ArgFlags, nil
	case kClock:
		return linux.Clocks.Append(b, v, "CLOCK_"), ArgFlags, nil
	case kRlimitRes:
		return linux.Rlimits.Append(b, v, "RLIMIT_"), ArgFlags, nil
	case kFamily:
		return linux.AddressFamilies.Append(b, v, "AF_"), ArgFlags, nil
	case kSockType:
		b = linux.SocketTypes.Append(b, v&0xf, "SOCK_")
		if v&^0xf != 0 {
			b = linux.SocketFlags.Append(append(b, '|'), v&^0xf)
		}
		return b, ArgFlags, nil
	case kFutexOp:
		return linux.AppendFutexOp(b, v), ArgFlags, nil
	case kWaitOpts:
		return linux.WaitOptions.Append(b, v), ArgFlags, nil
	case kArchPrctl:
		return linux.ArchPrctl.Append(b, v, "ARCH_"), ArgFlags, nil
	case kIoctl:
		return linux.AppendIoctl(b, v), ArgFlags, nil
	case kIoctlArg:
		return d.ioctlArg(b), ArgStruct, nil
	case kFdsetIn, kTimespecEntry, kTimevalEntry, kPselectMask:
		return d.selectArg(b, i, sp), ArgStruct, nil
	case kFcntlCmd:
		return linux.Fcntl.Append(b, v, "F_"), ArgFlags, nil
	case kFcntlArg:
		switch c.Raw[1] {
		case 2: // F_SETFD
			return linux.FdFlags.Append(b, v), ArgFlags, nil
		case 4: // F_SETFL
			return linux.AppendOpenFlags(b, v), ArgFlags, nil
		case 0, 1030, 10, 8, 1031: // F_DUPFD F_DUPFD_CLOEXEC F_SETSIG F_SETOWN F_SETPIPE_SZ
			return strconv.AppendInt(b, int64(int32(v)), 10), ArgInt, nil
		case 6, 7, 37, 38: // F_SETLK F_SETLKW F_OFD_SETLK F_OFD_SETLKW
			return d.flockArg(b, v, false), ArgStruct, nil
		case 5, 36: // F_GETLK F_OFD_GETLK
			return d.flockArg(b, v, true), ArgStruct, nil
		}
		return appendPtr(b, v), ArgPtr, nil
	case kMsgFlags:
		return linux.MsgFlags.Append(b, v), ArgFlags, nil
	case kShutdown:
		return linux.Shutdown.Append(b, v, "SHUT_"), ArgFlags, nil
	case kSigreturn:
		var mask [8]byte
		if d.frame == 0 || d.m.Read(d.frame+sigmaskOff, mask[:]) != 0 {
			return append(b, "{mask=?}"...), ArgStruct, nil
		}
		b = appendSigset(append(b, "{mask="...), le64(mask[:], 0))
		return append(b, '}'), ArgStruct, nil
	case kCloneAll:
		return d.cloneArgs(b), ArgFlags, nil
	case kFutexRest:
		return d.futexArgs(b), ArgInt, nil
	case kCloneFlags:
		sig := v & 0xff
		b = linux.CloneFlags.Append(b, v&^0xff)
		if sig != 0 {
			b = append(append(b, '|'), linux.SignalName(int(sig))...)
		}
		return b, ArgFlags, nil
	case kStatOut, kStatxOut, kIovIn, kIovOut, kTimespecIn, kTimespecOut, kTimevalOut, kUtimes, kRlimitIn, kRlimitOut,
		kSigsetIn, kSigsetOut, kSigactIn, kSigactOut, kPipeOut, kSockaddrIn, kDents, kWstatusOut, kUnameOut,
		kPollfds, kCloneArgs, kTimeOut, kSiginfoIn, kMsghdr, kSysinfoOut, kCpusetOut, kStatfsOut, kEpollEventIn, kEpollEventsOut, kStackIn, kStackOut,
		kU32Out, kGidsOut:
		return d.structArg(b, i, sp), ArgStruct, nil
	case kSocklenFail:
		// Failed, the call wrote nothing: the length is the input.
		// (A success rewrites it, and its address is printed.)
		if d.failed() && v != 0 {
			if m, miss := d.buffer(i, false, v, 4); miss == 0 {
				return append(strconv.AppendUint(append(b, '['), uint64(le32(m, 0)), 10), ']'), ArgStruct, nil
			}
		}
		return appendPtr(b, v), ArgPtr, nil
	case kFadvise:
		return linux.FadviseAdvice.Append(b, v, "POSIX_FADV_"), ArgFlags, nil
	case kXattrFlags:
		return linux.XattrFlags.Append(b, v), ArgFlags, nil
	case kSfdFlags:
		return linux.SignalfdFlags.Append(b, v), ArgFlags, nil
	}
	if b, ty, ok := d.controlArg(b, i, sp); ok {
		return b, ty, nil
	}
	if b, ty, ok := d.sockArg(b, i, sp); ok {
		return b, ty, nil
	}
	return appendHex(b, v), ArgUint, nil
}

// ret appends the result as strace prints it.
func (d *decoder) ret(b []byte, rk retKind) []byte {
	c := d.c
	if rk == rNone || c.NoReturn {
		c.NoReturn = true
		return append(b, '?')
	}
	if c.Ret == -int64(linux.EINTR) && (c.Nr == linux.SysRtSigsuspend || c.Nr == linux.SysPause) {
		// The kernel's answer is ERESTARTNOHAND, which the delivery
		// of the signal to a handler turns into EINTR.
		return append(b, "? ERESTARTNOHAND (To be restarted if no handler)"...)
	}
	if d.failed() {
		b = append(b, "-1 "...)
		e := linux.Errno(-c.Ret)
		b = append(b, e.Name()...)
		b = append(b, " ("...)
		b = append(b, e.Message()...)
		return append(b, ')')
	}
	if b, ok := d.controlRet(b, rk); ok {
		return b
	}
	v := uint64(c.Ret)
	switch rk {
	case rHex:
		return appendHex(b, v)
	case rOct:
		return linux.AppendOctal(b, v)
	case rSelect:
		return d.selectRet(b)
	case rPpoll:
		return d.ppollRet(b)
	case rPoll:
		b = strconv.AppendInt(b, c.Ret, 10)
		if c.Ret == 0 {
			return append(b, " (Timeout)"...)
		}
		if d.pollOut != nil {
			b = append(append(b, " ("...), d.pollOut...)
			b = append(b, ')')
		}
		return b
	case rFcntl:
		switch c.Raw[1] {
		case 1: // F_GETFD
			if v == 0 {
				return append(b, '0')
			}
			b = appendHex(b, v)
			return append(linux.FdFlags.Append(append(b, " (flags "...), v), ')')
		case 3: // F_GETFL
			b = appendHex(b, v)
			return append(linux.AppendOpenFlags(append(b, " (flags "...), v), ')')
		}
	}
	return strconv.AppendInt(b, c.Ret, 10)
}

func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
func le32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func le16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }
