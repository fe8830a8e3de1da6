package linux

import "strconv"

// Flag is a named value: a bit set of a flag word, or one value of an
// enumeration.
type Flag struct {
	Value uint64
	Name  string
}

// Flags is a table of flag bits in the order strace prints them.
type Flags []Flag

// Append appends v as strace prints a flag word: the names of the bits
// (or groups of bits) set, in the table's order, joined by '|', then any
// bits left over in hex; "0" when v is 0.
func (t Flags) Append(b []byte, v uint64) []byte {
	if v == 0 {
		return append(b, '0')
	}
	n := len(b)
	for _, f := range t {
		if f.Value != 0 && v&f.Value == f.Value {
			if len(b) > n {
				b = append(b, '|')
			}
			b = append(b, f.Name...)
			v &^= f.Value
		}
	}
	if v != 0 {
		if len(b) > n {
			b = append(b, '|')
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, v, 16)
	}
	return b
}

// AppendPrefixed is Append, but a non-zero v with none of the table's bits
// is printed as strace prints it, with a comment naming the flags'
// prefix: "0x8 /* MLOCK_??? */".
func (t Flags) AppendPrefixed(b []byte, v uint64, prefix string) []byte {
	for _, f := range t {
		if f.Value != 0 && v&f.Value == f.Value {
			return t.Append(b, v)
		}
	}
	if v == 0 {
		return append(b, '0')
	}
	return appendUnknown(b, v, prefix)
}

// appendUnknown appends a value strace has no name for: the number in
// hex and a comment naming the prefix ("0x3001 /* ARCH_??? */").
func appendUnknown(b []byte, v uint64, prefix string) []byte {
	b = strconv.AppendUint(append(b, "0x"...), v, 16)
	return append(append(append(b, " /* "...), prefix...), "??? */"...)
}

// Format is Append to a new string.
func (t Flags) Format(v uint64) string { return string(t.Append(nil, v)) }

// Enum is a table of the values of an enumeration.
type Enum []Flag

// Name returns the name of value v.
func (e Enum) Name(v uint64) (string, bool) {
	for _, f := range e {
		if f.Value == v {
			return f.Name, true
		}
	}
	return "", false
}

// Append appends v's name, or as strace prints an unknown value, the
// number in hex and a comment naming the enumeration's prefix
// ("0x3001 /* ARCH_??? */").
func (e Enum) Append(b []byte, v uint64, prefix string) []byte {
	if n, ok := e.Name(v); ok {
		return append(b, n...)
	}
	return appendUnknown(b, v, prefix)
}

// Open flags (the access mode, O_ACCMODE, is printed apart by OpenAccess).
var OpenFlags = Flags{
	{0o100, "O_CREAT"}, {0o200, "O_EXCL"}, {0o400, "O_NOCTTY"}, {0o1000, "O_TRUNC"},
	{0o2000, "O_APPEND"}, {0o4000, "O_NONBLOCK"}, {0o4010000, "O_SYNC"}, {0o10000, "O_DSYNC"},
	{0o40000, "O_DIRECT"}, {0o100000, "O_LARGEFILE"}, {0o400000, "O_NOFOLLOW"},
	{0o1000000, "O_NOATIME"}, {0o2000000, "O_CLOEXEC"}, {0o10000000, "O_PATH"},
	{0o20200000, "O_TMPFILE"}, {0o200000, "O_DIRECTORY"}, {0o20000, "FASYNC"},
}

// OpenAccess names the access modes (flags & O_ACCMODE).
var OpenAccess = Enum{{0, "O_RDONLY"}, {1, "O_WRONLY"}, {2, "O_RDWR"}, {3, "O_ACCMODE"}}

// Open flag values emu and the exporters test.
const (
	O_ACCMODE   = 3
	O_WRONLY    = 1
	O_RDWR      = 2
	O_CREAT     = 0o100
	O_EXCL      = 0o200
	O_TRUNC     = 0o1000
	O_APPEND    = 0o2000
	O_DIRECTORY = 0o200000
	O_NOFOLLOW  = 0o400000
	O_CLOEXEC   = 0o2000000
	O_PATH      = 0o10000000
	O_TMPFILE   = 0o20200000
)

