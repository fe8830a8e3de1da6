#include "textflag.h"

// func takeHostFPFlags() uint32
TEXT ·takeHostFPFlags(SB), NOSPLIT, $8-4
	STMXCSR 0(SP)
	MOVL 0(SP), AX
	MOVL AX, ret+0(FP)
	ANDL $0xffffffc0, 0(SP)
	LDMXCSR 0(SP)
	RET
