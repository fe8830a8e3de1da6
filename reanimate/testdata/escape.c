/* Writes through paths that leave its working directory: an absolute
 * symlink to argv[1] (a file outside), a relative symlink climbing out,
 * and a path made of more ".." than there are directories. Natively it
 * writes outside; reanimated, every one of them must stay in the root. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return;
	}
	write(fd, s, strlen(s));
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	/* Copies of the arguments: the recording knows the bytes the
	 * program itself reads (the loader wrote argv before it began). */
	char a1[4096], a2[4096];
	strcpy(a1, argv[1]);
	strcpy(a2, argv[2]);
	symlink(a1, "abs");
	put("abs", "through an absolute symlink\n");
	symlink(a2, "rel");
	put("rel", "through a relative symlink\n");
	char deep[4096] = "";
	for (int i = 0; i < 40; i++)
		strcat(deep, "../");
	strcat(deep, "tmp/ttd-reanimate-escape-probe");
	put(deep, "through dot-dots\n");
	return 0;
}
