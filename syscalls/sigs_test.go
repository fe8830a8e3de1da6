package syscalls

import (
	"testing"

	"ttd/emu"
	"ttd/internal/linux"
)

// TestEveryImplementedCallDecoded keeps the export whole: each syscall
// emu implements has a decoder (execve and execveat have their own,
// execve.go), so none prints six raw registers.
func TestEveryImplementedCallDecoded(t *testing.T) {
	for nr, s := range emu.Syscalls() {
		if s.Fn == nil || nr == linux.SysExecve || nr == linux.SysExecveat {
			continue
		}
		if _, ok := sigs[nr]; !ok {
			t.Errorf("%s (%d) is implemented but the export has no decoder for it (sigs.go)", linux.SyscallName(nr), nr)
		}
	}
}
