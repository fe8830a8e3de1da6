/* inotify's calls for the strace comparison: init1's flags and init,
 * watches with the mask's names and IN_MASK_ADD, a missing path, a read
 * of the events a file made, and removing a watch twice (EINVAL). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	const char *dir = "inotify-test-dir", *file = "inotify-test-dir/f";
	mkdir(dir, 0755);
	write(-1, "START", 5);
	int fd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	int wd = syscall(SYS_inotify_add_watch, fd, dir, IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE);
	syscall(SYS_inotify_add_watch, fd, dir, IN_ATTRIB | IN_MASK_ADD);
	syscall(SYS_inotify_add_watch, fd, "no-such-dir/x", IN_ALL_EVENTS);
	close(open(file, O_CREAT | O_WRONLY, 0644));
	unlink(file);
	char buf[4096] __attribute__((aligned(8)));
	read(fd, buf, sizeof buf);
	syscall(SYS_inotify_init);
	syscall(SYS_inotify_rm_watch, fd, wd);
	syscall(SYS_inotify_rm_watch, fd, wd);
	write(-1, "END", 3);
	rmdir(dir);
	return 0;
}
