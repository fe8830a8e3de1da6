package linux

// The names strace gives the arguments of the calls that control a
// process: prctl, resource usage, timers, waitid and scheduling.

// PrctlOptions names prctl's first argument.
var PrctlOptions = Enum{
	{1, "PR_SET_PDEATHSIG"}, {2, "PR_GET_PDEATHSIG"}, {3, "PR_GET_DUMPABLE"}, {4, "PR_SET_DUMPABLE"},
	{5, "PR_GET_UNALIGN"}, {6, "PR_SET_UNALIGN"}, {7, "PR_GET_KEEPCAPS"}, {8, "PR_SET_KEEPCAPS"},
	{9, "PR_GET_FPEMU"}, {10, "PR_SET_FPEMU"}, {11, "PR_GET_FPEXC"}, {12, "PR_SET_FPEXC"},
	{13, "PR_GET_TIMING"}, {14, "PR_SET_TIMING"}, {15, "PR_SET_NAME"}, {16, "PR_GET_NAME"},
	{19, "PR_GET_ENDIAN"}, {20, "PR_SET_ENDIAN"}, {21, "PR_GET_SECCOMP"}, {22, "PR_SET_SECCOMP"},
	{23, "PR_CAPBSET_READ"}, {24, "PR_CAPBSET_DROP"}, {25, "PR_GET_TSC"}, {26, "PR_SET_TSC"},
	{27, "PR_GET_SECUREBITS"}, {28, "PR_SET_SECUREBITS"}, {29, "PR_SET_TIMERSLACK"}, {30, "PR_GET_TIMERSLACK"},
	{31, "PR_TASK_PERF_EVENTS_DISABLE"}, {32, "PR_TASK_PERF_EVENTS_ENABLE"}, {33, "PR_MCE_KILL"},
	{34, "PR_MCE_KILL_GET"}, {35, "PR_SET_MM"}, {36, "PR_SET_CHILD_SUBREAPER"}, {37, "PR_GET_CHILD_SUBREAPER"},
	{38, "PR_SET_NO_NEW_PRIVS"}, {39, "PR_GET_NO_NEW_PRIVS"}, {40, "PR_GET_TID_ADDRESS"},
	{41, "PR_SET_THP_DISABLE"}, {42, "PR_GET_THP_DISABLE"}, {43, "PR_MPX_ENABLE_MANAGEMENT"},
	{44, "PR_MPX_DISABLE_MANAGEMENT"}, {45, "PR_SET_FP_MODE"}, {46, "PR_GET_FP_MODE"}, {47, "PR_CAP_AMBIENT"},
	{50, "PR_SVE_SET_VL"}, {51, "PR_SVE_GET_VL"}, {52, "PR_GET_SPECULATION_CTRL"}, {53, "PR_SET_SPECULATION_CTRL"},
	{54, "PR_PAC_RESET_KEYS"}, {55, "PR_SET_TAGGED_ADDR_CTRL"}, {56, "PR_GET_TAGGED_ADDR_CTRL"},
	{57, "PR_SET_IO_FLUSHER"}, {58, "PR_GET_IO_FLUSHER"}, {59, "PR_SET_SYSCALL_USER_DISPATCH"},
	{60, "PR_PAC_SET_ENABLED_KEYS"}, {61, "PR_PAC_GET_ENABLED_KEYS"}, {62, "PR_SCHED_CORE"},
	{0x53564d41, "PR_SET_VMA"}, {0x59616d61, "PR_SET_PTRACER"},
}

// prctl's options, as emu and the exporter test them.
const (
	PR_SET_PDEATHSIG       = 1
	PR_GET_PDEATHSIG       = 2
	PR_GET_DUMPABLE        = 3
	PR_SET_DUMPABLE        = 4
	PR_GET_KEEPCAPS        = 7
	PR_SET_KEEPCAPS        = 8
	PR_SET_NAME            = 15
	PR_GET_NAME            = 16
	PR_GET_SECCOMP         = 21
	PR_CAPBSET_READ        = 23
	PR_CAPBSET_DROP        = 24
	PR_SET_TIMERSLACK      = 29
	PR_GET_TIMERSLACK      = 30
	PR_MCE_KILL_GET        = 34
	PR_SET_CHILD_SUBREAPER = 36
	PR_GET_CHILD_SUBREAPER = 37
	PR_SET_NO_NEW_PRIVS    = 38
	PR_GET_TID_ADDRESS     = 40
	PR_SET_THP_DISABLE     = 41
	PR_SET_VMA             = 0x53564d41
	PR_SET_PTRACER         = 0x59616d61
)

// DumpableModes names PR_SET_DUMPABLE's argument and PR_GET_DUMPABLE's
// result.
var DumpableModes = Enum{{0, "SUID_DUMP_DISABLE"}, {1, "SUID_DUMP_USER"}, {2, "SUID_DUMP_ROOT"}}

// MceKillPolicies names PR_MCE_KILL_GET's result.
var MceKillPolicies = Enum{{0, "PR_MCE_KILL_LATE"}, {1, "PR_MCE_KILL_EARLY"}, {2, "PR_MCE_KILL_DEFAULT"}}

