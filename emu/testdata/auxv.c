#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv) {
	printf("argc %d\n", argc);
	for (int i = 1; i < argc; i++) printf("argv[%d] %s\n", i, argv[i]);
	int n = 0;
	for (char **e = environ; *e; e++) n++;
	printf("envc %d\n", n);
	printf("TTD_TEST=%s\n", getenv("TTD_TEST"));
	printf("pagesz %lu clktck %lu\n", getauxval(AT_PAGESZ), getauxval(AT_CLKTCK));
	printf("platform %s\n", (char *)getauxval(AT_PLATFORM));
	printf("execfn is argv0 %d\n", strcmp((char *)getauxval(AT_EXECFN), argv[0]) == 0);
	unsigned char *r = (unsigned char *)getauxval(AT_RANDOM);
	int nz = 0;
	for (int i = 0; i < 16; i++) nz |= r[i];
	printf("random nonzero %d\n", nz != 0);
	printf("uid %d secure %lu\n", getauxval(AT_UID) == getuid(), getauxval(AT_SECURE));
	Elf64_Phdr *ph = (Elf64_Phdr *)getauxval(AT_PHDR);
	int loads = 0;
	for (unsigned i = 0; i < getauxval(AT_PHNUM); i++) loads += ph[i].p_type == PT_LOAD;
	printf("phent %lu loads>0 %d\n", getauxval(AT_PHENT), loads > 0);
	printf("hwcap sse2 %d\n", (int)(getauxval(AT_HWCAP) >> 26) & 1);
	printf("hwcap2 %lu\n", getauxval(AT_HWCAP2));
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe);
	printf("exe %d\n", k > 0);
	return argc;
}
