// ptrace: a tracer and its tracees, printing only what is the same on
// every run (no pids, no addresses), so the host is the oracle (emu's
// TestPtrace also checks lines of it).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

// What glibc's and musl's headers may lack (linux/ptrace.h is not in
// musl's).
#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif
struct syscall_info {
	uint8_t op, pad[3];
	uint32_t arch;
	uint64_t ip, sp;
	union {
		struct {
			uint64_t nr, args[6];
		} entry;
		struct {
			int64_t rval;
			uint8_t is_error;
		} exit;
	};
};

static volatile long secret = 0x1234;
static volatile int got_usr1;

static void on_usr1(int s) { got_usr1 = s; }

static int wait_for(pid_t pid) {
	int st;
	pid_t r = waitpid(pid, &st, __WALL);
	if (r <= 0 || (pid > 0 && r != pid)) {
		printf("waitpid: %d %s\n", r, strerror(errno));
		exit(1);
	}
	return st;
}

static void show(const char *what, int st) {
	if (WIFSTOPPED(st))
		printf("%s: stopped sig %d event %d\n", what, WSTOPSIG(st), st >> 16);
	else if (WIFEXITED(st))
		printf("%s: exited %d\n", what, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("%s: killed by %d\n", what, WTERMSIG(st));
}

// syscalls: TRACEME, syscall-stops, registers, syscall info, peek and
// poke, process_vm_readv, signal-delivery-stops (injected, suppressed),
// PTRACE_EVENT_EXIT.
static void syscalls(void) {
	pid_t c = fork();
	if (c == 0) {
		signal(SIGUSR1, on_usr1);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		syscall(SYS_chdir, "/nonexistent-dir");
		raise(SIGUSR1);
		raise(SIGUSR2); // the tracer suppresses it: the child lives
		__asm__ volatile("int3"); // and this breakpoint's SIGTRAP
		printf("child: secret %#lx usr1 %d\n", secret, got_usr1);
		fflush(stdout);
		// The tracer makes getppid return 4242: with no stop in between,
		// a replay that missed the tracer's registers exits with 4.
		long pp = syscall(SYS_getppid, 11, 22, 33);
		_exit(pp == 4242 ? 3 : 4);
	}
	int st = wait_for(c);
	show("first", st);
	if (ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT) != 0)
		printf("setoptions: %s\n", strerror(errno));
	long v = ptrace(PTRACE_PEEKDATA, c, (void *)&secret, 0);
	printf("peek: %#lx\n", v);
	ptrace(PTRACE_POKEDATA, c, (void *)&secret, (void *)0x5678L);
	long got = 0;
	struct iovec local = {&got, sizeof got}, remote = {(void *)&secret, sizeof got};
	ssize_t rn = process_vm_readv(c, &local, 1, &remote, 1, 0);
	printf("process_vm_readv: %zd %#lx\n", rn, got);
	// /proc/PID/mem (gdb's way), through the thread's path too.
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/mem", c, c);
	int fd = open(path, O_RDWR);
	long via = 0, nv = 0x9abc;
	ssize_t pr = pread(fd, &via, sizeof via, (off_t)(uintptr_t)&secret);
	ssize_t pw = pwrite(fd, &nv, sizeof nv, (off_t)(uintptr_t)&secret);
	lseek(fd, (off_t)(uintptr_t)&secret, SEEK_SET);
	long again = 0;
	ssize_t rr = read(fd, &again, sizeof again);
	printf("proc mem: %zd %#lx, %zd, %zd %#lx, offset moved %d\n", pr, via, pw, rr, again,
	       lseek(fd, 0, SEEK_CUR) == (off_t)(uintptr_t)&secret + 8);
	close(fd);
	int sig = 0, entry = 1, n = 0;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, c, 0, sig) != 0) {
			printf("syscall: %s\n", strerror(errno));
			break;
		}
		sig = 0;
		st = wait_for(c);
		if (!WIFSTOPPED(st)) {
			show("end", st);
			break;
		}
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			struct user_regs_struct r;
			ptrace(PTRACE_GETREGS, c, 0, &r);
			struct syscall_info si;
			long sz = ptrace(PTRACE_GET_SYSCALL_INFO, c, sizeof si, &si);
			if (r.orig_rax == SYS_getppid && entry)
				printf("getppid entry: rax %lld args %lld %lld %lld info %ld op %d nr %lld arg1 %lld\n", (long long)r.rax,
				       (long long)r.rdi, (long long)r.rsi, (long long)r.rdx, sz, si.op, (long long)si.entry.nr,
				       (long long)si.entry.args[1]);
			if (r.orig_rax == SYS_getppid && !entry) {
				r.rax = 4242; // what the child's getppid returns
				ptrace(PTRACE_SETREGS, c, 0, &r);
			}
			if (r.orig_rax == SYS_chdir && !entry)
				printf("chdir exit: rax %lld info %ld op %d rval %lld error %d\n", (long long)r.rax, sz, si.op,
				       (long long)si.exit.rval, si.exit.is_error);
			entry = !entry;
			n++;
			continue;
		}
		if (st >> 16 == PTRACE_EVENT_EXIT) {
			unsigned long msg;
			ptrace(PTRACE_GETEVENTMSG, c, 0, &msg);
			printf("exit event: status %#lx\n", msg);
			continue;
		}
		siginfo_t info;
		ptrace(PTRACE_GETSIGINFO, c, 0, &info);
		printf("signal stop %d: si_signo %d si_code %d\n", WSTOPSIG(st), info.si_signo, info.si_code);
		if (WSTOPSIG(st) == SIGUSR1)
			sig = SIGUSR1;
	}
	printf("syscall stops: %s\n", n > 10 ? "many" : "few");
}

