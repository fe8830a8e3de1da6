package syscalls

import (
	"os/exec"
	"testing"

	"ttd/reader"

	"ttd/internal/linux"
	"ttd/tracefile"
)

// TestExecveEnvpUnknown: when the memory of execve's arguments is
// unknown, the exec's Process record gives the program, argv and (minor
// version 4 on) how many variables envp had, which strace prints after
// the pointer; an older record (Envc 0) leaves the pointer alone.
func TestExecveEnvpUnknown(t *testing.T) {
	for _, tc := range []struct {
		envc int
		want string
	}{
		{36, `execve("/bin/cat", ["cat", "x"], 0x7ffc0000 /* 35 vars */)`},
		{2, `execve("/bin/cat", ["cat", "x"], 0x7ffc0000 /* 1 var */)`},
		{1, `execve("/bin/cat", ["cat", "x"], 0x7ffc0000 /* 0 vars */)`},
		{0, `execve("/bin/cat", ["cat", "x"], 0x7ffc0000)`},
	} {
		d := &decoder{strSize: 32}
		c := &Call{Name: "execve", Nr: linux.SysExecve, Raw: [6]uint64{0x1000, 0x2000, 0x7ffc0000}}
		d.execArgs(c, &tracefile.Process{Event: tracefile.ProcessExeced, Path: "/bin/cat", Argv: []string{"cat", "x"}, Envc: tc.envc}, nil)
		if string(c.Text) != tc.want {
			t.Errorf("Envc %d: %s, want %s", tc.envc, c.Text, tc.want)
		}
	}
}

// TestExecRecordsEnvc: the recorder writes how many variables an exec
// passed into its Process record (sh execs env with PATH and X=1 added).
func TestExecRecordsEnvc(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		skipOutsideCI(t, "sh: %v", err)
	}
	path := record(t, sh, t.TempDir(), "-c", "X=1 exec env")
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	recs, err := tr.File().Processes()
	if err != nil {
		t.Fatal(err)
	}
	var envc []int
	for _, p := range recs {
		if p.Event == tracefile.ProcessExeced {
			envc = append(envc, p.Envc)
		}
	}
	// PATH, X, and what sh adds itself (PWD).
	if len(envc) != 1 || envc[0] < 3 {
		t.Errorf("exec records' Envc %v, want one of at least 3 (two variables and more, plus one)", envc)
	}
}
