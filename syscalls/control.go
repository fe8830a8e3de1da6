package syscalls

import (
	"strconv"

	"ttd/internal/linux"
	"ttd/tracefile"
)

// The decoders of the calls that control a process: prctl, getrusage,
// the interval and POSIX timers, timerfd, waitid, rt_sigtimedwait and
// the scheduler's parameters, as strace prints them.

// controlArg appends an argument of the kinds this file decodes; ok is
// false for any other kind.
func (d *decoder) controlArg(b []byte, i int, sp arg) (_ []byte, ty ArgType, ok bool) {
	v := d.c.Raw[i]
	switch sp.k {
	case kPrctlAll:
		return d.prctlArgs(b), ArgFlags, true
	case kRusageWho:
		return linux.RusageWho.Append(b, uint64(int64(int32(v))), "RUSAGE_"), ArgFlags, true
	case kItimerWhich:
		return linux.Itimers.Append(b, v, "ITIMER_"), ArgFlags, true
	case kTimerFlags:
		return linux.TimerFlags.Append(b, v), ArgFlags, true
	case kTfdFlags:
		return linux.TimerfdFlags.Append(b, v), ArgFlags, true
	case kTfdSettime:
		return linux.TimerfdSettimeFlags.Append(b, v), ArgFlags, true
	case kIdtype:
		return linux.Idtypes.Append(b, v, "P_"), ArgFlags, true
	case kIoprioWhich:
		return linux.IoprioWho.Append(b, v, "IOPRIO_WHO_"), ArgFlags, true
	case kIoprio:
		return appendIoprio(b, v), ArgFlags, true
	case kCapHeader:
		return d.capHeader(b, i), ArgStruct, true
	case kCapData:
		return d.capData(b, i), ArgStruct, true
	case kInotifyMask:
		return linux.InotifyMask.Append(b, uint64(uint32(v))), ArgFlags, true
	case kInotifyInit:
		return linux.InotifyInitFlags.Append(b, v), ArgFlags, true
	case kPtraceReq:
		return linux.PtraceRequests.Append(b, v, "PTRACE_"), ArgFlags, true
	case kPtraceData:
		switch d.c.Raw[0] {
		case linux.PTRACE_SETOPTIONS, linux.PTRACE_SEIZE:
			return linux.PtraceOptions.Append(b, v), ArgFlags, true
		case linux.PTRACE_CONT, linux.PTRACE_SYSCALL, linux.PTRACE_SINGLESTEP, linux.PTRACE_DETACH:
			if v == 0 {
				return append(b, '0'), ArgInt, true
			}
			return append(b, linux.SignalName(int(v))...), ArgFlags, true
		}
		return appendPtr(b, v), ArgPtr, true
	case kPersona:
		if v = uint64(uint32(v)); v == 0xffffffff {
			return append(b, "0xffffffff"...), ArgFlags, true
		}
		return linux.AppendPersona(b, v), ArgFlags, true
	case kMknodMode:
		b = linux.AppendMode(b, v)
		if t := v & linux.S_IFMT; t == linux.S_IFCHR || t == linux.S_IFBLK {
			b = appendMakedev(append(b, ", "...), d.c.Raw[i+1])
		}
		return b, ArgMode, true
	case kSpliceFlags:
		return linux.SpliceFlags.Append(b, v), ArgFlags, true
	case kCloneNs:
		return linux.CloneFlags.Append(b, v), ArgFlags, true
	case kIpcKey:
		if v == 0 {
			return append(b, "IPC_PRIVATE"...), ArgFlags, true
		}
		return appendHex(b, uint64(uint32(v))), ArgInt, true
	case kShmgetFlags:
		if f := v &^ 0o777; f != 0 {
			b = append(linux.ShmgetFlags.Append(b, f), '|')
		}
		return appendMode3(b, v&0o777), ArgFlags, true
	case kShmatFlags:
		return linux.ShmatFlags.Append(b, v), ArgFlags, true
	case kShmctlCmd:
		return linux.ShmctlCommands.Append(b, v, "SHM_"), ArgFlags, true
	case kShmidDs:
		return d.shmidDs(b, i), ArgStruct, true
	case kMincoreOut, kPtrValOut, kSizeOut:
		return d.controlStruct(b, i, sp), ArgStruct, true
	case kRusageOut, kItimervalIn, kItimervalOut, kItimerspecIn, kItimerspecOut, kSigeventIn, kIntOut,
		kSiginfoOut, kCpusetIn:
		return d.controlStruct(b, i, sp), ArgStruct, true
	}
	return b, 0, false
}