// Capabilities names the capabilities (PR_CAPBSET_READ and _DROP).
var Capabilities = Enum{
	{0, "CAP_CHOWN"}, {1, "CAP_DAC_OVERRIDE"}, {2, "CAP_DAC_READ_SEARCH"}, {3, "CAP_FOWNER"}, {4, "CAP_FSETID"},
	{5, "CAP_KILL"}, {6, "CAP_SETGID"}, {7, "CAP_SETUID"}, {8, "CAP_SETPCAP"}, {9, "CAP_LINUX_IMMUTABLE"},
	{10, "CAP_NET_BIND_SERVICE"}, {11, "CAP_NET_BROADCAST"}, {12, "CAP_NET_ADMIN"}, {13, "CAP_NET_RAW"},
	{14, "CAP_IPC_LOCK"}, {15, "CAP_IPC_OWNER"}, {16, "CAP_SYS_MODULE"}, {17, "CAP_SYS_RAWIO"},
	{18, "CAP_SYS_CHROOT"}, {19, "CAP_SYS_PTRACE"}, {20, "CAP_SYS_PACCT"}, {21, "CAP_SYS_ADMIN"},
	{22, "CAP_SYS_BOOT"}, {23, "CAP_SYS_NICE"}, {24, "CAP_SYS_RESOURCE"}, {25, "CAP_SYS_TIME"},
	{26, "CAP_SYS_TTY_CONFIG"}, {27, "CAP_MKNOD"}, {28, "CAP_LEASE"}, {29, "CAP_AUDIT_WRITE"},
	{30, "CAP_AUDIT_CONTROL"}, {31, "CAP_SETFCAP"}, {32, "CAP_MAC_OVERRIDE"}, {33, "CAP_MAC_ADMIN"},
	{34, "CAP_SYSLOG"}, {35, "CAP_WAKE_ALARM"}, {36, "CAP_BLOCK_SUSPEND"}, {37, "CAP_AUDIT_READ"},
	{38, "CAP_PERFMON"}, {39, "CAP_BPF"}, {40, "CAP_CHECKPOINT_RESTORE"},
}

// RusageWho names getrusage's first argument (RUSAGE_CHILDREN is -1).
var RusageWho = Enum{{0, "RUSAGE_SELF"}, {1<<64 - 1, "RUSAGE_CHILDREN"}, {1, "RUSAGE_THREAD"}}

// Itimers names the interval timers of getitimer and setitimer.
var Itimers = Enum{{0, "ITIMER_REAL"}, {1, "ITIMER_VIRTUAL"}, {2, "ITIMER_PROF"}}

// SigevNotify names struct sigevent's sigev_notify.
var SigevNotify = Enum{{0, "SIGEV_SIGNAL"}, {1, "SIGEV_NONE"}, {2, "SIGEV_THREAD"}, {4, "SIGEV_THREAD_ID"}}

// TimerFlags are timer_settime's flags.
var TimerFlags = Flags{{1, "TIMER_ABSTIME"}}

// TimerfdFlags are timerfd_create's flags.
var TimerfdFlags = Flags{{0o2000000, "TFD_CLOEXEC"}, {0o4000, "TFD_NONBLOCK"}}

// TimerfdSettimeFlags are timerfd_settime's flags.
var TimerfdSettimeFlags = Flags{{1, "TFD_TIMER_ABSTIME"}, {2, "TFD_TIMER_CANCEL_ON_SET"}}

// Idtypes names waitid's first argument.
var Idtypes = Enum{{0, "P_ALL"}, {1, "P_PID"}, {2, "P_PGID"}, {3, "P_PIDFD"}}

// IoprioWho names ioprio_get's and ioprio_set's first argument.
var IoprioWho = Enum{{1, "IOPRIO_WHO_PROCESS"}, {2, "IOPRIO_WHO_PGRP"}, {3, "IOPRIO_WHO_USER"}}

// IoprioClasses names the classes of an I/O priority.
var IoprioClasses = Enum{{0, "IOPRIO_CLASS_NONE"}, {1, "IOPRIO_CLASS_RT"}, {2, "IOPRIO_CLASS_BE"}, {3, "IOPRIO_CLASS_IDLE"}}

// ShmgetFlags are shmget's flags above the mode.
var ShmgetFlags = Flags{{0o1000, "IPC_CREAT"}, {0o2000, "IPC_EXCL"}, {0o4000, "SHM_HUGETLB"}, {0o10000, "SHM_NORESERVE"}}

// ShmatFlags are shmat's flags.
var ShmatFlags = Flags{{0o10000, "SHM_RDONLY"}, {0o20000, "SHM_RND"}, {0o40000, "SHM_REMAP"}, {0o100000, "SHM_EXEC"}}

// ShmctlCommands names shmctl's commands.
var ShmctlCommands = Enum{
	{0, "IPC_RMID"}, {1, "IPC_SET"}, {2, "IPC_STAT"}, {3, "IPC_INFO"}, {11, "SHM_LOCK"}, {12, "SHM_UNLOCK"},
	{13, "SHM_STAT"}, {14, "SHM_INFO"}, {15, "SHM_STAT_ANY"},
}

// SchedPolicies names the scheduling policies (sched_getscheduler's
// result, less SCHED_RESET_ON_FORK).
var SchedPolicies = Enum{
	{0, "SCHED_OTHER"}, {1, "SCHED_FIFO"}, {2, "SCHED_RR"}, {3, "SCHED_BATCH"}, {4, "SCHED_ISO"},
	{5, "SCHED_IDLE"}, {6, "SCHED_DEADLINE"},
}
