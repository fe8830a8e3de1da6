#include "textflag.h"

// func hostRecipAsm(op int, x *XMM, mx uint32, r *XMM)
TEXT ·hostRecipAsm(SB), NOSPLIT, $8-32
	STMXCSR 0(SP)
	LDMXCSR mx+16(FP)
	MOVQ x+8(FP), AX
	MOVOU (AX), X0
	MOVQ op+0(FP), AX
	CMPQ AX, $0
	JNE rsqrt
	RCPPS X0, X1
	JMP done
rsqrt:
	RSQRTPS X0, X1
done:
	LDMXCSR 0(SP)
	MOVQ r+24(FP), AX
	MOVOU X1, (AX)
	RET