// step: PTRACE_SINGLESTEP moves the program counter by one instruction
// and stops with SIGTRAP (TRAP_TRACE).
static void step(void) {
	pid_t c = fork();
	if (c == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	wait_for(c);
	int moved = 0, traps = 0;
	char deltas[512] = "";
	for (int i = 0; i < 20; i++) {
		struct user_regs_struct a, b;
		ptrace(PTRACE_GETREGS, c, 0, &a);
		ptrace(PTRACE_SINGLESTEP, c, 0, 0);
		int st = wait_for(c);
		if (!WIFSTOPPED(st))
			break;
		siginfo_t info;
		ptrace(PTRACE_GETSIGINFO, c, 0, &info);
		traps += WSTOPSIG(st) == SIGTRAP && info.si_code == TRAP_TRACE;
		ptrace(PTRACE_GETREGS, c, 0, &b);
		moved += a.rip != b.rip;
		long long d = b.rip - a.rip; // a jump to another library: its distance is the layout's
		if (d > 65536 || d < -65536)
			snprintf(deltas + strlen(deltas), sizeof deltas - strlen(deltas), " far");
		else
			snprintf(deltas + strlen(deltas), sizeof deltas - strlen(deltas), " %lld", d);
	}
	printf("step: %d traps, %d moves, by%s\n", traps, moved, deltas);
	ptrace(PTRACE_CONT, c, 0, 0);
	show("step end", wait_for(c));
}

// seize: PTRACE_SEIZE, PTRACE_INTERRUPT, a group-stop, PTRACE_LISTEN and
// SIGCONT, and PTRACE_O_TRACEFORK's event and auto-attached child.
static void seize(void) {
	int p[2], q[2];
	pipe(p);
	pipe(q);
	pid_t c = fork();
	if (c == 0) {
		char ch;
		read(p[0], &ch, 1);
		pid_t g = fork();
		if (g == 0)
			_exit(7);
		int st;
		waitpid(g, &st, 0);
		printf("grandchild: exited %d\n", WEXITSTATUS(st));
		fflush(stdout);
		write(q[1], "y", 1);
		pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, c, 0, PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL) != 0)
		printf("seize: %s\n", strerror(errno));
	ptrace(PTRACE_INTERRUPT, c, 0, 0);
	show("interrupt", wait_for(c));
	ptrace(PTRACE_CONT, c, 0, 0);
	write(p[1], "x", 1);
	int st = wait_for(-1);
	show("fork", st);
	unsigned long g = 0;
	ptrace(PTRACE_GETEVENTMSG, c, 0, &g);
	show("grandchild start", wait_for(g));
	ptrace(PTRACE_CONT, g, 0, 0);
	show("grandchild", wait_for(g));
	ptrace(PTRACE_CONT, c, 0, 0);
	// The child waits for its child, then pauses: stop it.
	st = wait_for(c);
	show("child", st); // SIGCHLD's signal-delivery-stop
	ptrace(PTRACE_CONT, c, 0, WSTOPSIG(st));
	char ch;
	read(q[0], &ch, 1); // the child printed
	kill(c, SIGSTOP);
	st = wait_for(c);
	show("sigstop", st);
	ptrace(PTRACE_CONT, c, 0, SIGSTOP);
	show("group-stop", wait_for(c));
	ptrace(PTRACE_LISTEN, c, 0, 0);
	kill(c, SIGCONT);
	show("after SIGCONT", wait_for(c));
	kill(c, SIGKILL);
	show("killed", wait_for(c));
}

