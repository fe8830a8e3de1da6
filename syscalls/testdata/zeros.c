/* Writes bytes of an anonymous mapping it never stored to: zeros. */
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	write(-1, m + 8, 8);
	return 0;
}