// controlStruct appends a structure argument of this file's kinds: NULL,
// an address when it is unknown or the call failed before writing it, or
// its fields.
func (d *decoder) controlStruct(b []byte, i int, sp arg) []byte {
	c := d.c
	v := c.Raw[i]
	if v == 0 {
		return append(b, "NULL"...)
	}
	out := writtenArg(sp.k, c.Nr)
	if out && d.failed() {
		return appendHex(b, v)
	}
	size := 0
	switch sp.k {
	case kRusageOut:
		size = 144
	case kItimervalIn, kItimervalOut, kItimerspecIn, kItimerspecOut:
		size = 32
	case kSigeventIn:
		size = 24
	case kIntOut:
		size = 4
	case kSiginfoOut:
		size = 48
	case kCpusetIn:
		size = int(min(c.Raw[sp.p], 1<<12))
	case kMincoreOut:
		size = int(min((c.Raw[sp.p]+4095)/4096, 1<<12))
	case kPtrValOut, kSizeOut:
		size = 8
	}
	m, miss := d.buffer(i, out, v, size)
	if miss > 0 {
		return appendHex(b, v)
	}
	switch sp.k {
	case kRusageOut:
		b = appendTimeval(append(b, "{ru_utime="...), m[0:16])
		b = appendTimeval(append(b, ", ru_stime="...), m[16:32])
		return append(b, ", ...}"...)
	case kItimervalIn, kItimervalOut:
		b = appendTimeval(append(b, "{it_interval="...), m[0:16])
		b = appendTimeval(append(b, ", it_value="...), m[16:32])
		return append(b, '}')
	case kItimerspecIn, kItimerspecOut:
		b = appendTimespec(append(b, "{it_interval="...), m[0:16])
		b = appendTimespec(append(b, ", it_value="...), m[16:32])
		return append(b, '}')
	case kSigeventIn:
		return appendSigevent(b, m)
	case kIntOut:
		return append(strconv.AppendInt(append(b, '['), int64(int32(le32(m, 0))), 10), ']')
	case kSiginfoOut:
		signo, code := int(int32(le32(m, 0))), int(int32(le32(m, 8)))
		if signo == 0 {
			return append(b, "{}"...) // waitid with WNOHANG and no child ready
		}
		if signo == sigchld && code > 0 && code < len(cldCodes) {
			b = append(append(b, "{si_signo=SIGCHLD, si_code="...), cldCodes[code]...)
			return appendChild(b, code, m)
		}
		return appendSiginfoBytes(b, &tracefile.Signal{Signo: signo, Code: code}, m)
	case kCpusetIn:
		return appendCpuset(b, m)
	case kMincoreOut:
		b = append(b, '[')
		for k, x := range m {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendUint(b, uint64(x), 10)
		}
		return append(b, ']')
	case kPtrValOut:
		return append(appendPtr(append(b, '['), le64(m, 0)), ']')
	case kSizeOut:
		return append(strconv.AppendUint(append(b, '['), le64(m, 0), 10), ']')
	}
	return appendHex(b, v)
}

// appendSigevent appends a struct sigevent as strace prints it: the value
// when it is not zero, the signal (named when one is sent), the
// notification and, for SIGEV_THREAD_ID, the thread.
func appendSigevent(b, m []byte) []byte {
	val, signo, notify := le64(m, 0), int(int32(le32(m, 8))), uint64(le32(m, 12))
	b = append(b, '{')
	if val != 0 {
		b = strconv.AppendInt(append(b, "sigev_value={sival_int="...), int64(int32(val)), 10)
		b = append(appendPtr(append(b, ", sival_ptr="...), val), "}, "...)
	}
	b = append(b, "sigev_signo="...)
	if notify == 0 || notify == 4 { // SIGEV_SIGNAL, SIGEV_THREAD_ID
		b = append(b, linux.SignalName(signo)...)
	} else {
		b = strconv.AppendInt(b, int64(signo), 10)
	}
	b = linux.SigevNotify.Append(append(b, ", sigev_notify="...), notify, "SIGEV_")
	switch notify {
	case 4:
		b = strconv.AppendInt(append(b, ", sigev_notify_thread_id="...), int64(int32(le32(m, 16))), 10)
	case 2:
		b = appendPtr(append(b, ", sigev_notify_function="...), le64(m, 16))
	}
	return append(b, '}')
}

// appendCpuset appends a CPU mask as strace prints it: "[0 1]".
func appendCpuset(b, m []byte) []byte {
	b = append(b, '[')
	first := true
	for k, x := range m {
		for bit := 0; bit < 8; bit++ {
			if x>>bit&1 != 0 {
				if !first {
					b = append(b, ' ')
				}
				first = false
				b = strconv.AppendInt(b, int64(8*k+bit), 10)
			}
		}
	}
	return append(b, ']')
}

