// Package linux is the one home of the Linux facts ttd needs: x86-64
// syscall numbers and names, errno names and messages, signal names and
// the names of flag bits and enumerations (O_*, AT_*, PROT_*, MAP_*,
// SEEK_*, ...) spelled and ordered as strace prints them.
//
// The syscall and errno tables are generated from the kernel headers
// (gen.go); a test checks them against the headers installed on the host.
//
// It must never depend on any other package of ttd: emu, the syscall
// exporter and the debugger all depend on it.
package linux
