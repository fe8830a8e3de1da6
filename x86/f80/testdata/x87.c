/*
 * x87.c: oracle for the f80 differential test.
 *
 * Reads lines "OP CW A B" from stdin, where OP is an operation name, CW the
 * x87 control word (hex) and A, B are 80-bit operands written as 20 hex
 * digits (4 digits sign/exponent, 16 digits significand). Operands that
 * are not 80-bit values (double, float, integers) are taken from the low
 * bits of the significand field. For every line it executes the operation
 * on the real x87 with inline assembly and prints "SW R1 R2": the status
 * word after the operation and up to two results, all in hex.
 */
#include <stdio.h>
#include <string.h>
#include <stdint.h>

typedef struct {
	uint64_t m;
	uint16_t se;
} __attribute__((packed)) f80;

static void put80(const f80 *v) { printf(" %04x%016llx", v->se, (unsigned long long)v->m); }

/* Two operands: ST0 = a, ST1 = b; INSN operates; result ST0 stored. */
#define OP2(insn)                                                          \
	asm volatile("fninit\n\tfldcw %[cw]\n\tfldt %[b]\n\tfldt %[a]\n\t" insn \
		     "\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfninit"                  \
		     : [sw] "=m"(sw), [r] "=m"(r)                                \
		     : [cw] "m"(cw), [a] "m"(a), [b] "m"(b)                      \
		     : "memory")
/* Two operands, reversed registers: ST0 = b, ST1 = a. */
#define OP2R(insn)                                                         \
	asm volatile("fninit\n\tfldcw %[cw]\n\tfldt %[a]\n\tfldt %[b]\n\t" insn \
		     "\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfninit"                  \
		     : [sw] "=m"(sw), [r] "=m"(r)                                \
		     : [cw] "m"(cw), [a] "m"(a), [b] "m"(b)                      \
		     : "memory")
/* One operand ST0 = a, one 80-bit result. */
#define OP1(insn)                                                        \
	asm volatile("fninit\n\tfldcw %[cw]\n\tfldt %[a]\n\t" insn            \
		     "\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfninit"                \
		     : [sw] "=m"(sw), [r] "=m"(r)                              \
		     : [cw] "m"(cw), [a] "m"(a)                                \
		     : "memory")
/* One operand ST0 = a, two 80-bit results (ST0 then ST1). */
#define OP1X2(insn)                                                         \
	asm volatile("fninit\n\tfldcw %[cw]\n\tfldt %[a]\n\t" insn               \
		     "\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfstpt %[r2]\n\tfninit"   \
		     : [sw] "=m"(sw), [r] "=m"(r), [r2] "=m"(r2)                 \
		     : [cw] "m"(cw), [a] "m"(a)                                  \
		     : "memory")
/* One operand ST0 = a, store with INSN into integer/float memory r. */
#define STORE(insn, dst)                                                   \
	asm volatile("fninit\n\tfldcw %[cw]\n\tfldt %[a]\n\t" insn " %[d]"      \
		     "\n\tfnstsw %[sw]\n\tfninit"                                \
		     : [sw] "=m"(sw), [d] "=m"(dst)                              \
		     : [cw] "m"(cw), [a] "m"(a)                                  \
		     : "memory")
/* Load from memory operand with INSN. */
#define LOAD(insn, src)                                            \
	asm volatile("fninit\n\tfldcw %[cw]\n\t" insn " %[s]"           \
		     "\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfninit"          \
		     : [sw] "=m"(sw), [r] "=m"(r)                        \
		     : [cw] "m"(cw), [s] "m"(src)                        \
		     : "memory")
/* ST0 = a, memory operand src. */
#define OPM(insn, src)                                                  \
	asm volatile("fninit\n\tfldcw %[cw]\n\tfldt %[a]\n\t" insn " %[s]"   \
		     "\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfninit"               \
		     : [sw] "=m"(sw), [r] "=m"(r)                             \
		     : [cw] "m"(cw), [a] "m"(a), [s] "m"(src)                 \
		     : "memory")
/* Constant load. */
#define CONST(insn)                                        \
	asm volatile("fninit\n\tfldcw %[cw]\n\t" insn           \
		     "\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfninit"  \
		     : [sw] "=m"(sw), [r] "=m"(r)                \
		     : [cw] "m"(cw)                              \
		     : "memory")
/* Status-word-only operations with ST0 = a, ST1 = b. */
#define CMP(insn)                                                          \
	asm volatile("fninit\n\tfldcw %[cw]\n\tfldt %[b]\n\tfldt %[a]\n\t" insn \
		     "\n\tfnstsw %[sw]\n\tfninit"                                \
		     : [sw] "=m"(sw)                                             \
		     : [cw] "m"(cw), [a] "m"(a), [b] "m"(b)                      \
		     : "memory")

