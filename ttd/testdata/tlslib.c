// A shared library with thread-local variables, for the TLS tests of
// gdbremote and dap: each thread adds its id to libcount (from 100).
__thread long libcount = 100;
__thread char libname[8] = "lib";

void libwork(long id) {
	for (int i = 0; i < 10; i++)
		libcount += id;
	libname[3] = (char)('0' + id);
}
