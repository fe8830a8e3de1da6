package syscalls

import "ttd/internal/linux"

// kind is how an argument is decoded.
type kind uint8

const (
	kHex            kind = iota // 0x... (unknown arguments)
	kInt                        // int, signed decimal (32 bits)
	kLong                       // long, signed decimal
	kUint                       // unsigned decimal
	kPtr                        // NULL or 0x...
	kFd                         // a descriptor
	kDirfd                      // a descriptor or AT_FDCWD
	kPath                       // a NUL-terminated string read by the kernel
	kBufIn                      // bytes read by the kernel; length in argument p
	kBufOut                     // bytes written by the kernel; length = result
	kStrOut                     // a string written by the kernel; length = result (readlink, getcwd)
	kOpenFlags                  // open's flags
	kMode                       // a permission mode, octal
	kAtFlags                    // AT_* flags
	kAtAccess                   // faccessat2's flags
	kAccess                     // R_OK|W_OK|X_OK
	kProt                       // PROT_*
	kMmapFlags                  // MAP_*
	kSeek                       // SEEK_*
	kMadvise                    // MADV_*
	kRename                     // RENAME_*
	kMsync                      // MS_*
	kMremap                     // MREMAP_*
	kStatOut                    // struct stat written by the kernel
	kStatxOut                   // struct statx written by the kernel
	kStatxFlags                 // statx's flags
	kStatxMask                  // statx's mask
	kIovIn                      // struct iovec[argument p] the kernel read
	kIovOut                     // struct iovec[argument p] the kernel filled (result bytes)
	kTimespecIn                 // struct timespec read
	kTimespecOut                // struct timespec written
	kUtimes                     // struct timespec[2] read (NULL: now)
	kRlimitIn                   // struct rlimit read
	kRlimitOut                  // struct rlimit written
	kRlimitRes                  // RLIMIT_*
	kSigsetIn                   // sigset_t read; size in argument p
	kSigsetOut                  // sigset_t written; size in argument p
	kSigactIn                   // struct sigaction read
	kSigactOut                  // struct sigaction written
	kSigHow                     // SIG_BLOCK...
	kSignal                     // a signal number
	kClock                      // CLOCK_*
	kPipeOut                    // int[2] written
	kSockaddrIn                 // struct sockaddr read; length in argument p
	kFamily                     // AF_*
	kSockType                   // SOCK_*
	kDents                      // getdents64's buffer: an address and the entry count
	kFutexOp                    // FUTEX_*
	kWaitOpts                   // W*
	kWstatusOut                 // int *wstatus written
	kArchPrctl                  // ARCH_*
	kGrnd                       // GRND_*
	kIoctl                      // an ioctl request
	kUnameOut                   // struct utsname written
	kFcntlCmd                   // F_*
	kFcntlArg                   // fcntl's third argument (by command)
	kPipe2Flags                 // O_CLOEXEC|O_NONBLOCK|O_DIRECT
	kCloneFlags                 // clone's flags with the exit signal
	kOff                        // a file offset, signed decimal
	kPollfds                    // struct pollfd[argument p]
	kCloneArgs                  // clone3's struct clone_args (size in argument p)
	kTimeOut                    // time's time_t * (NULL or [N])
	kSigreturn                  // rt_sigreturn: the mask its frame restores
	kMsgFlags                   // MSG_*
	kShutdown                   // SHUT_*
	kSiginfoIn                  // a siginfo_t the kernel reads
	kMsghdr                     // struct msghdr (sendmsg: read; recvmsg: filled in)
	kFdsetIn                    // select's fd_set at entry (nfds in argument 0)
	kTimespecEntry              // a struct timespec the call overwrites (its value at entry)
	kTimevalEntry               // a struct timeval the call overwrites (its value at entry)
	kPselectMask                // pselect6's {sigset_t *, size_t}
	kIoctlArg                   // ioctl's third argument, by request
	kPtrOut                     // an address the kernel may write through (printed as kPtr, at exit)
	kFutexRest                  // futex's arguments after the operation, by operation
	kCloneAll                   // clone's arguments, as strace names them
	kSysinfoOut                 // struct sysinfo written
	kStatfsOut                  // struct statfs written
	kCpusetOut                  // a CPU mask written (the result is its size)
	kFadvise                    // POSIX_FADV_*
	kSocklenFail                // a socklen_t * a failed call left as it was: [n]
	kTimevalOut                 // struct timeval written
	kMlockall                   // MCL_*
	kMlock2                     // MLOCK_*
	kPrioWhich                  // PRIO_*
	kEpollOp                    // EPOLL_CTL_*
	kEpollCreate                // EPOLL_CLOEXEC
	kStackIn                    // stack_t read
	kStackOut                   // stack_t written
	kU32Out                     // a uid_t, gid_t or unsigned written: [N]
	kGidsOut                    // gid_t[result] written
	kEpollEventIn               // struct epoll_event read
	kEpollEventsOut             // struct epoll_event[result] written
	kPrctlAll                   // prctl's arguments, by option
	kRusageWho                  // RUSAGE_*
	kRusageOut                  // struct rusage written
	kItimerWhich                // ITIMER_*
	kItimervalIn                // struct itimerval read
	kItimervalOut               // struct itimerval written
	kItimerspecIn               // struct itimerspec read
	kItimerspecOut              // struct itimerspec written
	kSigeventIn                 // struct sigevent read
	kIntOut                     // an int written: [N] (a timer id, sched_param)
	kTimerFlags                 // TIMER_ABSTIME
	kTfdFlags                   // TFD_CLOEXEC|TFD_NONBLOCK
	kTfdSettime                 // TFD_TIMER_*
	kIdtype                     // P_*
	kSiginfoOut                 // a siginfo_t written
	kCpusetIn                   // a CPU mask read; size in argument p
	kSockProto                  // socket's protocol, by family
	kSockLevel                  // SOL_*
	kSockOpt                    // a socket option, by level
	kSockoptIn                  // setsockopt's value (length in argument 4)
	kSockoptOut                 // getsockopt's value (length written through argument 4)
	kSocklenOut                 // a socklen_t written: [N]
	kXattrFlags                 // XATTR_CREATE|XATTR_REPLACE
	kSfdFlags                   // SFD_CLOEXEC|SFD_NONBLOCK
	kIoprioWhich                // IOPRIO_WHO_*
	kIoprio                     // IOPRIO_PRIO_VALUE(class, data)
	kPersona                    // a personality; 0xffffffff (a query) in hex
	kInotifyMask                // IN_* events and watch flags
	kInotifyInit                // inotify_init1's flags
	kCapHeader                  // capget's and capset's header
	kCapData                    // their capability sets
	kMknodMode                  // mknod's mode, and the device that follows for S_IFCHR and S_IFBLK
	kSpliceFlags                // SPLICE_F_*
	kCloneNs                    // CLONE_* flags of unshare and setns
	kMincoreOut                 // mincore's vector: a byte a page of argument p's length
	kPtrValOut                  // a pointer written: [0x...]
	kSizeOut                    // a size_t written: [N]
	kIpcKey                     // IPC_PRIVATE or a key
	kShmgetFlags                // IPC_CREAT|IPC_EXCL|... and the mode
	kShmatFlags                 // SHM_RDONLY|...
	kShmctlCmd                  // IPC_RMID, IPC_STAT...
	kShmidDs                    // shmctl's struct shmid_ds, by command
	kPtraceReq                  // PTRACE_*
	kPtraceData                 // ptrace's data, by request: options, a signal, or an address
)

