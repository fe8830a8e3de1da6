/* Process start-up information: auxiliary vector, uname, ids, argv/envp
 * layout on the initial stack, TLS. Prints facts, not addresses. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

static __thread int tls_counter = 41;
static __thread char tls_buf[64];

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int main(int argc, char **argv, char **envp)
{
	printf("AT_PAGESZ=%lu\n", getauxval(AT_PAGESZ));
	errno = 0;
	unsigned long hw = getauxval(AT_HWCAP);
	printf("AT_HWCAP present=%d nonzero=%d\n", errno != ENOENT, hw != 0);
	unsigned long rnd = getauxval(AT_RANDOM);
	printf("AT_RANDOM non-null=%d\n", rnd != 0);
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	printf("AT_EXECFN set=%d basename=%s same-as-argv0=%d\n", execfn != NULL, execfn ? base(execfn) : "-",
	       execfn && strcmp(execfn, argv[0]) == 0);
	const char *plat = (const char *)getauxval(AT_PLATFORM);
	printf("AT_PLATFORM=%s\n", plat ? plat : "(none)");
	printf("AT_CLKTCK=%lu sysconf(_SC_CLK_TCK)=%ld\n", getauxval(AT_CLKTCK), sysconf(_SC_CLK_TCK));
	printf("AT_PHDR set=%d AT_PHENT=%lu AT_PHNUM>0=%d AT_ENTRY set=%d\n", getauxval(AT_PHDR) != 0,
	       getauxval(AT_PHENT), getauxval(AT_PHNUM) > 0, getauxval(AT_ENTRY) != 0);
	printf("AT_UID==getuid %d AT_EUID==geteuid %d AT_GID==getgid %d AT_SECURE=%lu\n",
	       getauxval(AT_UID) == getuid(), getauxval(AT_EUID) == geteuid(), getauxval(AT_GID) == getgid(),
	       getauxval(AT_SECURE));
	errno = 0;
	getauxval(0x7fff);
	printf("unknown aux type -> ENOENT %d\n", errno == ENOENT);
	printf("sysconf pagesize=%ld\n", sysconf(_SC_PAGESIZE));

	/* Walk past envp to the auxv on the initial stack. */
	char **e = envp;
	while (*e)
		e++;
	Elf64_auxv_t *av = (Elf64_auxv_t *)(e + 1);
	int n = 0, has_pagesz = 0, has_random = 0;
	for (; av->a_type != AT_NULL; av++, n++) {
		has_pagesz |= av->a_type == AT_PAGESZ && av->a_un.a_val == getauxval(AT_PAGESZ);
		has_random |= av->a_type == AT_RANDOM && av->a_un.a_val == rnd;
	}
	printf("stack auxv: entries>10=%d pagesz matches=%d random matches=%d\n", n > 10, has_pagesz, has_random);
	printf("argc=%d argv[argc]==NULL %d envp==&argv[argc+1] %d\n", argc, argv[argc] == NULL, envp == argv + argc + 1);

	struct utsname u;
	if (uname(&u) != 0)
		return 1;
	printf("sysname=%s\n", u.sysname);

	/* Thread-local storage. */
	tls_counter++;
	snprintf(tls_buf, sizeof tls_buf, "tls says %d", tls_counter);
	printf("%s\n", tls_buf);
	printf("pid>0 %d ppid>0 %d pid!=ppid %d\n", getpid() > 0, getppid() > 0, getpid() != getppid());
	return 0;
}
