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
// Results are those the x87 delivers with all exceptions masked, which is
// how C programs run: invalid operations produce the default NaN
// ("real indefinite"), overflow produces infinity or the largest finite value,
// underflow produces denormals, integer stores that do not fit produce the
// integer indefinite.
//
// The basic arithmetic (FADD, FSUB, FMUL, FDIV, FSQRT, FRNDINT, FSCALE,
// FXTRACT, FPREM, FPREM1, comparisons and conversions to and from integers,
// float32 and float64) is exact, implemented with 64/128-bit integer
// arithmetic and no allocation; the package's differential test checks it
// against the host's x87. The transcendental instructions (F2XM1, FYL2X,
// FYL2XP1, FPATAN, FSIN, FCOS, FPTAN, FSINCOS) are computed to well beyond
// 64 bits with math/big and then rounded, which reproduces the hardware in
// the vast majority of cases; the hardware is itself not correctly rounded,
// so a small fraction of results differ from it by one unit in the last
// place.
//
// The package is self-contained: it depends on nothing else in ttd, and
// nothing in it knows about the register stack, tags or the control and
// status words as a whole; those belong to the caller.
package f80
