/* Extended attributes for the strace comparison: set (with and without
 * XATTR_CREATE), get, list (sized, NULL, too small), remove, on a path,
 * a link's own and a descriptor; cp -a and tar --xattrs make these. */
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

int main(void)
{
	char buf[256];
	int fd = open("f", O_RDWR | O_CREAT | O_TRUNC, 0644);
	symlink("f", "l");
	write(-1, "START", 5);
	setxattr("f", "user.color", "blue", 4, 0);
	setxattr("f", "user.color", "red", 3, XATTR_CREATE); /* EEXIST */
	fsetxattr(fd, "user.size", "42", 2, XATTR_REPLACE);  /* ENODATA */
	fsetxattr(fd, "user.size", "42", 2, 0);
	lsetxattr("l", "user.x", "y", 1, 0); /* EPERM: a symlink */
	getxattr("f", "user.color", buf, sizeof buf);
	listxattr("f", buf, sizeof buf);
	listxattr("f", NULL, 0);
	listxattr("f", buf, 3); /* ERANGE */
	llistxattr("l", buf, sizeof buf);
	flistxattr(fd, buf, sizeof buf);
	removexattr("f", "user.color");
	fremovexattr(fd, "user.size");
	lremovexattr("l", "user.none"); /* ENODATA */
	removexattr("f", "user.color");  /* ENODATA */
	write(-1, "END", 3);
	return 0;
}
