/* The vDSO and /proc/self/maps as Linux gives them: AT_SYSINFO_EHDR names
 * an ELF image that ld.so lists as linux-vdso.so.1, whose versioned
 * symbols (LINUX_2.6) tell the time and the CPU as the syscalls do, and
 * which /proc/self/maps shows as [vdso] after [vvar]. A /proc file is
 * written when it is read, not when it is opened: a mapping made in
 * between shows, and fstat sees an empty read-only file. Prints facts,
 * not addresses. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int found_vdso;
static uintptr_t vdso_addr;

static int each(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (info->dlpi_name && strcmp(info->dlpi_name, "linux-vdso.so.1") == 0) {
		found_vdso = 1;
		vdso_addr = info->dlpi_addr;
	}
	return 0;
}

/* vsym finds a symbol of the vDSO by name and version, as Go's runtime
 * and glibc's dl_vdso_vsym do: through DT_HASH, DT_SYMTAB, DT_VERSYM and
 * DT_VERDEF. */
static void *vsym(const Elf64_Ehdr *eh, const char *name, const char *version)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	uintptr_t base = (uintptr_t)eh, load = 0;
	const Elf64_Dyn *dyn = NULL;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD)
			load = base + ph[i].p_offset - ph[i].p_vaddr;
		else if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const Elf64_Dyn *)(base + ph[i].p_offset);
	}
	if (!dyn)
		return NULL;
	const Elf32_Word *hash = NULL;
	const Elf64_Sym *syms = NULL;
	const char *strs = NULL;
	const Elf64_Versym *versym = NULL;
	const Elf64_Verdef *verdef = NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = load + dyn->d_un.d_ptr;
		switch (dyn->d_tag) {
		case DT_HASH: hash = (const Elf32_Word *)p; break;
		case DT_SYMTAB: syms = (const Elf64_Sym *)p; break;
		case DT_STRTAB: strs = (const char *)p; break;
		case DT_VERSYM: versym = (const Elf64_Versym *)p; break;
		case DT_VERDEF: verdef = (const Elf64_Verdef *)p; break;
		}
	}
	if (!hash || !syms || !strs || !versym || !verdef)
		return NULL;
	int want = -1;
	for (const Elf64_Verdef *d = verdef;; d = (const Elf64_Verdef *)((const char *)d + d->vd_next)) {
		const Elf64_Verdaux *aux = (const Elf64_Verdaux *)((const char *)d + d->vd_aux);
		if (!(d->vd_flags & VER_FLG_BASE) && strcmp(strs + aux->vda_name, version) == 0)
			want = d->vd_ndx;
		if (!d->vd_next)
			break;
	}
	Elf32_Word nchain = hash[1];
	for (Elf32_Word i = 1; i < nchain; i++) {
		const Elf64_Sym *s = &syms[i];
		if (ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_shndx != SHN_UNDEF &&
		    strcmp(strs + s->st_name, name) == 0 && (versym[i] & 0x7fff) == want)
			return (void *)(load + s->st_value);
	}
	return NULL;
}

static int maps_has(const char *buf, const char *what)
{
	return strstr(buf, what) != NULL;
}

int main(void)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	printf("AT_SYSINFO_EHDR set=%d\n", eh != NULL);
	if (!eh)
		return 1;
	printf("ELF=%d type=DYN %d machine=x86-64 %d\n", memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0,
	       eh->e_type == ET_DYN, eh->e_machine == EM_X86_64);
	dl_iterate_phdr(each, NULL);
	printf("link map has linux-vdso.so.1=%d at AT_SYSINFO_EHDR=%d\n", found_vdso, vdso_addr == (uintptr_t)eh);

	int (*vgettime)(clockid_t, struct timespec *) = vsym(eh, "__vdso_clock_gettime", "LINUX_2.6");
	int (*vgettimeofday)(struct timeval *, void *) = vsym(eh, "__vdso_gettimeofday", "LINUX_2.6");
	time_t (*vtime)(time_t *) = vsym(eh, "__vdso_time", "LINUX_2.6");
	int (*vgetres)(clockid_t, struct timespec *) = vsym(eh, "__vdso_clock_getres", "LINUX_2.6");
	int (*vgetcpu)(unsigned *, unsigned *, void *) = vsym(eh, "__vdso_getcpu", "LINUX_2.6");
	printf("symbols: clock_gettime=%d gettimeofday=%d time=%d clock_getres=%d getcpu=%d\n", vgettime != NULL,
	       vgettimeofday != NULL, vtime != NULL, vgetres != NULL, vgetcpu != NULL);
	printf("no such version=%d\n", vsym(eh, "__vdso_clock_gettime", "LINUX_9.9") == NULL);
	if (!vgettime || !vgettimeofday || !vtime || !vgetres || !vgetcpu)
		return 1;

	struct timespec a, b, c, res;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
	int r = vgettime(CLOCK_MONOTONIC, &b);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &c);
	int ordered = (b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec)) &&
		      (c.tv_sec > b.tv_sec || (c.tv_sec == b.tv_sec && c.tv_nsec >= b.tv_nsec));
	printf("clock_gettime(MONOTONIC) rc=%d between two syscalls=%d\n", r, ordered);
	printf("clock_gettime(bad clock) rc=%d\n", vgettime(12345, &b));
	struct timeval tv;
	time_t t1 = vtime(NULL), t2;
	r = vgettimeofday(&tv, NULL);
	vtime(&t2);
	printf("gettimeofday rc=%d agrees with time=%d time(&t) stores=%d\n", r,
	       tv.tv_sec >= t1 && tv.tv_sec <= t2 + 1, t2 >= t1 && t2 - t1 < 5);
	r = vgetres(CLOCK_MONOTONIC, &res);
	printf("clock_getres rc=%d res=%ld.%09ld\n", r, (long)res.tv_sec, res.tv_nsec);
	unsigned cpu = ~0u, node = ~0u;
	r = vgetcpu(&cpu, &node, NULL);
	printf("getcpu rc=%d cpu<nprocs=%d node=%u\n", r, cpu < (unsigned)sysconf(_SC_NPROCESSORS_CONF), node);

	/* /proc/self/maps: written at read time. */
	int fd = open("/proc/self/maps", O_RDONLY);
	struct stat st;
	fstat(fd, &st);
	printf("maps fstat: regular=%d size=%lld mode=%o\n", S_ISREG(st.st_mode), (long long)st.st_size,
	       st.st_mode & 07777);
	void *m = mmap(NULL, 7 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char range[64];
	snprintf(range, sizeof range, "%lx-%lx ", (unsigned long)m, (unsigned long)m + 7 * 4096);
	static char buf[1 << 16];
	size_t n = 0;
	ssize_t k;
	while ((k = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += k;
	buf[n] = 0;
	close(fd);
	char vdso_line[64];
	snprintf(vdso_line, sizeof vdso_line, "%lx-", (unsigned long)eh);
	char *v = strstr(buf, "[vdso]");
	char *line = v;
	while (line && line > buf && line[-1] != '\n')
		line--;
	printf("maps: mapping made after open shows=%d [vvar]=%d [vdso]=%d [vdso] at AT_SYSINFO_EHDR=%d r-x=%d\n",
	       maps_has(buf, range), maps_has(buf, "[vvar]"), v != NULL,
	       line && strncmp(line, vdso_line, strlen(vdso_line)) == 0, line && strstr(line, " r-xp ") == line + strcspn(line, " "));
	return 0;
}