// prctlArgs appends prctl's arguments as strace prints them: those the
// option uses, decoded, or for the options strace does not decode the
// four that follow in hex.
func (d *decoder) prctlArgs(b []byte) []byte {
	c := d.c
	op := c.Raw[0]
	b = linux.PrctlOptions.Append(b, op, "PR_")
	arg := c.Raw[1]
	switch op {
	case linux.PR_GET_DUMPABLE, linux.PR_GET_KEEPCAPS, linux.PR_GET_SECCOMP, linux.PR_GET_TIMERSLACK:
		return b
	case linux.PR_SET_PDEATHSIG:
		b = append(b, ", "...)
		if arg == 0 {
			return append(b, '0')
		}
		return append(b, linux.SignalName(int(arg))...)
	case linux.PR_SET_DUMPABLE:
		return linux.DumpableModes.Append(append(b, ", "...), arg, "SUID_DUMP_")
	case linux.PR_SET_KEEPCAPS, linux.PR_SET_CHILD_SUBREAPER, linux.PR_SET_PTRACER:
		return strconv.AppendInt(append(b, ", "...), int64(int32(arg)), 10)
	case linux.PR_SET_TIMERSLACK:
		return strconv.AppendInt(append(b, ", "...), int64(arg), 10)
	case linux.PR_SET_NO_NEW_PRIVS, linux.PR_SET_THP_DISABLE:
		return appendUnknownArgs(strconv.AppendUint(append(b, ", "...), arg, 10), c.Raw[2:5])
	case linux.PR_CAPBSET_READ, linux.PR_CAPBSET_DROP:
		return linux.Capabilities.Append(append(b, ", "...), arg, "CAP_")
	case linux.PR_SET_NAME, linux.PR_GET_NAME:
		b = append(b, ", "...)
		if op == linux.PR_GET_NAME && d.failed() || arg == 0 {
			return appendPtr(b, arg)
		}
		s, ok := d.readString(arg, 16)
		if !ok && len(s) < 16 { // unknown (16 bytes with no NUL: a name cut)
			return appendHex(b, arg)
		}
		d.c.Buffers = append(d.c.Buffers, Buffer{Arg: 1, Out: op == linux.PR_GET_NAME, Addr: arg, Data: s})
		max := 15 // TASK_COMM_LEN less the NUL: a longer name is cut
		if op == linux.PR_GET_NAME {
			max = 16
		}
		if d.strSize >= 0 && d.strSize < max {
			max = d.strSize
		}
		return appendQuoted(b, s, max)
	case linux.PR_GET_PDEATHSIG, linux.PR_GET_CHILD_SUBREAPER, linux.PR_GET_TID_ADDRESS:
		b = append(b, ", "...)
		size := 4
		if op == linux.PR_GET_TID_ADDRESS {
			size = 8
		}
		m, miss := d.read(arg, size)
		if arg == 0 || d.failed() || miss > 0 {
			return appendPtr(b, arg)
		}
		d.c.Buffers = append(d.c.Buffers, Buffer{Arg: 1, Out: true, Addr: arg, Data: m})
		b = append(b, '[')
		switch op {
		case linux.PR_GET_PDEATHSIG:
			if sig := int(int32(le32(m, 0))); sig != 0 {
				b = append(b, linux.SignalName(sig)...)
			} else {
				b = append(b, '0')
			}
		case linux.PR_GET_TID_ADDRESS:
			b = appendPtr(b, le64(m, 0))
		default:
			b = strconv.AppendInt(b, int64(int32(le32(m, 0))), 10)
		}
		return append(b, ']')
	case linux.PR_SET_VMA:
		b = append(b, ", "...)
		if arg != 0 {
			return appendUnknownArgs(appendHex(b, arg), c.Raw[2:5])
		}
		b = appendHex(append(b, "PR_SET_VMA_ANON_NAME, "...), c.Raw[2])
		b = strconv.AppendUint(append(b, ", "...), c.Raw[3], 10)
		b = append(b, ", "...)
		if s, ok := d.readString(c.Raw[4], 80); ok && c.Raw[4] != 0 {
			return appendQuoted(b, s, d.strSize)
		}
		return appendPtr(b, c.Raw[4])
	}
	return appendUnknownArgs(b, c.Raw[1:5])
}

// appendUnknownArgs appends arguments strace does not decode, each as
// ", " and the value in hex.
func appendUnknownArgs(b []byte, vs []uint64) []byte {
	for _, v := range vs {
		b = appendHex(append(b, ", "...), v)
	}
	return b
}

