// Package f80 implements the x87 80-bit extended-precision floating-point
// format and the x87 FPU's arithmetic on it, bit for bit as the hardware
// does it, so that the ttd x86-64 interpreter can run C `long double` code
// (and anything else that uses the x87) with results identical to a real
// CPU.
//
// A value is an F80: a 64-bit significand with an explicit integer bit and a
// 16-bit sign/exponent word, exactly the 10-byte memory layout of FSTP m80.
// Every operation takes the rounding control (RC) and, where the x87 honours
// it, the precision control (PC) of the control word, and returns the result
// together with the exception bits (IE, DE, ZE, OE, UE, PE) that the operation
// sets in the status word, plus C1 (rounded up) where the x87 reports it.
// Results are those the x87 delivers with all exceptions masked: invalid
// operations produce the default NaN ("real indefinite"), overflow produces
// infinity or the largest finite value, underflow produces denormals,
// integer stores that do not fit produce the integer indefinite.
//
// The basic arithmetic (FADD, FSUB, FMUL, FDIV, FSQRT, FRNDINT, FSCALE,
// FXTRACT, FPREM, FPREM1, comparisons, FXAM, the FLD constants and the
// conversions to and from integers, float32 and float64) is exact,
// implemented with 64/128-bit integer arithmetic and no allocation; the
// package's differential test (x87_test.go, with the C oracle in testdata)
// finds no difference from the host's x87 in hundreds of thousands of
// random and edge-case operations under every rounding and precision
// control. Arithmetic on an m32/m64 operand (FADD m64 and the like) is done
// by converting it with OperandFloat64/OperandFloat32 and merging its DE
// with MergeOperandExc.
//
// The transcendental instructions (F2XM1, FYL2X, FYL2XP1, FPATAN, FSIN,
// FCOS, FPTAN, FSINCOS) are computed with math/big to 192 bits and rounded
// once under RC (they ignore PC, like the x87), with the x87's own special
// cases: FSIN and friends reduce their argument with the x87's 66-bit pi,
// so sin(Pi) is -2^-64 as on the hardware, and leave arguments of 2^63 or
// more alone (ok=false: C2 set). The x87 is not correctly rounded, this
// package is, so about 0.2-3% of the results (depending on the
// instruction) differ from the hardware by one unit in the last place,
// and C1 then differs too. Operands outside an instruction's documented
// domain get what the AMD processor the package was checked on does:
// F2XM1 of |x| > 1 returns x, FYL2XP1 of x <= -1 returns x (both with PE);
// Intel processors may differ there.
//
// Exceptions are reported as the x87 does with all of them masked (the
// state every C program runs in); the caller raises #MF itself if it
// emulates unmasked exceptions. The bit C1 in Exc is condition code C1,
// not a sticky flag: see its documentation.
//
// The package is self-contained: it depends on nothing else in ttd, and
// nothing in it knows about the register stack, tags or the control and
// status words as a whole; those belong to the caller.
package f80
