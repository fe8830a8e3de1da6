/* A MAP_SHARED file mapping shared with a child process: the child writes
 * through it, the parent sees the write and copies it, and both reach the
 * file. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void){
 int fd = open("forked.dat", O_RDWR|O_CREAT|O_TRUNC, 0644); ftruncate(fd, 4096);
 char *p = mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0);
 strcpy(p, "parent ");
 pid_t c = fork();
 if (c == 0) { strcpy(p + 100, "child wrote this"); _exit(0); }
 waitpid(c, 0, 0);
 strcpy(p + 200, p + 100); /* the parent sees the child's write */
 return 0; }
