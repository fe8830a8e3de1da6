#include "textflag.h"

// func jitCall(entry uintptr, c unsafe.Pointer) uint64
//
// Translated code (jit_amd64.go) is a leaf that keeps the *CPU in R15 and
// uses no stack beyond its return address. It is entered through ABI0, so
// it may clobber every register but SP and BP.
TEXT ·jitCall(SB), NOSPLIT, $16-24
	MOVQ entry+0(FP), AX
	MOVQ c+8(FP), R15
	CALL AX
	MOVQ AX, ret+16(FP)
	RET
