/* ttyfutex: TCGETS on a pseudo-terminal (struct termios) and on a
 * pipe (ENOTTY), TCSETS back, and futex FUTEX_WAKE_OP with each
 * operation and comparison, between markers. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static int a, b;

int main(void)
{
	write(-1, "START", 5);
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m >= 0 && unlockpt(m) == 0) {
		int s = open(ptsname(m), O_RDWR | O_NOCTTY);
		struct termios t;
		if (s >= 0 && ioctl(s, TCGETS, &t) == 0) {
			t.c_lflag &= ~(ECHO | ICANON);
			t.c_cc[VMIN] = 1;
			ioctl(s, TCSETS, &t);
			ioctl(s, TCGETS, &t);
		}
	}
	int p[2];
	pipe(p);
	struct termios t;
	ioctl(p[0], TCGETS, &t);
	syscall(SYS_futex, &a, FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG, 1, 1, &b, FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_GT, 0));
	syscall(SYS_futex, &a, FUTEX_WAKE_OP, 2, 0, &b, FUTEX_OP(FUTEX_OP_ADD, 7, FUTEX_OP_CMP_EQ, 8));
	syscall(SYS_futex, &a, FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG, 1, 1, &b,
		FUTEX_OP(FUTEX_OP_OR | FUTEX_OP_OPARG_SHIFT, 3, FUTEX_OP_CMP_NE, 0xfff));
	syscall(SYS_futex, &a, FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG, 1, 1, &b, FUTEX_OP(FUTEX_OP_ANDN, 1, FUTEX_OP_CMP_LT, 1));
	syscall(SYS_futex, &a, FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG, 1, 1, &b, FUTEX_OP(FUTEX_OP_XOR, 1, FUTEX_OP_CMP_LE, 1));
	syscall(SYS_futex, &a, FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG, 1, 1, &b, FUTEX_OP(FUTEX_OP_XOR, 1, FUTEX_OP_CMP_GE, 1));
	write(-1, "END", 3);
	return 0;
}