// execs: PTRACE_O_TRACEEXEC's event, then the exec's syscall-exit-stop.
static void execs(void) {
	pid_t c = fork();
	if (c == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		execl("/bin/true", "true", (char *)0);
		_exit(9);
	}
	wait_for(c);
	ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD);
	int st, events = 0;
	for (;;) {
		ptrace(events ? PTRACE_CONT : PTRACE_SYSCALL, c, 0, 0);
		st = wait_for(c);
		if (!WIFSTOPPED(st))
			break;
		if (st >> 16 == PTRACE_EVENT_EXEC) {
			events++;
			ptrace(PTRACE_SYSCALL, c, 0, 0);
			st = wait_for(c);
			struct user_regs_struct r;
			ptrace(PTRACE_GETREGS, c, 0, &r);
			printf("exec: event, then sig %#x orig_rax %lld rax %lld\n", WSTOPSIG(st), (long long)r.orig_rax,
			       (long long)r.rax);
		}
	}
	show("exec end", st);
	// Without PTRACE_O_TRACEEXEC, a tracee that execs gets SIGTRAP.
	c = fork();
	if (c == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl("/bin/true", "true", (char *)0);
		_exit(9);
	}
	st = wait_for(c);
	siginfo_t info;
	ptrace(PTRACE_GETSIGINFO, c, 0, &info);
	show("plain exec", st);
	printf("plain exec: si_code %d\n", info.si_code);
	ptrace(PTRACE_CONT, c, 0, 0);
	show("plain exec end", wait_for(c));
}

// detach: PTRACE_DETACH at a syscall's entry-stop; the syscall then runs
// in the child's own turn.
static void detach(void) {
	pid_t c = fork();
	if (c == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		write(1, "detached child writes\n", 22);
		_exit(5);
	}
	wait_for(c);
	ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD);
	for (;;) {
		ptrace(PTRACE_SYSCALL, c, 0, 0);
		int st = wait_for(c);
		if (!WIFSTOPPED(st))
			break;
		struct user_regs_struct r;
		ptrace(PTRACE_GETREGS, c, 0, &r);
		if (r.orig_rax == SYS_write && r.rax == (unsigned long long)-ENOSYS) {
			ptrace(PTRACE_DETACH, c, 0, 0);
			break;
		}
	}
	show("detach", wait_for(c));
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	syscalls();
	step();
	seize();
	execs();
	detach();
	long r = ptrace(PTRACE_ATTACH, getpid(), 0, 0);
	printf("attach to itself: %ld %s\n", r, strerror(errno));
	return 0;
}
