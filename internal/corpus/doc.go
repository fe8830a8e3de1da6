// Package corpus builds the guest programs under testdata/corpus and
// describes how to run them, so that any test can compare a native run of a
// program with a run under ttd.
//
// Build compiles every C and C++ source once per test process, in several
// variants (gcc -O0/-O2 dynamic PIE, gcc -O2 -static, musl-gcc -O2 -static,
// g++ -O0/-O2 dynamic PIE, g++ -O2 -static; all with -g), into a cache
// directory under os.TempDir() named after a hash of the sources, the
// compiler versions and the flags. Builds go to a temporary directory that is
// renamed into place, so concurrent test binaries can share the cache.
//
// System describes real Debian binaries (ls, sort, sha256sum, wc, cat, gzip,
// gunzip, sqlite3, python3) run on data the Setup functions generate.
//
// Each Program runs in a fresh scratch directory (its cwd), with a fixed,
// complete environment (Program.Env) and the given stdin. Program.Run does
// all of that and reports stdout, stderr and the exit status (128+N when the
// process was killed by signal N, as a shell would report it). Programs must
// never print anything that differs between two runs: no addresses, pids,
// times or absolute paths (the scratch directory differs on every run).
//
// Adding a program: drop a .c or .cpp file into testdata/corpus. If it needs
// arguments, stdin, extra environment or prepared files, add an entry to
// programOptions in corpus.go. Expected exit statuses other than 0 are listed
// in corpus_test.go, which checks that every program is deterministic
// natively.
package corpus
