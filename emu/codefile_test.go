package emu

import (
	"os"
	"testing"

	"ttd/x86"
)

// mapOverSrc maps a file holding `mov eax, v; ret` at a fixed address
// with PROT_EXEC, never writable, and calls it; then rewrites f of its
// own text to return v+10 and calls that. Run with v 1, 2 and 1 again,
// the code file of the program (the same executable each time) holds
// the block at the fixed address as the earlier run found it there.
const mapOverSrc = rewriteLib + `#include <fcntl.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int v = atoi(argv[1]);
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	unsigned char code[4096] = {0xb8, (unsigned char)v, 0, 0, 0, 0xc3};
	if (fd < 0 || write(fd, code, sizeof code) != sizeof code) {
		perror("code file");
		return 8;
	}
	void *at = mmap((void *)0x70000000, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (at == MAP_FAILED) {
		perror("mmap");
		return 7;
	}
	int (*g)(void) = (int (*)(void))at;
	int a = g();
	int b = fp();
	patch(v + 10);
	int c = fp();
	printf("mapped %d, f %d, rewritten f %d\n", a, b, c);
	return 0;
}
`

// TestCodeFileMapOverAndRewrite: a program run again under the code
// file runs the code it has now, not the code an earlier run decoded:
// a file of other code mapped at the same address, its own text
// rewritten. The later runs take blocks from the file.
func TestCodeFileMapOverAndRewrite(t *testing.T) {
	if os.Getenv("TTD_CODE_CACHE") == "" || os.Getenv("TTD_CODE_CACHE") == "off" {
		t.Skip("TTD_CODE_CACHE is off")
	}
	exe := build(t, glibcDyn, mapOverSrc)
	code := t.TempDir() + "/code"
	for i, v := range []string{"1", "2", "1", "3"} {
		before := x86.CodeFileTaken()
		got := compare(t, exe, v, code)
		taken := x86.CodeFileTaken() - before
		t.Logf("run %d (v %s): %q, %d blocks from the code file", i, v, got.stdout, taken)
		if i > 0 && taken < 100 {
			t.Errorf("run %d took %d blocks from the code file, want most of the program's", i, taken)
		}
	}
}
