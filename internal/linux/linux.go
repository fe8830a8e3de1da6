package linux

import (
	"strconv"
	"sync"
)

// NumSyscalls bounds the syscall numbers: every number Linux uses is
// below it.
const NumSyscalls = len(syscallNames)

// SyscallName returns the name of x86-64 Linux syscall nr ("syscall_N"
// when Linux does not use the number).
func SyscallName(nr int) string {
	if nr >= 0 && nr < len(syscallNames) && syscallNames[nr] != "" {
		return syscallNames[nr]
	}
	return "syscall_" + strconv.Itoa(nr)
}

// Syscall returns the name of syscall nr, and false when Linux does not
// use the number.
func Syscall(nr int) (string, bool) {
	if nr >= 0 && nr < len(syscallNames) && syscallNames[nr] != "" {
		return syscallNames[nr], true
	}
	return "", false
}

var syscallNumbers = sync.OnceValue(func() map[string]int {
	m := make(map[string]int, len(syscallNames))
	for nr, n := range syscallNames {
		if n != "" {
			m[n] = nr
		}
	}
	return m
})

// SyscallNumber returns the number of a syscall name.
func SyscallNumber(name string) (int, bool) {
	nr, ok := syscallNumbers()[name]
	return nr, ok
}

// Errno is a Linux error number (positive).
type Errno int

// Name is the errno's symbolic name ("ENOENT"), or "E???" for a number
// Linux does not define... as strace shows them.
func (e Errno) Name() string {
	if e > 0 && int(e) < len(errnoNames) && errnoNames[e] != "" {
		return errnoNames[e]
	}
	if n, ok := kernelErrnos[e]; ok {
		return n
	}
	return "E???"
}

// Message is glibc's strerror text for the errno.
func (e Errno) Message() string {
	if e > 0 && int(e) < len(errnoMessages) && errnoMessages[e] != "" {
		return errnoMessages[e]
	}
	if m, ok := kernelErrnoMessages[e]; ok {
		return m
	}
	return "Unknown error " + strconv.Itoa(int(e))
}

// String is the errno as strace prints a failed call's result after
// "-1 ": "ENOENT (No such file or directory)".
func (e Errno) String() string { return e.Name() + " (" + e.Message() + ")" }

// ErrnoByName returns the errno with a symbolic name.
func ErrnoByName(name string) (Errno, bool) {
	for i, n := range errnoNames {
		if n == name {
			return Errno(i), true
		}
	}
	switch name {
	case "EWOULDBLOCK":
		return EAGAIN, true
	case "EDEADLOCK":
		return EDEADLK, true
	}
	return 0, false
}

// MaxErrno is the largest value a syscall returns as -errno: results in
// [-4095, -1] are errors.
const MaxErrno = 4095

// kernelErrnos are the errnos the kernel uses internally, which a
// syscall can leave in rax when a signal interrupts it.
var kernelErrnos = map[Errno]string{
	512: "ERESTARTSYS", 513: "ERESTARTNOINTR", 514: "ERESTARTNOHAND",
	515: "ENOIOCTLCMD", 516: "ERESTART_RESTARTBLOCK",
}

var kernelErrnoMessages = map[Errno]string{
	512: "To be restarted if SA_RESTART is set", 513: "To be restarted",
	514: "To be restarted if no handler", 515: "Unknown error 515",
	516: "Interrupted by signal",
}

// Signal names, by number (1 to 31; strace prints real-time signals as
// SIGRTMIN and SIGRT_n).
var signalNames = [...]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
	14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
	20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
	26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

// SignalName returns a signal's name as strace prints it ("SIGSEGV",
// "SIGRTMIN", "SIGRT_3"), or the number for one out of range.
func SignalName(sig int) string {
	switch {
	case sig > 0 && sig < len(signalNames):
		return signalNames[sig]
	case sig == 32:
		return "SIGRTMIN"
	case sig > 32 && sig <= 64:
		return "SIGRT_" + strconv.Itoa(sig-32)
	}
	return strconv.Itoa(sig)
}

// SignalNumber returns the number of a signal name ("SIGSEGV" or "SEGV").
func SignalNumber(name string) (int, bool) {
	for i, n := range signalNames {
		if n != "" && (n == name || n[3:] == name) {
			return i, true
		}
	}
	return 0, false
}
