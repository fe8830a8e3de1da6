// An exception nobody catches: std::terminate prints a diagnostic on stderr
// and aborts (status 134). Destructors of the throwing frame need not run.
#include <cstdio>
#include <stdexcept>

struct Noisy {
	~Noisy() { std::printf("destructor ran\n"); }
};

static void fail(int n)
{
	Noisy guard;
	if (n == 0)
		throw std::runtime_error("nobody catches this");
	fail(n - 1);
}

int main()
{
	std::printf("before throw\n");
	std::fflush(stdout);
	fail(3);
	return 0;
}