// AppendOpenFlags appends open's flags as strace prints them:
// "O_WRONLY|O_CREAT|O_TRUNC".
func AppendOpenFlags(b []byte, v uint64) []byte {
	b, _ = appendAccess(b, v)
	if rest := v &^ O_ACCMODE; rest != 0 {
		b = append(b, '|')
		b = OpenFlags.Append(b, rest)
	}
	return b
}

func appendAccess(b []byte, v uint64) ([]byte, bool) {
	n, _ := OpenAccess.Name(v & O_ACCMODE)
	return append(b, n...), true
}

// AT_* flags of the *at syscalls.
var AtFlags = Flags{
	{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_REMOVEDIR"}, {0x400, "AT_SYMLINK_FOLLOW"},
	{0x800, "AT_NO_AUTOMOUNT"}, {0x1000, "AT_EMPTY_PATH"}, {0x8000, "AT_RECURSIVE"},
}

// AtAccessFlags are faccessat2's flags.
var AtAccessFlags = Flags{{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_EACCESS"}, {0x1000, "AT_EMPTY_PATH"}}

// StatxFlags are statx's flags: the AT_* flags and the sync type.
var StatxFlags = Flags{
	{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x800, "AT_NO_AUTOMOUNT"}, {0x1000, "AT_EMPTY_PATH"},
	{0x2000, "AT_STATX_FORCE_SYNC"}, {0x4000, "AT_STATX_DONT_SYNC"},
}

// StatxMask are statx's mask bits.
var StatxMask = Flags{
	{0xfff, "STATX_ALL"}, {0x7ff, "STATX_BASIC_STATS"}, {1, "STATX_TYPE"}, {2, "STATX_MODE"}, {4, "STATX_NLINK"},
	{8, "STATX_UID"}, {0x10, "STATX_GID"}, {0x20, "STATX_ATIME"}, {0x40, "STATX_MTIME"},
	{0x80, "STATX_CTIME"}, {0x100, "STATX_INO"}, {0x200, "STATX_SIZE"}, {0x400, "STATX_BLOCKS"},
	{0x800, "STATX_BTIME"}, {0x1000, "STATX_MNT_ID"}, {0x2000, "STATX_DIOALIGN"},
}

// AtFdcwd is the dirfd meaning the working directory.
const AtFdcwd = -100

// AccessModes are access's mode bits (0 is F_OK).
var AccessModes = Flags{{4, "R_OK"}, {2, "W_OK"}, {1, "X_OK"}}

// RenameFlags are renameat2's flags.
var RenameFlags = Flags{{1, "RENAME_NOREPLACE"}, {2, "RENAME_EXCHANGE"}, {4, "RENAME_WHITEOUT"}}

// ProtFlags are mmap's and mprotect's protection bits (0 is PROT_NONE).
var ProtFlags = Flags{
	{1, "PROT_READ"}, {2, "PROT_WRITE"}, {4, "PROT_EXEC"}, {8, "PROT_SEM"},
	{0x01000000, "PROT_GROWSDOWN"}, {0x02000000, "PROT_GROWSUP"},
}

// MapType names mmap's mapping types (flags & 0xf).
var MapType = Enum{{1, "MAP_SHARED"}, {2, "MAP_PRIVATE"}, {3, "MAP_SHARED_VALIDATE"}}

// Mmap flag values.
const (
	MAP_SHARED    = 1
	MAP_PRIVATE   = 2
	MAP_TYPE      = 0xf
	MAP_FIXED     = 0x10
	MAP_ANONYMOUS = 0x20
)

// MapFlags are mmap's flags other than the type and the huge page size.
var MapFlags = Flags{
	{0x10, "MAP_FIXED"}, {0x20, "MAP_ANONYMOUS"}, {0x40, "MAP_32BIT"}, {0x4000, "MAP_NORESERVE"},
	{0x8000, "MAP_POPULATE"}, {0x10000, "MAP_NONBLOCK"}, {0x100, "MAP_GROWSDOWN"},
	{0x800, "MAP_DENYWRITE"}, {0x1000, "MAP_EXECUTABLE"}, {0x2000, "MAP_LOCKED"},
	{0x20000, "MAP_STACK"}, {0x40000, "MAP_HUGETLB"}, {0x80000, "MAP_SYNC"},
	{0x100000, "MAP_FIXED_NOREPLACE"},
}

// AppendMmapFlags appends mmap's flags as strace prints them:
// "MAP_PRIVATE|MAP_ANONYMOUS", "MAP_FILE" for 0.
func AppendMmapFlags(b []byte, v uint64) []byte {
	if v == 0 {
		return append(b, "MAP_FILE"...)
	}
	n := len(b)
	if t := v & MAP_TYPE; t != 0 {
		if name, ok := MapType.Name(t); ok {
			b = append(b, name...)
		} else {
			b = append(b, "0x"...)
			b = strconv.AppendUint(b, t, 16)
			b = append(b, " /* MAP_??? */"...)
		}
	}
	huge := v >> 26 & 0x3f
	if rest := v &^ (MAP_TYPE | 0x3f<<26); rest != 0 {
		if len(b) > n {
			b = append(b, '|')
		}
		b = MapFlags.Append(b, rest)
	}
	if huge != 0 {
		if len(b) > n {
			b = append(b, '|')
		}
		b = strconv.AppendUint(b, huge, 10)
		b = append(b, "<<MAP_HUGE_SHIFT"...)
	}
	return b
}

// MremapFlags are mremap's flags.
var MremapFlags = Flags{{1, "MREMAP_MAYMOVE"}, {MREMAP_FIXED, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}}

// MREMAP_FIXED: mremap moves the range to its fifth argument, unmapping
// what was there.
const MREMAP_FIXED = 2

// SigaltstackFlags are stack_t's ss_flags.
var SigaltstackFlags = Flags{{1, "SS_ONSTACK"}, {2, "SS_DISABLE"}, {1 << 31, "SS_AUTODISARM"}}

// EpollEvents are struct epoll_event's events, in strace's order.
var EpollEvents = Flags{{0x1, "EPOLLIN"}, {0x2, "EPOLLPRI"}, {0x4, "EPOLLOUT"}, {0x8, "EPOLLERR"}, {0x10, "EPOLLHUP"},
	{0x20, "EPOLLNVAL"}, {0x40, "EPOLLRDNORM"}, {0x80, "EPOLLRDBAND"}, {0x100, "EPOLLWRNORM"}, {0x200, "EPOLLWRBAND"},
	{0x400, "EPOLLMSG"}, {0x2000, "EPOLLRDHUP"}, {1 << 28, "EPOLLEXCLUSIVE"}, {1 << 29, "EPOLLWAKEUP"},
	{1 << 30, "EPOLLONESHOT"}, {1 << 31, "EPOLLET"}}

// EpollCreateFlags are epoll_create1's flags.
var EpollCreateFlags = Flags{{0o2000000, "EPOLL_CLOEXEC"}}

// EpollCtl names epoll_ctl's operations.
var EpollCtl = Enum{{1, "EPOLL_CTL_ADD"}, {2, "EPOLL_CTL_DEL"}, {3, "EPOLL_CTL_MOD"}}

// PrioWhich names getpriority's and setpriority's which.
var PrioWhich = Enum{{0, "PRIO_PROCESS"}, {1, "PRIO_PGRP"}, {2, "PRIO_USER"}}

// MlockallFlags are mlockall's flags.
var MlockallFlags = Flags{{1, "MCL_CURRENT"}, {2, "MCL_FUTURE"}, {4, "MCL_ONFAULT"}}

// Mlock2Flags are mlock2's flags.
var Mlock2Flags = Flags{{1, "MLOCK_ONFAULT"}}

// MsyncFlags are msync's flags.
var MsyncFlags = Flags{{1, "MS_ASYNC"}, {4, "MS_SYNC"}, {2, "MS_INVALIDATE"}}

// Madvise names madvise's advice values.
var Madvise = Enum{
	{0, "MADV_NORMAL"}, {1, "MADV_RANDOM"}, {2, "MADV_SEQUENTIAL"}, {3, "MADV_WILLNEED"},
	{4, "MADV_DONTNEED"}, {8, "MADV_FREE"}, {9, "MADV_REMOVE"}, {10, "MADV_DONTFORK"},
	{11, "MADV_DOFORK"}, {12, "MADV_MERGEABLE"}, {13, "MADV_UNMERGEABLE"}, {14, "MADV_HUGEPAGE"},
	{15, "MADV_NOHUGEPAGE"}, {16, "MADV_DONTDUMP"}, {17, "MADV_DODUMP"}, {18, "MADV_WIPEONFORK"},
	{19, "MADV_KEEPONFORK"}, {20, "MADV_COLD"}, {21, "MADV_PAGEOUT"}, {22, "MADV_POPULATE_READ"},
	{23, "MADV_POPULATE_WRITE"}, {24, "MADV_DONTNEED_LOCKED"}, {25, "MADV_COLLAPSE"},
	{100, "MADV_HWPOISON"}, {101, "MADV_SOFT_OFFLINE"},
}

// Seek names lseek's whence values.
// LockTypes names struct flock's l_type.
var LockTypes = Enum{{0, "F_RDLCK"}, {1, "F_WRLCK"}, {2, "F_UNLCK"}}

var Seek = Enum{{0, "SEEK_SET"}, {1, "SEEK_CUR"}, {2, "SEEK_END"}, {3, "SEEK_DATA"}, {4, "SEEK_HOLE"}}

// Fcntl names fcntl's commands.
var Fcntl = Enum{
	{0, "F_DUPFD"}, {1, "F_GETFD"}, {2, "F_SETFD"}, {3, "F_GETFL"}, {4, "F_SETFL"}, {5, "F_GETLK"},
	{6, "F_SETLK"}, {7, "F_SETLKW"}, {8, "F_SETOWN"}, {9, "F_GETOWN"}, {10, "F_SETSIG"},
	{11, "F_GETSIG"}, {15, "F_SETOWN_EX"}, {16, "F_GETOWN_EX"}, {36, "F_OFD_GETLK"},
	{37, "F_OFD_SETLK"}, {38, "F_OFD_SETLKW"}, {1024, "F_SETLEASE"}, {1025, "F_GETLEASE"},
	{1026, "F_NOTIFY"}, {1030, "F_DUPFD_CLOEXEC"}, {1031, "F_SETPIPE_SZ"}, {1032, "F_GETPIPE_SZ"},
	{1033, "F_ADD_SEALS"}, {1034, "F_GET_SEALS"},
}

// FdFlags are F_GETFD/F_SETFD's flags.
var FdFlags = Flags{{1, "FD_CLOEXEC"}}

// SigprocmaskHow names rt_sigprocmask's how.
var SigprocmaskHow = Enum{{0, "SIG_BLOCK"}, {1, "SIG_UNBLOCK"}, {2, "SIG_SETMASK"}}

// ArchPrctl names arch_prctl's codes.
var ArchPrctl = Enum{
	{0x1001, "ARCH_SET_GS"}, {0x1002, "ARCH_SET_FS"}, {0x1003, "ARCH_GET_FS"}, {0x1004, "ARCH_GET_GS"},
	{0x1011, "ARCH_GET_CPUID"}, {0x1012, "ARCH_SET_CPUID"}, {0x1021, "ARCH_GET_XCOMP_SUPP"},
	{0x1022, "ARCH_GET_XCOMP_PERM"}, {0x1023, "ARCH_REQ_XCOMP_PERM"},
	{0x2001, "ARCH_MAP_VDSO_X32"}, {0x2002, "ARCH_MAP_VDSO_32"}, {0x2003, "ARCH_MAP_VDSO_64"},
}

// Clocks names the clock ids.
var Clocks = Enum{
	{0, "CLOCK_REALTIME"}, {1, "CLOCK_MONOTONIC"}, {2, "CLOCK_PROCESS_CPUTIME_ID"},
	{3, "CLOCK_THREAD_CPUTIME_ID"}, {4, "CLOCK_MONOTONIC_RAW"}, {5, "CLOCK_REALTIME_COARSE"},
	{6, "CLOCK_MONOTONIC_COARSE"}, {7, "CLOCK_BOOTTIME"}, {8, "CLOCK_REALTIME_ALARM"},
	{9, "CLOCK_BOOTTIME_ALARM"}, {11, "CLOCK_TAI"},
}

// Rlimits names the resources of getrlimit and prlimit64.
var Rlimits = Enum{
	{0, "RLIMIT_CPU"}, {1, "RLIMIT_FSIZE"}, {2, "RLIMIT_DATA"}, {3, "RLIMIT_STACK"},
	{4, "RLIMIT_CORE"}, {5, "RLIMIT_RSS"}, {6, "RLIMIT_NPROC"}, {7, "RLIMIT_NOFILE"},
	{8, "RLIMIT_MEMLOCK"}, {9, "RLIMIT_AS"}, {10, "RLIMIT_LOCKS"}, {11, "RLIMIT_SIGPENDING"},
	{12, "RLIMIT_MSGQUEUE"}, {13, "RLIMIT_NICE"}, {14, "RLIMIT_RTPRIO"}, {15, "RLIMIT_RTTIME"},
}

// AddressFamilies names the socket address families.
var AddressFamilies = Enum{
	{0, "AF_UNSPEC"}, {1, "AF_UNIX"}, {2, "AF_INET"}, {10, "AF_INET6"}, {16, "AF_NETLINK"}, {17, "AF_PACKET"},
}

// SocketTypes names the socket types (type & 0xf).
var SocketTypes = Enum{{1, "SOCK_STREAM"}, {2, "SOCK_DGRAM"}, {3, "SOCK_RAW"}, {4, "SOCK_RDM"}, {5, "SOCK_SEQPACKET"}, {6, "SOCK_DCCP"}, {10, "SOCK_PACKET"}}

// SocketFlags are the flags of a socket type.
var SocketFlags = Flags{{0o2000000, "SOCK_CLOEXEC"}, {0o4000, "SOCK_NONBLOCK"}}

// SpliceFlags are the flags of splice, tee and vmsplice.
var SpliceFlags = Flags{{1, "SPLICE_F_MOVE"}, {2, "SPLICE_F_NONBLOCK"}, {4, "SPLICE_F_MORE"}, {8, "SPLICE_F_GIFT"}}

// SignalfdFlags are signalfd4's flags.
var SignalfdFlags = Flags{{0o2000000, "SFD_CLOEXEC"}, {0o4000, "SFD_NONBLOCK"}}

// XattrFlags are the flags of setxattr and its variants.
var XattrFlags = Flags{{1, "XATTR_CREATE"}, {2, "XATTR_REPLACE"}}

// WaitOptions are wait4's and waitid's options.
var WaitOptions = Flags{
	{1, "WNOHANG"}, {4, "WEXITED"}, {2, "WSTOPPED"}, {8, "WCONTINUED"}, {0x1000000, "WNOWAIT"},
	{0x80000000, "__WCLONE"}, {0x40000000, "__WALL"}, {0x20000000, "__WNOTHREAD"},
}

// CLONE_VM is clone's flag for a child that shares its parent's memory.
const CLONE_VM = 0x100

// CloneFlags are clone's flags (the low byte is the exit signal).
var CloneFlags = Flags{
	{0x100, "CLONE_VM"}, {0x200, "CLONE_FS"}, {0x400, "CLONE_FILES"}, {0x800, "CLONE_SIGHAND"},
	{0x1000, "CLONE_PIDFD"}, {0x2000, "CLONE_PTRACE"}, {0x4000, "CLONE_VFORK"}, {0x8000, "CLONE_PARENT"},
	{0x10000, "CLONE_THREAD"}, {0x20000, "CLONE_NEWNS"}, {0x40000, "CLONE_SYSVSEM"}, {0x80000, "CLONE_SETTLS"},
	{0x100000, "CLONE_PARENT_SETTID"}, {0x200000, "CLONE_CHILD_CLEARTID"}, {0x800000, "CLONE_UNTRACED"},
	{0x1000000, "CLONE_CHILD_SETTID"}, {0x2000000, "CLONE_NEWCGROUP"}, {0x4000000, "CLONE_NEWUTS"},
	{0x8000000, "CLONE_NEWIPC"}, {0x10000000, "CLONE_NEWUSER"}, {0x20000000, "CLONE_NEWPID"},
	{0x40000000, "CLONE_NEWNET"}, {0x80000000, "CLONE_IO"},
}

// FileTypes name a mode's file type (mode & S_IFMT).
var FileTypes = Enum{
	{0o140000, "S_IFSOCK"}, {0o120000, "S_IFLNK"}, {0o100000, "S_IFREG"}, {0o060000, "S_IFBLK"},
	{0o040000, "S_IFDIR"}, {0o020000, "S_IFCHR"}, {0o010000, "S_IFIFO"},
}

// File mode bits.
const (
	S_IFMT   = 0o170000
	S_IFREG  = 0o100000
	S_IFDIR  = 0o040000
	S_IFLNK  = 0o120000
	S_IFIFO  = 0o010000
	S_IFSOCK = 0o140000
	S_IFCHR  = 0o020000
	S_IFBLK  = 0o060000
)

// ModeSpecial are the setuid, setgid and sticky bits as strace prints them.
var ModeSpecial = Flags{{0o4000, "S_ISUID"}, {0o2000, "S_ISGID"}, {0o1000, "S_ISVTX"}}

// AppendMode appends a file mode as strace prints st_mode and mknod's
// mode: "S_IFREG|0644", "S_IFDIR|S_ISVTX|0777".
func AppendMode(b []byte, v uint64) []byte {
	if t := v & S_IFMT; t != 0 {
		if n, ok := FileTypes.Name(t); ok {
			b = append(append(b, n...), '|')
		} else {
			b = append(b, '0')
			b = strconv.AppendUint(b, t, 8)
			b = append(b, '|')
		}
	}
	if s := v & 0o7000; s != 0 {
		b = ModeSpecial.Append(b, s)
		b = append(b, '|')
	}
	return AppendOctal(b, v&0o777)
}

// AppendOctal appends v as strace prints a permission mode: "0644",
// "000" for 0.
func AppendOctal(b []byte, v uint64) []byte {
	b = append(b, '0')
	if v < 0o10 {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, v, 8)
}

// Futex ops (op & FUTEX_CMD_MASK), with the private and clock flags
// printed as strace does.
var FutexOps = Enum{
	{0, "FUTEX_WAIT"}, {1, "FUTEX_WAKE"}, {2, "FUTEX_FD"}, {3, "FUTEX_REQUEUE"}, {4, "FUTEX_CMP_REQUEUE"},
	{5, "FUTEX_WAKE_OP"}, {6, "FUTEX_LOCK_PI"}, {7, "FUTEX_UNLOCK_PI"}, {8, "FUTEX_TRYLOCK_PI"},
	{9, "FUTEX_WAIT_BITSET"}, {10, "FUTEX_WAKE_BITSET"}, {11, "FUTEX_WAIT_REQUEUE_PI"},
	{12, "FUTEX_CMP_REQUEUE_PI"}, {13, "FUTEX_LOCK_PI2"},
}

// AppendFutexOp appends a futex op: "FUTEX_WAIT_PRIVATE",
// "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME".
func AppendFutexOp(b []byte, v uint64) []byte {
	b = FutexOps.Append(b, v&0x7f, "FUTEX_")
	if v&128 != 0 {
		b = append(b, "_PRIVATE"...)
	}
	if v&256 != 0 {
		b = append(b, "|FUTEX_CLOCK_REALTIME"...)
	}
	return b
}

// SigactionFlags are sigaction's flags, in strace's order.
var SigactionFlags = Flags{
	{0x04000000, "SA_RESTORER"}, {0x08000000, "SA_ONSTACK"}, {0x10000000, "SA_RESTART"},
	{0x20000000, "SA_INTERRUPT"}, {0x40000000, "SA_NODEFER"}, {0x80000000, "SA_RESETHAND"},
	{0x4, "SA_SIGINFO"}, {0x1, "SA_NOCLDSTOP"}, {0x2, "SA_NOCLDWAIT"},
}

// Ioctls names the ioctl requests strace names (terminal and file
// ones). strace's table also holds OSS's _IO('T', n) timer requests,
// which share TCSETS's numbers: it prints both names.
var Ioctls = Enum{
	{0x5401, "TCGETS"}, {0x5402, "SNDCTL_TMR_START or TCSETS"}, {0x5403, "SNDCTL_TMR_STOP or TCSETSW"},
	{0x5404, "SNDCTL_TMR_CONTINUE or TCSETSF"}, {0x80045430, "TIOCGPTN"}, {0x40045431, "TIOCSPTLCK"},
	{0x40049409, "BTRFS_IOC_CLONE or FICLONE"},
	{0x540f, "TIOCGPGRP"}, {0x5410, "TIOCSPGRP"}, {0x5413, "TIOCGWINSZ"}, {0x5414, "TIOCSWINSZ"},
	{0x541b, "FIONREAD"}, {0x5421, "FIONBIO"}, {0x5451, "FIOCLEX"}, {0x5450, "FIONCLEX"},
	{0x5452, "FIOASYNC"},
}

// AppendIoctl appends an ioctl request as strace prints it: its name,
// or its _IOC(dir, type, nr, size) fields (asm-generic/ioctl.h: nr in
// bits 0-7, type 8-15, size 16-29, direction 30-31).
func AppendIoctl(b []byte, v uint64) []byte {
	if n, ok := Ioctls.Name(v); ok {
		return append(b, n...)
	}
	v &= 0xffffffff
	b = append(b, "_IOC("...)
	switch v >> 30 {
	case 0:
		b = append(b, "_IOC_NONE"...)
	case 1:
		b = append(b, "_IOC_WRITE"...)
	case 2:
		b = append(b, "_IOC_READ"...)
	case 3:
		b = append(b, "_IOC_READ|_IOC_WRITE"...)
	}
	for _, f := range []uint64{v >> 8 & 0xff, v & 0xff, v >> 16 & 0x3fff} {
		b = append(b, ", "...)
		if f == 0 {
			b = append(b, '0')
		} else {
			b = strconv.AppendUint(append(b, "0x"...), f, 16)
		}
	}
	return append(b, ')')
}

// PollEvents are poll's event bits.
var PollEvents = Flags{
	{1, "POLLIN"}, {2, "POLLPRI"}, {4, "POLLOUT"}, {8, "POLLERR"}, {0x10, "POLLHUP"}, {0x20, "POLLNVAL"},
	{0x40, "POLLRDNORM"}, {0x80, "POLLRDBAND"}, {0x100, "POLLWRNORM"}, {0x200, "POLLWRBAND"},
	{0x400, "POLLMSG"}, {0x1000, "POLLREMOVE"}, {0x2000, "POLLRDHUP"}, {0x8000, "POLL_BUSY_LOOP"},
}

// Pipe2Flags are pipe2's and dup3's flags.
var Pipe2Flags = Flags{{0o4000, "O_NONBLOCK"}, {0o40000, "O_DIRECT"}, {0o2000000, "O_CLOEXEC"}}

// GetrandomFlags are getrandom's flags.
var GetrandomFlags = Flags{{1, "GRND_NONBLOCK"}, {2, "GRND_RANDOM"}, {4, "GRND_INSECURE"}}

// MsgFlags are the send and receive flags.
var MsgFlags = Flags{
	{1, "MSG_OOB"}, {2, "MSG_PEEK"}, {4, "MSG_DONTROUTE"}, {8, "MSG_CTRUNC"}, {0x10, "MSG_PROXY"},
	{0x20, "MSG_TRUNC"}, {0x40, "MSG_DONTWAIT"}, {0x80, "MSG_EOR"}, {0x100, "MSG_WAITALL"},
	{0x200, "MSG_FIN"}, {0x400, "MSG_SYN"}, {0x800, "MSG_CONFIRM"}, {0x1000, "MSG_RST"},
	{0x2000, "MSG_ERRQUEUE"}, {0x4000, "MSG_NOSIGNAL"}, {0x8000, "MSG_MORE"}, {0x10000, "MSG_WAITFORONE"},
	{0x40000, "MSG_BATCH"}, {0x4000000, "MSG_ZEROCOPY"}, {0x20000000, "MSG_FASTOPEN"},
	{0x40000000, "MSG_CMSG_CLOEXEC"},
}

// Shutdown names shutdown's how.
var Shutdown = Enum{{0, "SHUT_RD"}, {1, "SHUT_WR"}, {2, "SHUT_RDWR"}}

// FsMagic names statfs's f_type, the file system magic numbers
// (linux/magic.h) as strace prints them.
var FsMagic = Enum{
	{0xef53, "EXT2_SUPER_MAGIC"}, {0x01021994, "TMPFS_MAGIC"}, {0x9fa0, "PROC_SUPER_MAGIC"},
	{0x62656572, "SYSFS_MAGIC"}, {0x794c7630, "OVERLAYFS_SUPER_MAGIC"}, {0x9123683e, "BTRFS_SUPER_MAGIC"},
	{0x58465342, "XFS_SUPER_MAGIC"}, {0x1cd1, "DEVPTS_SUPER_MAGIC"}, {0x63677270, "CGROUP2_SUPER_MAGIC"},
	{0x27e0eb, "CGROUP_SUPER_MAGIC"}, {0x6969, "NFS_SUPER_MAGIC"}, {0x65735546, "FUSE_SUPER_MAGIC"},
	{0x858458f6, "RAMFS_MAGIC"}, {0x73717368, "SQUASHFS_MAGIC"}, {0x4d44, "MSDOS_SUPER_MAGIC"},
	{0x01021997, "V9FS_MAGIC"}, {0x64626720, "DEBUGFS_MAGIC"}, {0x73636673, "SECURITYFS_MAGIC"},
	{0x9660, "ISOFS_SUPER_MAGIC"}, {0x2011bab0, "EXFAT_SUPER_MAGIC"}, {0xf2f52010, "F2FS_SUPER_MAGIC"},
	{0x74726163, "TRACEFS_MAGIC"}, {0x42494e4d, "BINFMTFS_MAGIC"}, {0xcafe4a11, "BPF_FS_MAGIC"},
	{0x19800202, "MQUEUE_MAGIC"}, {0x958458f6, "HUGETLBFS_MAGIC"}, {0x50495045, "PIPEFS_MAGIC"},
	{0x534f434b, "SOCKFS_MAGIC"}, {0x6e736673, "NSFS_MAGIC"}, {0x5a3c69f0, "AAFS_MAGIC"},
}

// StatfsFlags are statfs's f_flags (the ST_* mount flags).
var StatfsFlags = Flags{
	{0x1, "ST_RDONLY"}, {0x2, "ST_NOSUID"}, {0x4, "ST_NODEV"}, {0x8, "ST_NOEXEC"},
	{0x10, "ST_SYNCHRONOUS"}, {0x20, "ST_VALID"}, {0x40, "ST_MANDLOCK"}, {0x400, "ST_NOATIME"},
	{0x800, "ST_NODIRATIME"}, {0x1000, "ST_RELATIME"}, {0x2000, "ST_NOSYMFOLLOW"},
}