int main(void)
{
	static char obuf[1 << 16];
	char op[32];
	unsigned int cwi, ase, bse;
	unsigned long long am, bm;
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	while (scanf("%31s %x %4x%16llx %4x%16llx", op, &cwi, &ase, &am, &bse, &bm) == 6) {
		uint16_t cw = cwi, sw = 0;
		f80 a = {am, ase}, b = {bm, bse}, r = {0, 0}, r2 = {0, 0};
		int n80 = 1; /* number of 80-bit results */
		unsigned long long ir = 0;
		int iw = 0; /* hex width of integer result, 0 if none */
		double dv = 0, db;
		float fv = 0, fb;
		int16_t i16;
		int32_t i32;
		int64_t i64;
		memcpy(&db, &bm, 8);
		memcpy(&fb, &bm, 4);
		if (!strcmp(op, "add")) OP2("fadd %%st(1), %%st");
		else if (!strcmp(op, "sub")) OP2("fsub %%st(1), %%st");
		else if (!strcmp(op, "mul")) OP2("fmul %%st(1), %%st");
		else if (!strcmp(op, "div")) OP2("fdiv %%st(1), %%st");
		/* Same operations with a in ST1 and b in ST0 (result = a op b). */
		else if (!strcmp(op, "addr")) OP2R("fadd %%st(1), %%st");
		else if (!strcmp(op, "subr")) OP2R("fsubr %%st(1), %%st");
		else if (!strcmp(op, "mulr")) OP2R("fmul %%st(1), %%st");
		else if (!strcmp(op, "divr")) OP2R("fdivr %%st(1), %%st");
		/* ST(i) destination forms: ST1 = ST1 op ST0 with ST1 = a, ST0 = b, then pop. */
		else if (!strcmp(op, "addp")) OP2R("faddp %%st, %%st(1)");
		else if (!strcmp(op, "subp")) OP2R("fsubrp %%st, %%st(1)"); /* AT&T swaps sub/subr for ST(i) dest */
		else if (!strcmp(op, "divp")) OP2R("fdivrp %%st, %%st(1)");
		/* Memory operands: a op (double) b, a op (float) b. */
		else if (!strcmp(op, "addd")) OPM("faddl", db);
		else if (!strcmp(op, "muld")) OPM("fmull", db);
		else if (!strcmp(op, "divd")) OPM("fdivl", db);
		else if (!strcmp(op, "adds")) OPM("fadds", fb);
		else if (!strcmp(op, "sqrt")) OP1("fsqrt");
		else if (!strcmp(op, "rndint")) OP1("frndint");
		else if (!strcmp(op, "scale")) OP2("fscale");
		else if (!strcmp(op, "prem")) OP2("fprem");
		else if (!strcmp(op, "prem1")) OP2("fprem1");
		else if (!strcmp(op, "xtract")) { OP1X2("fxtract"); n80 = 2; }
		else if (!strcmp(op, "f2xm1")) OP1("f2xm1");
		else if (!strcmp(op, "fyl2x")) OP2("fyl2x");     /* ST0 = a = x, ST1 = b = y */
		else if (!strcmp(op, "fyl2xp1")) OP2("fyl2xp1");
		else if (!strcmp(op, "fpatan")) OP2("fpatan");   /* atan(b / a) */
		else if (!strcmp(op, "fsin")) OP1("fsin");
		else if (!strcmp(op, "fcos")) OP1("fcos");
		else if (!strcmp(op, "fptan")) { OP1X2("fptan"); n80 = 2; }
		else if (!strcmp(op, "fsincos")) { OP1X2("fsincos"); n80 = 2; }
		else if (!strcmp(op, "com")) { CMP("fcom %%st(1)"); n80 = 0; }
		else if (!strcmp(op, "ucom")) { CMP("fucom %%st(1)"); n80 = 0; }
		else if (!strcmp(op, "tst")) { CMP("ftst"); n80 = 0; }
		else if (!strcmp(op, "xam")) { CMP("fxam"); n80 = 0; }
		else if (!strcmp(op, "fist16")) { STORE("fistps", i16); ir = (uint16_t)i16; iw = 4; n80 = 0; }
		else if (!strcmp(op, "fist32")) { STORE("fistpl", i32); ir = (uint32_t)i32; iw = 8; n80 = 0; }
		else if (!strcmp(op, "fist64")) { STORE("fistpll", i64); ir = (uint64_t)i64; iw = 16; n80 = 0; }
		else if (!strcmp(op, "fistt64")) { STORE("fisttpll", i64); ir = (uint64_t)i64; iw = 16; n80 = 0; }
		else if (!strcmp(op, "fst64")) { STORE("fstpl", dv); memcpy(&ir, &dv, 8); iw = 16; n80 = 0; }
		else if (!strcmp(op, "fst32")) { uint32_t u; STORE("fstps", fv); memcpy(&u, &fv, 4); ir = u; iw = 8; n80 = 0; }
		else if (!strcmp(op, "fld64")) LOAD("fldl", db);
		else if (!strcmp(op, "fld32")) LOAD("flds", fb);
		else if (!strcmp(op, "fldpi")) CONST("fldpi");
		else if (!strcmp(op, "fldl2t")) CONST("fldl2t");
		else if (!strcmp(op, "fldl2e")) CONST("fldl2e");
		else if (!strcmp(op, "fldlg2")) CONST("fldlg2");
		else if (!strcmp(op, "fldln2")) CONST("fldln2");
		else {
			printf("bad op %s\n", op);
			return 1;
		}
		printf("%04x", sw);
		if (n80 >= 1) put80(&r);
		if (n80 >= 2) put80(&r2);
		if (iw) printf(" %0*llx", iw, ir);
		printf("\n");
	}
	return 0;
}
