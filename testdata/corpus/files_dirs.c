/* Files and directories inside a scratch directory created under the cwd:
 * open/read/write/pread/pwrite/lseek/fstat/stat/opendir/readdir/rename/
 * unlink/mkdir/rmdir/ftruncate/dup2/fcntl/link/symlink. Also reads
 * input.txt, which the harness's Setup puts into the working directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define CHECK(x)                                                                         \
	do {                                                                             \
		if ((x) < 0) {                                                           \
			printf("FAILED line %d: %s: %s\n", __LINE__, #x, strerror(errno)); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		printf("opendir %s: %s\n", path, strerror(errno));
		return;
	}
	char *names[256];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 256) {
		char type = e->d_type == DT_DIR ? 'd' : e->d_type == DT_REG ? 'f' : e->d_type == DT_LNK ? 'l' : '?';
		char *s = malloc(strlen(e->d_name) + 3);
		sprintf(s, "%s:%c", e->d_name, type);
		names[n++] = s;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], cmpstr);
	printf("%s:", path);
	for (int i = 0; i < n; i++) {
		printf(" %s", names[i]);
		free(names[i]);
	}
	printf("\n");
}

static void show_stat(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		printf("lstat %s: %s\n", path, strerror(errno));
		return;
	}
	printf("stat %s: size=%lld reg=%d dir=%d lnk=%d nlink=%ld mode=%04o\n", path,
	       S_ISDIR(st.st_mode) ? -1LL : (long long)st.st_size,
	       S_ISREG(st.st_mode), S_ISDIR(st.st_mode), S_ISLNK(st.st_mode), (long)st.st_nlink,
	       (unsigned)(st.st_mode & 07777));
}

int main(void)
{
	umask(022);
	/* Input prepared by the harness. */
	int in = open("input.txt", O_RDONLY);
	CHECK(in);
	printf("lowest free fd: %d\n", in);
	char buf[4096];
	ssize_t got = read(in, buf, sizeof buf - 1);
	CHECK(got);
	buf[got] = 0;
	int lines = 0;
	for (ssize_t i = 0; i < got; i++)
		lines += buf[i] == '\n';
	printf("input.txt: %zd bytes, %d lines, first line: %.*s\n", got, lines, (int)strcspn(buf, "\n"), buf);
	close(in);

	CHECK(mkdir("scratch", 0755));
	errno = 0;
	printf("mkdir again: %s\n", mkdir("scratch", 0755) < 0 ? strerror(errno) : "ok?");
	CHECK(mkdir("scratch/sub", 0700));
	int fd = open("scratch/data.bin", O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd);
	errno = 0;
	printf("O_EXCL again: %s\n", open("scratch/data.bin", O_RDWR | O_CREAT | O_EXCL, 0644) < 0 ? strerror(errno) : "ok?");
	for (int i = 0; i < 100; i++) {
		char line[64];
		int n = snprintf(line, sizeof line, "record %03d: %08x\n", i, (unsigned)(i * 2654435761u));
		if (write(fd, line, (size_t)n) != n)
			return 1;
	}
	struct stat st;
	CHECK(fstat(fd, &st));
	printf("after writes: size=%lld\n", (long long)st.st_size);
	long long cur = lseek(fd, 0, SEEK_CUR);
	long long end = lseek(fd, -10, SEEK_END);
	long long set = lseek(fd, 21, SEEK_SET);
	printf("lseek cur=%lld end=%lld set=%lld\n", cur, end, set);
	char rec[22] = {0};
	CHECK(read(fd, rec, 21));
	printf("read at 21: %s", rec);
	CHECK(pread(fd, rec, 21, 21 * 50));
	printf("pread at 1050: %s", rec);
	CHECK(pwrite(fd, "PATCHED", 7, 21 * 10));
	printf("offset after pread/pwrite: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	CHECK(pread(fd, rec, 21, 21 * 10));
	printf("patched record: %s", rec);
	/* Hole beyond EOF. */
	CHECK(lseek(fd, 10000, SEEK_SET));
	CHECK(write(fd, "X", 1));
	CHECK(fstat(fd, &st));
	char hole[4];
	CHECK(pread(fd, hole, 4, 5000));
	printf("with hole: size=%lld hole bytes=%d%d%d%d\n", (long long)st.st_size, hole[0], hole[1], hole[2], hole[3]);
	CHECK(ftruncate(fd, 100));
	CHECK(fstat(fd, &st));
	printf("truncated: size=%lld read at 200 -> %zd\n", (long long)st.st_size, pread(fd, rec, 10, 200));
	CHECK(ftruncate(fd, 5000));
	CHECK(fstat(fd, &st));
	printf("extended: size=%lld\n", (long long)st.st_size);

	/* fcntl and dup2 */
	int flags = fcntl(fd, F_GETFD);
	CHECK(fcntl(fd, F_SETFD, FD_CLOEXEC));
	printf("cloexec before=%d after=%d\n", flags & FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	int fl = fcntl(fd, F_GETFL);
	printf("accmode rdwr=%d append=%d\n", (fl & O_ACCMODE) == O_RDWR, !!(fl & O_APPEND));
	CHECK(fcntl(fd, F_SETFL, fl | O_APPEND));
	printf("append now=%d\n", !!(fcntl(fd, F_GETFL) & O_APPEND));
	CHECK(lseek(fd, 0, SEEK_SET));
	CHECK(write(fd, "tail", 4));
	printf("append wrote at end: offset=%lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	int d2 = dup2(fd, 20);
	printf("dup2 -> %d cloexec on dup=%d\n", d2, fcntl(d2, F_GETFD) & FD_CLOEXEC);
	int d3 = fcntl(fd, F_DUPFD, 30);
	printf("F_DUPFD >= 30 -> %d\n", d3);
	CHECK(lseek(d2, 3, SEEK_SET));
	printf("shared offset via dup: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	close(d2);
	close(d3);
	close(fd);
	errno = 0;
	printf("write to closed fd: %s\n", write(d2, "x", 1) < 0 ? strerror(errno) : "ok?");

	/* stdio on a file */
	FILE *f = fopen("scratch/text.txt", "w+");
	if (!f)
		return 1;
	for (int i = 0; i < 1000; i++)
		fprintf(f, "%d%c", i * i, i % 10 == 9 ? '\n' : ' ');
	fflush(f);
	rewind(f);
	long total = 0;
	int v;
	while (fscanf(f, "%d", &v) == 1)
		total += v;
	printf("fscanf total=%ld ftell=%ld\n", total, ftell(f));
	fclose(f);

	/* links, rename, stat */
	CHECK(link("scratch/text.txt", "scratch/hard.txt"));
	CHECK(symlink("text.txt", "scratch/soft.txt"));
	char target[64] = {0};
	CHECK(readlink("scratch/soft.txt", target, sizeof target - 1));
	printf("readlink: %s\n", target);
	show_stat("scratch/text.txt");
	show_stat("scratch/soft.txt");
	show_stat("scratch/sub");
	CHECK(stat("scratch/soft.txt", &st));
	printf("stat through symlink size=%lld\n", (long long)st.st_size);
	CHECK(rename("scratch/data.bin", "scratch/sub/moved.bin"));
	errno = 0;
	printf("open renamed-away: %s\n", open("scratch/data.bin", O_RDONLY) < 0 ? strerror(errno) : "ok?");
	for (int i = 0; i < 12; i++) {
		char name[64];
		snprintf(name, sizeof name, "scratch/f%02d", (i * 5) % 12);
		int t = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(t);
		close(t);
	}
	CHECK(access("scratch/f03", F_OK));
	printf("access missing: %d\n", access("scratch/nope", F_OK));
	list_dir("scratch");
	list_dir("scratch/sub");
	errno = 0;
	printf("rmdir non-empty: %s\n", rmdir("scratch/sub") < 0 ? strerror(errno) : "ok?");
	errno = 0;
	printf("unlink dir: %s\n", unlink("scratch/sub") < 0 ? strerror(errno) : "ok?");
	/* *at() variants relative to a directory fd */
	int dfd = open("scratch/sub", O_RDONLY | O_DIRECTORY);
	CHECK(dfd);
	int af = openat(dfd, "at.txt", O_WRONLY | O_CREAT, 0644);
	CHECK(af);
	CHECK(write(af, "hello at\n", 9));
	close(af);
	CHECK(fstatat(dfd, "at.txt", &st, 0));
	printf("fstatat size=%lld\n", (long long)st.st_size);
	CHECK(renameat(dfd, "at.txt", dfd, "at2.txt"));
	CHECK(unlinkat(dfd, "at2.txt", 0));
	close(dfd);

	/* cleanup */
	DIR *d = opendir("scratch");
	struct dirent *e;
	int removed = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == 'f' || strcmp(e->d_name, "text.txt") == 0 || strcmp(e->d_name, "hard.txt") == 0 ||
		    strcmp(e->d_name, "soft.txt") == 0) {
			char p[300];
			snprintf(p, sizeof p, "scratch/%s", e->d_name);
			CHECK(unlink(p));
			removed++;
		}
	}
	closedir(d);
	CHECK(unlink("scratch/sub/moved.bin"));
	CHECK(rmdir("scratch/sub"));
	CHECK(rmdir("scratch"));
	printf("removed %d files; scratch exists: %d\n", removed, access("scratch", F_OK) == 0);
	return 0;
}
