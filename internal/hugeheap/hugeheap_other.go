//go:build !linux

package hugeheap

// Reserve does nothing on systems other than Linux.
func Reserve(n int) int { return 0 }
