// Package bench holds ttd's benchmarks: Go testing.B benchmarks of the hot
// paths (dispatch loop, memory access) and, in cmd/compare, the
// side-by-side wall-time comparison of native runs, `ttd run` and
// qemu-user on the same workloads, measured in one run.
package bench