// controlRet appends the result of the calls whose results strace
// explains; ok is false for the others.
func (d *decoder) controlRet(b []byte, rk retKind) ([]byte, bool) {
	c := d.c
	v := uint64(c.Ret)
	switch rk {
	case rSignal: // rt_sigtimedwait: the signal taken
		b = strconv.AppendInt(b, c.Ret, 10)
		return append(append(append(b, " ("...), linux.SignalName(int(c.Ret))...), ')'), true
	case rSched:
		b = strconv.AppendInt(b, c.Ret, 10)
		b = linux.SchedPolicies.Append(append(b, " ("...), v&^0x40000000, "SCHED_")
		if v&0x40000000 != 0 {
			b = append(b, "|SCHED_RESET_ON_FORK"...)
		}
		return append(b, ')'), true
	case rIoprio:
		return append(appendIoprio(append(strconv.AppendInt(b, c.Ret, 10), " ("...), v), ')'), true
	case rPersona:
		if c.Ret == 0 {
			b = append(b, '0')
		} else {
			b = strconv.AppendUint(append(b, "0x"...), uint64(c.Ret), 16)
		}
		return append(linux.AppendPersona(append(b, " ("...), v), ')'), true
	case rPrctl:
		b = strconv.AppendInt(b, c.Ret, 10)
		switch c.Raw[0] {
		case linux.PR_GET_DUMPABLE:
			b = linux.DumpableModes.Append(append(b, " ("...), v, "SUID_DUMP_")
			b = append(b, ')')
		case linux.PR_MCE_KILL_GET:
			b = linux.MceKillPolicies.Append(append(b, " ("...), v, "PR_MCE_KILL_")
			b = append(b, ')')
		}
		return b, true
	}
	return b, false
}

// appendIoprio appends an I/O priority as strace prints it:
// IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7).
func appendIoprio(b []byte, v uint64) []byte {
	b = linux.IoprioClasses.Append(append(b, "IOPRIO_PRIO_VALUE("...), v>>13&7, "IOPRIO_CLASS_")
	return append(strconv.AppendUint(append(b, ", "...), v&(1<<13-1), 10), ')')
}

// appendMode3 appends a mode as C's %#03o: "0600", and "000" for none.
func appendMode3(b []byte, v uint64) []byte {
	if v == 0 {
		return append(b, "000"...)
	}
	return strconv.AppendUint(append(b, '0'), v, 8)
}

// shmidDs appends shmctl's buffer: its fields for IPC_STAT (written)
// and IPC_SET (read), its address otherwise.
func (d *decoder) shmidDs(b []byte, i int) []byte {
	c := d.c
	v := c.Raw[i]
	cmd := c.Raw[1] &^ 0x100 // IPC_64
	if v == 0 {
		return append(b, "NULL"...)
	}
	if cmd != 1 && cmd != 2 || cmd == 2 && d.failed() { // IPC_SET, IPC_STAT
		return appendHex(b, v)
	}
	m, miss := d.buffer(i, cmd == 2, v, 96)
	if miss > 0 {
		return appendHex(b, v)
	}
	b = strconv.AppendUint(append(b, "{shm_perm={uid="...), uint64(le32(m, 4)), 10)
	b = strconv.AppendUint(append(b, ", gid="...), uint64(le32(m, 8)), 10)
	b = appendMode3(append(b, ", mode="...), uint64(le32(m, 20))&0o777)
	if cmd == 1 { // IPC_SET reads uid, gid and mode alone
		return append(b, "}, ...}"...)
	}
	b = appendHex(append(b, ", key="...), uint64(le32(m, 0)))
	b = strconv.AppendUint(append(b, ", cuid="...), uint64(le32(m, 12)), 10)
	b = strconv.AppendUint(append(b, ", cgid="...), uint64(le32(m, 16)), 10)
	b = strconv.AppendUint(append(b, "}, shm_segsz="...), le64(m, 48), 10)
	b = strconv.AppendInt(append(b, ", shm_cpid="...), int64(int32(le32(m, 80))), 10)
	b = strconv.AppendInt(append(b, ", shm_lpid="...), int64(int32(le32(m, 84))), 10)
	b = strconv.AppendUint(append(b, ", shm_nattch="...), le64(m, 88), 10)
	b = strconv.AppendInt(append(b, ", shm_atime="...), int64(le64(m, 56)), 10)
	b = strconv.AppendInt(append(b, ", shm_dtime="...), int64(le64(m, 64)), 10)
	b = strconv.AppendInt(append(b, ", shm_ctime="...), int64(le64(m, 72)), 10)
	return append(b, '}')
}
