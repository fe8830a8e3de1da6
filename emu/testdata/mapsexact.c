/* /proc/self/maps line for line as Linux writes it with randomisation off
 * (the program turns it off and executes itself again): where the vDSO,
 * the interpreter, a static PIE and its heap go, a bss past the file's
 * last page as its own anonymous mapping, the stack as far as the
 * program has grown it, and the file written when it is read. The
 * [vsyscall] line is left out: ttd has no vsyscall page. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

static char bss[5 * 4096 + 123];

__attribute__((noinline)) static int deep(int n)
{
	volatile char buf[8192];
	memset((char *)buf, n, sizeof buf);
	return n ? deep(n - 1) + buf[100] : 0;
}

int main(int argc, char **argv)
{
	int p = personality(0xffffffff);
	if (!(p & ADDR_NO_RANDOMIZE)) {
		personality(p | ADDR_NO_RANDOMIZE);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	printf("personality %#x\n", personality(0xffffffff));
	bss[0] = 1;
	deep(argc > 1 ? 4 : 30); /* 240 KiB: past the 128 KiB Linux maps at exec */
	int fd = open("/proc/self/maps", O_RDONLY);
	struct stat st;
	fstat(fd, &st);
	printf("fstat size %lld mode %o\n", (long long)st.st_size, st.st_mode & 07777);
	void *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char buf[1 << 16];
	size_t n = 0;
	ssize_t k;
	while ((k = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += k;
	buf[n] = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (!strstr(line, "[vsyscall]"))
			puts(line);
	return m == MAP_FAILED;
}
