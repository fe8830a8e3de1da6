/* /proc/self/maps as the kernel lays it out, without the addresses (they
 * differ between runs): for every line naming a file, the permissions,
 * offset, device, inode and name, the column the name starts in and
 * whether both addresses have at least 8 hex digits (the padding before
 * the name, which depends on the addresses' length, left out); then whether an
 * anonymous line ends "0 " and a private file mapping of our own. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = open(argv[0], O_RDONLY);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fd < 0 || m == MAP_FAILED)
		return 1;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int anon = 0, anonok = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *name = strchr(line, '/');
		char *dash = strchr(line, '-');
		char *sp = strchr(line, ' ');
		int wide = dash && sp && dash - line >= 8 && sp - dash - 1 >= 8;
		if (!name) {
			char *br = strchr(line, '[');
			if (!br) {
				anon++;
				size_t n = strlen(line);
				anonok += n >= 2 && strcmp(line + n - 2, "0 ") == 0;
			}
			continue;
		}
		/* The padding before the name depends on the addresses'
		 * length (the name starts in one column): not printed. */
		char *end = name;
		while (end > sp + 1 && end[-1] == ' ')
			end--;
		printf("%.*s %s | column %d wide %d\n", (int)(end - sp - 1), sp + 1, name, (int)(name - line) + 1, wide);
	}
	printf("anonymous lines end \"0 \": %d\n", anon > 0 && anon == anonok);
	return 0;
}
