package emu

import (
	"testing"

	"ttd/internal/linux"
)

// TestSyscallTableIsLinux checks that every row of the syscall table
// carries internal/linux's name for its number, and that every number
// Linux uses has a row.
func TestSyscallTableIsLinux(t *testing.T) {
	for nr := range max(len(syscallTable), linux.NumSyscalls) {
		row := ""
		if nr < len(syscallTable) {
			row = syscallTable[nr].Name
		}
		want, _ := linux.Syscall(nr)
		if row != want {
			t.Errorf("syscall %d: row %q, internal/linux %q", nr, row, want)
		}
	}
}
