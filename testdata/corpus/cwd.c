/* Working directory: getcwd/chdir/fchdir/realpath checked relative to the
 * starting directory (whose absolute path is never printed). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

int main(void)
{
	char start[PATH_MAX], cur[PATH_MAX];
	if (!getcwd(start, sizeof start))
		return 1;
	printf("absolute=%d no trailing slash=%d\n", start[0] == '/', strlen(start) == 1 || !ends_with(start, "/"));
	if (mkdir("d1", 0755) || mkdir("d1/d2", 0755))
		return 1;
	if (chdir("d1/d2"))
		return 1;
	getcwd(cur, sizeof cur);
	printf("after chdir d1/d2: prefix ok=%d suffix ok=%d len diff=%zu\n", strncmp(cur, start, strlen(start)) == 0,
	       ends_with(cur, "/d1/d2"), strlen(cur) - strlen(start));
	FILE *f = fopen("../marker", "w");
	fputs("x\n", f);
	fclose(f);
	if (chdir(".."))
		return 1;
	getcwd(cur, sizeof cur);
	printf("after chdir ..: suffix d1=%d marker visible=%d\n", ends_with(cur, "/d1"), access("marker", F_OK) == 0);
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	chdir(start);
	getcwd(cur, sizeof cur);
	printf("back at start: %d\n", strcmp(cur, start) == 0);
	fchdir(dfd);
	close(dfd);
	getcwd(cur, sizeof cur);
	printf("fchdir: suffix d1=%d\n", ends_with(cur, "/d1"));
	chdir("../d1/./d2/../..");
	getcwd(cur, sizeof cur);
	printf("dotted chdir back at start: %d\n", strcmp(cur, start) == 0);
	char small[4];
	errno = 0;
	char *r = getcwd(small, sizeof small);
	printf("getcwd small buffer: %s ERANGE=%d\n", r ? "ok?" : "NULL", errno == ERANGE);
	char *dyn = getcwd(NULL, 0);
	printf("getcwd(NULL,0) matches: %d\n", dyn && strcmp(dyn, start) == 0);
	free(dyn);
	char *rp = realpath("d1/d2/../d2/./", NULL);
	printf("realpath: suffix=%d prefix=%d\n", rp && ends_with(rp, "/d1/d2"), rp && strncmp(rp, start, strlen(start)) == 0);
	free(rp);
	errno = 0;
	int rc = chdir("nope");
	printf("chdir missing: %d ENOENT=%d\n", rc, errno == ENOENT);
	errno = 0;
	rc = chdir("d1/marker");
	printf("chdir file: %d ENOTDIR=%d\n", rc, errno == ENOTDIR);
	symlink("d1/d2", "link");
	chdir("link");
	getcwd(cur, sizeof cur);
	printf("chdir via symlink resolves: %d\n", ends_with(cur, "/d1/d2"));
	chdir(start);
	unlink("link");
	unlink("d1/marker");
	rmdir("d1/d2");
	rmdir("d1");
	printf("cleaned: %d\n", access("d1", F_OK) != 0);
	return 0;
}
