package probe

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// fork.c prints its pid and parent's, forks a child that prints its
// own and execs echo, waits, then execs echo itself. The recorded
// output (which matches the native one but for the pid values) is the
// oracle for pid, ppid and execname, and for proc:::fork/exec/exit.
func TestProcessVariables(t *testing.T) {
	f := recordFixture(t, "fork.c", "gcc", []string{"-O1"})
	out, errs, _ := runScript(t, f.trace, `#pragma D option quiet
syscall::write:entry /arg0 == 1/ { printf("write %d %d %s\n", pid, ppid, execname); }
proc:::fork { printf("fork %d %d %s\n", pid, arg0, execname); }
proc:::exec { printf("exec %d %s\n", pid, execname); }
proc:::exit { printf("exit %d %d\n", pid, arg0); }
`, 2)
	if errs != "" {
		t.Fatalf("stderr: %s", errs)
	}
	rec, err := readFile(f.exe + ".out")
	if err != nil {
		t.Fatal(err)
	}
	var P, PP, C int
	if _, err := fmt.Sscanf(rec, "parent %d %d\nchild %d", &P, &PP, &C); err != nil {
		t.Fatalf("recorded output %q: %v", rec, err)
	}
	name := "fork_O1"
	// Every process is recorded: the child's write and its echo's.
	want := fmt.Sprintf("write %d %d %s\nfork %d %d %s\nwrite %d %d %s\nexec %d echo\nwrite %d %d echo\nexit %d 0\nwrite %d %d %s\nexec %d echo\nwrite %d %d echo\nexit %d 0\n",
		P, PP, name, P, C, name, C, P, name, C, C, P, C, P, PP, name, P, P, PP, P)
	if out != want {
		t.Errorf("script printed\n%s\nwant (from the program's own output %q)\n%s", out, rec, want)
	}
	if !strings.Contains(rec, fmt.Sprintf("waited %d 0", C)) {
		t.Errorf("recorded output: %q", rec)
	}
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
