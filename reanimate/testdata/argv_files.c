/* Passes its arguments to the kernel without reading them: the loader
 * wrote them before the recording began, so their bytes come from the
 * trace's header, placed by argv's pointers. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, "made by argv\n", 13);
	close(fd);
	symlink(argv[2], argv[3]);
	mkdir(argv[3 + 0] + 0 == argv[3] ? "dir" : "x", 0755);
	return 0;
}
