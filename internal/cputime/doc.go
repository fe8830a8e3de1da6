// Package cputime reads the CPU time the process has used, for
// benchmarks that must report CPU time because the machine they share
// makes wall time depend on its load. It depends on nothing but the
// standard library, and nothing but benchmarks and bench commands may
// depend on it.
package cputime
