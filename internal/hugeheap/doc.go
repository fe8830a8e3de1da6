// Package hugeheap asks Linux to back ttd's Go heap with transparent huge
// pages.
//
// Why: a short program under ttd touches tens of megabytes of fresh heap
// in its first half second (decoded instructions, guest pages, host code),
// and on the machines ttd is measured on a 4 KiB page fault costs about
// 16 µs of CPU: `ttd run python3 -c pass` took 13,400 faults, a third of
// its CPU time. Huge pages take one fault per 2 MiB. The kernel gives
// them to anonymous memory only where the process asked (madvise
// MADV_HUGEPAGE) when /sys/kernel/mm/transparent_hugepage/enabled is
// "madvise", its usual setting; the Go runtime does not ask for its heap.
//
// It depends on nothing of ttd, and only command wiring (cmd/ttd) may
// call it: it is a process-wide choice.
package hugeheap
