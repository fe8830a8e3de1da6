// A shared library with thread-local variables, for TestGDBLibraryTLS:
// each thread adds its id to libcount, which starts at 100.
__thread long libcount = 100;
__thread char libname[8] = "lib";

void libwork(long id) {
	for (int i = 0; i < 10; i++)
		libcount += id;
	libname[3] = (char)('0' + id);
}
