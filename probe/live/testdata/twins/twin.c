// libtwin.so: a twin of its own, called by lib_twin_calls.
static __attribute__((noinline, noclone)) int twin(int x) { return x * 5 + 2; }

int lib_twin_calls(int n) {
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += twin(i);
	return s;
}