// retKind is how a result is printed.
type retKind uint8

const (
	rDec     retKind = iota // decimal
	rHex                    // 0x... (addresses)
	rOct                    // octal (umask)
	rFcntl                  // by fcntl command
	rNone                   // does not return ("?")
	rPoll                   // the count, and the revents of the ready descriptors
	rSelect                 // the count, the ready descriptors of each set, the time left
	rPpoll                  // rPoll, and the time left
	rSignal                 // a signal number, and its name
	rSched                  // a scheduling policy, and its name
	rPrctl                  // by prctl option
	rIoprio                 // an I/O priority, and its parts
	rPersona                // a personality in hex, and its parts
)

type arg struct {
	k kind
	p int8 // the argument giving a length or a count
}

type sig struct {
	args []arg
	ret  retKind
}

func a(ks ...kind) []arg {
	r := make([]arg, len(ks))
	for i, k := range ks {
		r[i] = arg{k: k}
	}
	return r
}

// withLen sets argument i's length argument.
func withLen(as []arg, i, p int) []arg {
	as[i].p = int8(p)
	return as
}

// sigs are the decoders of the syscalls strace decodes that ttd's
// programs make; the others print their six arguments in hex.
var sigs = map[int]sig{
	linux.SysRead:              {args: a(kFd, kBufOut, kUint)},
	linux.SysWrite:             {args: withLen(a(kFd, kBufIn, kUint), 1, 2)},
	linux.SysOpen:              {args: a(kPath, kOpenFlags, kMode)},
	linux.SysClose:             {args: a(kFd)},
	linux.SysStat:              {args: a(kPath, kStatOut)},
	linux.SysFstat:             {args: a(kFd, kStatOut)},
	linux.SysLstat:             {args: a(kPath, kStatOut)},
	linux.SysLseek:             {args: a(kFd, kOff, kSeek)},
	linux.SysMmap:              {args: a(kPtr, kUint, kProt, kMmapFlags, kFd, kHex), ret: rHex},
	linux.SysMprotect:          {args: a(kPtr, kUint, kProt)},
	linux.SysMunmap:            {args: a(kPtr, kUint)},
	linux.SysBrk:               {args: a(kPtr), ret: rHex},
	linux.SysRtSigaction:       {args: withLen(a(kSignal, kSigactIn, kSigactOut, kUint), 1, 3)},
	linux.SysRtSigprocmask:     {args: withLen(withLen(a(kSigHow, kSigsetIn, kSigsetOut, kUint), 1, 3), 2, 3)},
	linux.SysIoctl:             {args: a(kFd, kIoctl, kIoctlArg)},
	linux.SysSelect:            {args: a(kInt, kFdsetIn, kFdsetIn, kFdsetIn, kTimevalEntry), ret: rSelect},
	linux.SysPselect6:          {args: a(kInt, kFdsetIn, kFdsetIn, kFdsetIn, kTimespecEntry, kPselectMask), ret: rSelect},
	linux.SysPpoll:             {args: withLen(withLen(a(kPollfds, kUint, kTimespecEntry, kSigsetIn, kUint), 0, 1), 3, 4), ret: rPpoll},
	linux.SysPread64:           {args: a(kFd, kBufOut, kUint, kOff)},
	linux.SysPwrite64:          {args: withLen(a(kFd, kBufIn, kUint, kOff), 1, 2)},
	linux.SysReadv:             {args: withLen(a(kFd, kIovOut, kInt), 1, 2)},
	linux.SysWritev:            {args: withLen(a(kFd, kIovIn, kInt), 1, 2)},
	linux.SysAccess:            {args: a(kPath, kAccess)},
	linux.SysPipe:              {args: a(kPipeOut)},
	linux.SysSchedYield:        {},
	linux.SysMremap:            {args: a(kPtr, kUint, kUint, kMremap, kPtr), ret: rHex},
	linux.SysMsync:             {args: a(kPtr, kUint, kMsync)},
	linux.SysMadvise:           {args: a(kPtr, kUint, kMadvise)},
	linux.SysSetuid:            {args: a(kInt)},
	linux.SysSetgid:            {args: a(kInt)},
	linux.SysSetreuid:          {args: a(kInt, kInt)},
	linux.SysSetregid:          {args: a(kInt, kInt)},
	linux.SysSetresuid:         {args: a(kInt, kInt, kInt)},
	linux.SysSetresgid:         {args: a(kInt, kInt, kInt)},
	linux.SysSetpgid:           {args: a(kInt, kInt)},
	linux.SysGetpgid:           {args: a(kInt)},
	linux.SysGetsid:            {args: a(kInt)},
	linux.SysTkill:             {args: a(kInt, kSignal)},
	linux.SysEpollCreate:       {args: a(kInt)},
	linux.SysGetresuid:         {args: a(kU32Out, kU32Out, kU32Out)},
	linux.SysGetresgid:         {args: a(kU32Out, kU32Out, kU32Out)},
	linux.SysGetgroups:         {args: a(kInt, kGidsOut)},
	linux.SysGetcpu:            {args: a(kU32Out, kU32Out, kPtr)},
	linux.SysSigaltstack:       {args: a(kStackIn, kStackOut)},
	linux.SysEpollCtl:          {args: a(kFd, kEpollOp, kFd, kEpollEventIn)},
	linux.SysEpollWait:         {args: a(kFd, kEpollEventsOut, kInt, kInt)},
	linux.SysEpollPwait:        {args: withLen(a(kFd, kEpollEventsOut, kInt, kInt, kSigsetIn, kUint), 4, 5)},
	linux.SysEpollPwait2:       {args: withLen(a(kFd, kEpollEventsOut, kInt, kTimespecIn, kSigsetIn, kUint), 4, 5)},
	linux.SysEventfd:           {args: a(kUint)},
	linux.SysSetrlimit:         {args: a(kRlimitRes, kRlimitIn)},
	linux.SysGetpriority:       {args: a(kPrioWhich, kInt)},
	linux.SysSetpriority:       {args: a(kPrioWhich, kInt, kInt)},
	linux.SysPreadv:            {args: withLen(a(kFd, kIovOut, kInt, kOff), 1, 2)},
	linux.SysPwritev:           {args: withLen(a(kFd, kIovIn, kInt, kOff), 1, 2)},
	linux.SysMlock:             {args: a(kPtr, kUint)},
	linux.SysMunlock:           {args: a(kPtr, kUint)},
	linux.SysMlockall:          {args: a(kMlockall)},
	linux.SysMunlockall:        {},
	linux.SysMlock2:            {args: a(kPtr, kUint, kMlock2)},
	linux.SysDup:               {args: a(kFd)},
	linux.SysDup2:              {args: a(kFd, kFd)},
	linux.SysNanosleep:         {args: a(kTimespecIn, kPtrOut)},
	linux.SysGetpid:            {},
	linux.SysSocket:            {args: a(kFamily, kSockType, kSockProto)},
	linux.SysConnect:           {args: withLen(a(kFd, kSockaddrIn, kUint), 1, 2)},
	linux.SysSendto:            {args: withLen(withLen(a(kFd, kBufIn, kUint, kMsgFlags, kSockaddrIn, kUint), 1, 2), 4, 5)},
	linux.SysBind:              {args: withLen(a(kFd, kSockaddrIn, kUint), 1, 2)},
	linux.SysListen:            {args: a(kFd, kInt)},
	linux.SysExit:              {args: a(kInt), ret: rNone},
	linux.SysWait4:             {args: a(kInt, kWstatusOut, kWaitOpts, kPtr)},
	linux.SysKill:              {args: a(kInt, kSignal)},
	linux.SysUname:             {args: a(kUnameOut)},
	linux.SysFcntl:             {args: a(kFd, kFcntlCmd, kFcntlArg), ret: rFcntl},
	linux.SysFlock:             {args: a(kFd, kHex)},
	linux.SysFsync:             {args: a(kFd)},
	linux.SysFdatasync:         {args: a(kFd)},
	linux.SysTruncate:          {args: a(kPath, kOff)},
	linux.SysFtruncate:         {args: a(kFd, kOff)},
	linux.SysGetcwd:            {args: a(kStrOut, kUint)},
	linux.SysChdir:             {args: a(kPath)},
	linux.SysFchdir:            {args: a(kFd)},
	linux.SysRename:            {args: a(kPath, kPath)},
	linux.SysMkdir:             {args: a(kPath, kMode)},
	linux.SysRmdir:             {args: a(kPath)},
	linux.SysCreat:             {args: a(kPath, kMode)},
	linux.SysLink:              {args: a(kPath, kPath)},
	linux.SysUnlink:            {args: a(kPath)},
	linux.SysSymlink:           {args: a(kPath, kPath)},
	linux.SysReadlink:          {args: a(kPath, kStrOut, kUint)},
	linux.SysChmod:             {args: a(kPath, kMode)},
	linux.SysFchmod:            {args: a(kFd, kMode)},
	linux.SysChown:             {args: a(kPath, kInt, kInt)},
	linux.SysFchown:            {args: a(kFd, kInt, kInt)},
	linux.SysLchown:            {args: a(kPath, kInt, kInt)},
	linux.SysUmask:             {args: a(kMode), ret: rOct},
	linux.SysGetrlimit:         {args: a(kRlimitRes, kRlimitOut)},
	linux.SysGetuid:            {},
	linux.SysGetgid:            {},
	linux.SysGeteuid:           {},
	linux.SysGetegid:           {},
	linux.SysGetppid:           {},
	linux.SysGettid:            {},
	linux.SysArchPrctl:         {args: a(kArchPrctl, kHex)},
	linux.SysFutex:             {args: a(kPtr, kFutexOp, kFutexRest)},
	linux.SysStatfs:            {args: a(kPath, kStatfsOut)},
	linux.SysFstatfs:           {args: a(kFd, kStatfsOut)},
	linux.SysGetxattr:          {args: a(kPath, kPath, kBufOut, kUint)},
	linux.SysLgetxattr:         {args: a(kPath, kPath, kBufOut, kUint)},
	linux.SysFgetxattr:         {args: a(kFd, kPath, kBufOut, kUint)},
	linux.SysSetTidAddress:     {args: a(kPtr)},
	linux.SysClockGettime:      {args: a(kClock, kTimespecOut)},
	linux.SysGettimeofday:      {args: a(kTimevalOut, kPtr)},
	linux.SysClockNanosleep:    {args: a(kClock, kInt, kTimespecIn, kPtrOut)},
	linux.SysExitGroup:         {args: a(kInt), ret: rNone},
	linux.SysTgkill:            {args: a(kInt, kInt, kSignal)},
	linux.SysOpenat:            {args: a(kDirfd, kPath, kOpenFlags, kMode)},
	linux.SysMkdirat:           {args: a(kDirfd, kPath, kMode)},
	linux.SysFchownat:          {args: a(kDirfd, kPath, kInt, kInt, kAtFlags)},
	linux.SysNewfstatat:        {args: a(kDirfd, kPath, kStatOut, kAtFlags)},
	linux.SysUnlinkat:          {args: a(kDirfd, kPath, kAtFlags)},
	linux.SysRenameat:          {args: a(kDirfd, kPath, kDirfd, kPath)},
	linux.SysLinkat:            {args: a(kDirfd, kPath, kDirfd, kPath, kAtFlags)},
	linux.SysSymlinkat:         {args: a(kPath, kDirfd, kPath)},
	linux.SysReadlinkat:        {args: a(kDirfd, kPath, kStrOut, kUint)},
	linux.SysFchmodat:          {args: a(kDirfd, kPath, kMode)},
	linux.SysFaccessat:         {args: a(kDirfd, kPath, kAccess)},
	linux.SysFaccessat2:        {args: a(kDirfd, kPath, kAccess, kAtAccess)},
	linux.SysUtimensat:         {args: a(kDirfd, kPath, kUtimes, kAtFlags)},
	linux.SysPipe2:             {args: a(kPipeOut, kPipe2Flags)},
	linux.SysDup3:              {args: a(kFd, kFd, kPipe2Flags)},
	linux.SysPrlimit64:         {args: a(kInt, kRlimitRes, kRlimitIn, kRlimitOut)},
	linux.SysRenameat2:         {args: a(kDirfd, kPath, kDirfd, kPath, kRename)},
	linux.SysGetrandom:         {args: a(kBufOut, kUint, kGrnd)},
	linux.SysStatx:             {args: a(kDirfd, kPath, kStatxFlags, kStatxMask, kStatxOut)},
	linux.SysGetdents64:        {args: a(kFd, kDents, kUint)},
	linux.SysSetRobustList:     {args: a(kPtr, kUint)},
	linux.SysRseq:              {args: a(kPtr, kHex, kInt, kHex)},
	linux.SysFallocate:         {args: a(kFd, kInt, kOff, kOff)},
	linux.SysSendfile:          {args: a(kFd, kFd, kPtr, kUint)},
	linux.SysCopyFileRange:     {args: a(kFd, kPtr, kFd, kPtr, kUint, kUint)},
	linux.SysSync:              {},
	linux.SysSyncfs:            {args: a(kFd)},
	linux.SysSetsid:            {},
	linux.SysGetpgrp:           {},
	linux.SysSchedGetaffinity:  {args: a(kInt, kUint, kCpusetOut)},
	linux.SysClone:             {args: a(kCloneAll)},
	linux.SysFork:              {},
	linux.SysVfork:             {},
	linux.SysPoll:              {args: withLen(a(kPollfds, kUint, kInt), 0, 1), ret: rPoll},
	linux.SysTime:              {args: a(kTimeOut)},
	linux.SysClockGetres:       {args: a(kClock, kTimespecOut)},
	linux.SysClone3:            {args: withLen(a(kCloneArgs, kUint), 0, 1)},
	linux.SysSocketpair:        {args: a(kFamily, kSockType, kInt, kPipeOut)},
	linux.SysShutdown:          {args: a(kFd, kShutdown)},
	linux.SysAccept:            {args: a(kFd, kPtr, kPtr)},
	linux.SysAccept4:           {args: a(kFd, kPtr, kPtr, kHex)},
	linux.SysRecvfrom:          {args: a(kFd, kBufOut, kUint, kMsgFlags, kPtr, kPtr)},
	linux.SysEventfd2:          {args: a(kUint, kHex)},
	linux.SysEpollCreate1:      {args: a(kEpollCreate)},
	linux.SysTimes:             {args: a(kPtr)},
	linux.SysSysinfo:           {args: a(kSysinfoOut)},
	linux.SysFadvise64:         {args: a(kFd, kOff, kOff, kFadvise)},
	linux.SysGetpeername:       {args: a(kFd, kPtrOut, kSocklenFail)},
	linux.SysGetsockname:       {args: a(kFd, kPtrOut, kSocklenFail)},
	linux.SysAlarm:             {args: a(kUint)},
	linux.SysPause:             {},
	linux.SysSendmsg:           {args: a(kFd, kMsghdr, kMsgFlags)},
	linux.SysRecvmsg:           {args: a(kFd, kMsghdr, kMsgFlags)},
	linux.SysRtSigpending:      {args: withLen(a(kSigsetOut, kUint), 0, 1)},
	linux.SysRtSigqueueinfo:    {args: a(kInt, kSignal, kSiginfoIn)},
	linux.SysRtTgsigqueueinfo:  {args: a(kInt, kInt, kSignal, kSiginfoIn)},
	linux.SysRtSigreturn:       {args: a(kSigreturn)},
	linux.SysPrctl:             {args: a(kPrctlAll), ret: rPrctl},
	linux.SysGetrusage:         {args: a(kRusageWho, kRusageOut)},
	linux.SysSetitimer:         {args: a(kItimerWhich, kItimervalIn, kItimervalOut)},
	linux.SysGetitimer:         {args: a(kItimerWhich, kItimervalOut)},
	linux.SysTimerCreate:       {args: a(kClock, kSigeventIn, kIntOut)},
	linux.SysTimerSettime:      {args: a(kInt, kTimerFlags, kItimerspecIn, kItimerspecOut)},
	linux.SysTimerGettime:      {args: a(kInt, kItimerspecOut)},
	linux.SysTimerGetoverrun:   {args: a(kInt)},
	linux.SysTimerDelete:       {args: a(kInt)},
	linux.SysTimerfdCreate:     {args: a(kClock, kTfdFlags)},
	linux.SysTimerfdSettime:    {args: a(kFd, kTfdSettime, kItimerspecIn, kItimerspecOut)},
	linux.SysTimerfdGettime:    {args: a(kFd, kItimerspecOut)},
	linux.SysWaitid:            {args: a(kIdtype, kInt, kSiginfoOut, kWaitOpts, kRusageOut)},
	linux.SysRtSigtimedwait:    {args: withLen(a(kSigsetIn, kSiginfoOut, kTimespecIn, kUint), 0, 3), ret: rSignal},
	linux.SysRtSigsuspend:      {args: withLen(a(kSigsetIn, kUint), 0, 1)},
	linux.SysSchedGetscheduler: {args: a(kInt), ret: rSched},
	linux.SysSchedGetparam:     {args: a(kInt, kIntOut)},
	linux.SysSchedSetaffinity:  {args: withLen(a(kInt, kUint, kCpusetIn), 2, 1)},
	linux.SysShmget:            {args: a(kIpcKey, kUint, kShmgetFlags)},
	linux.SysShmat:             {args: a(kInt, kPtr, kShmatFlags), ret: rHex},
	linux.SysShmdt:             {args: a(kPtr)},
	linux.SysShmctl:            {args: a(kInt, kShmctlCmd, kShmidDs)},
	linux.SysMknod:             {args: a(kPath, kMknodMode)},
	linux.SysMknodat:           {args: a(kDirfd, kPath, kMknodMode)},
	linux.SysSplice:            {args: a(kFd, kPtr, kFd, kPtr, kUint, kSpliceFlags)},
	linux.SysTee:               {args: a(kFd, kFd, kUint, kSpliceFlags)},
	linux.SysUnshare:           {args: a(kCloneNs)},
	linux.SysSetns:             {args: a(kFd, kCloneNs)},
	linux.SysMincore:           {args: withLen(a(kPtr, kUint, kMincoreOut), 2, 1)},
	linux.SysGetRobustList:     {args: a(kInt, kPtrValOut, kSizeOut)},
	linux.SysIoprioGet:         {args: a(kIoprioWhich, kInt), ret: rIoprio},
	linux.SysPersonality:       {args: a(kPersona), ret: rPersona},
	linux.SysPtrace:            {args: a(kPtraceReq, kInt, kPtr, kPtraceData)},
	linux.SysProcessVmReadv:    {args: withLen(a(kInt, kIovOut, kUint, kPtr, kUint, kUint), 1, 2)},
	linux.SysProcessVmWritev:   {args: withLen(a(kInt, kIovIn, kUint, kPtr, kUint, kUint), 1, 2)},
	linux.SysInotifyInit:       {},
	linux.SysCapget:            {args: a(kCapHeader, kCapData)},
	linux.SysCapset:            {args: a(kCapHeader, kCapData)},
	linux.SysInotifyInit1:      {args: a(kInotifyInit)},
	linux.SysInotifyAddWatch:   {args: a(kFd, kPath, kInotifyMask)},
	linux.SysInotifyRmWatch:    {args: a(kFd, kInt)},
	linux.SysIoprioSet:         {args: a(kIoprioWhich, kInt, kIoprio)},
	linux.SysSignalfd4:         {args: withLen(a(kFd, kSigsetIn, kUint, kSfdFlags), 1, 2)},
	linux.SysSignalfd:          {args: withLen(a(kFd, kSigsetIn, kUint), 1, 2)},
	linux.SysSetxattr:          {args: withLen(a(kPath, kPath, kBufIn, kUint, kXattrFlags), 2, 3)},
	linux.SysLsetxattr:         {args: withLen(a(kPath, kPath, kBufIn, kUint, kXattrFlags), 2, 3)},
	linux.SysFsetxattr:         {args: withLen(a(kFd, kPath, kBufIn, kUint, kXattrFlags), 2, 3)},
	linux.SysListxattr:         {args: a(kPath, kBufOut, kUint)},
	linux.SysLlistxattr:        {args: a(kPath, kBufOut, kUint)},
	linux.SysFlistxattr:        {args: a(kFd, kBufOut, kUint)},
	linux.SysRemovexattr:       {args: a(kPath, kPath)},
	linux.SysLremovexattr:      {args: a(kPath, kPath)},
	linux.SysFremovexattr:      {args: a(kFd, kPath)},
	linux.SysSetsockopt:        {args: a(kFd, kSockLevel, kSockOpt, kSockoptIn, kUint)},
	linux.SysGetsockopt:        {args: a(kFd, kSockLevel, kSockOpt, kSockoptOut, kSocklenOut)},
}

// nargs are the argument counts of the syscalls sigs leaves out, for
// their hex form (six when unknown).
var nargs = map[int]int{}
