/* Capabilities as the guest's own: capget (versions 1 and 3, NULL data,
 * an unknown version, another process), capset within and beyond what
 * Linux allows, the bounding set (read, drop), the ambient set (raise,
 * is-set, lower, clear), securebits, fork's copy and execve's rules (root
 * gets its bounding and inheritable sets; with SECBIT_NOROOT, the ambient
 * only). Prints the sets in hex: native and ttd must agree. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	long r = syscall(SYS_capget, &h, d);
	printf("%s: rc=%ld eff=%08x%08x perm=%08x%08x inh=%08x%08x", what, r, d[1].effective, d[0].effective,
	       d[1].permitted, d[0].permitted, d[1].inheritable, d[0].inheritable);
	printf(" bset13=%d amb0=%d secbits=%#x\n", prctl(PR_CAPBSET_READ, 13), prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 0, 0, 0),
	       prctl(PR_GET_SECUREBITS));
}

static long capset3(unsigned eff, unsigned perm, unsigned inh, unsigned hi)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{eff, perm, inh}, {hi, hi, 0}};
	long r = syscall(SYS_capset, &h, d);
	return r < 0 ? -errno : r;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1) {
		show(argv[1]);
		return 0;
	}
	show("start");
	struct __user_cap_header_struct h = {0x12345678, 0};
	struct __user_cap_data_struct d[2];
	long r = syscall(SYS_capget, &h, d);
	printf("bad version: rc=%ld errno=%d version now %#x\n", r, r < 0 ? errno : 0, h.version);
	h.version = 0x12345678;
	r = syscall(SYS_capget, &h, NULL);
	printf("bad version, NULL data: rc=%ld version now %#x\n", r, h.version);
	h.version = _LINUX_CAPABILITY_VERSION_1;
	r = syscall(SYS_capget, &h, d);
	printf("v1: rc=%ld eff=%08x\n", r, d[0].effective);
	h.version = _LINUX_CAPABILITY_VERSION_3;
	h.pid = 999999;
	r = syscall(SYS_capget, &h, d);
	printf("no such pid: rc=%ld errno=%d\n", r, r < 0 ? errno : 0);
	h.pid = -1;
	r = syscall(SYS_capget, &h, d);
	printf("pid -1: rc=%ld errno=%d\n", r, r < 0 ? errno : 0);

	printf("bset read 99: %d errno=%d\n", prctl(PR_CAPBSET_READ, 99), errno);
	printf("drop net_raw: %d\n", prctl(PR_CAPBSET_DROP, 13));
	/* Drop CAP_CHOWN from the effective set, then beyond permitted. */
	struct __user_cap_data_struct cur[2];
	h.pid = 0;
	syscall(SYS_capget, &h, cur);
	printf("capset eff-chown: %ld\n", capset3(cur[0].effective & ~1u, cur[0].permitted, cur[0].inheritable, cur[1].effective));
	printf("capset eff beyond perm: %ld\n", capset3(cur[0].effective, cur[0].permitted & ~2u, cur[0].inheritable, cur[1].effective));
	syscall(SYS_capget, &h, cur);
	printf("capset perm back: %ld\n", capset3(cur[0].effective, cur[0].permitted | 2u, cur[0].inheritable, cur[1].effective));
	printf("ambient raise chown (not inheritable): %d errno=%d\n", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 0, 0, 0), errno);
	syscall(SYS_capget, &h, cur);
	printf("capset inh chown: %ld\n", capset3(cur[0].effective, cur[0].permitted, cur[0].inheritable | 1u, cur[1].effective));
	printf("ambient raise chown: %d\n", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 0, 0, 0));
	show("after");
	if (fork() == 0) {
		show("child");
		_exit(0);
	}
	wait(NULL);
	if (fork() == 0) {
		execl("/proc/self/exe", argv[0], "exec", (char *)0);
		_exit(1);
	}
	wait(NULL);
	printf("securebits noroot: %d\n", prctl(PR_SET_SECUREBITS, 1));
	if (fork() == 0) {
		execl("/proc/self/exe", argv[0], "exec-noroot", (char *)0);
		_exit(1);
	}
	wait(NULL);
	printf("securebits lock keepcaps: %d\n", prctl(PR_SET_SECUREBITS, 1 | 0x20));
	printf("keepcaps locked: %d errno=%d\n", prctl(PR_SET_KEEPCAPS, 1), errno);
	printf("ambient clear: %d lower: %d\n", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0),
	       prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, 0, 0, 0));
	show("end");
	return 0;
}
