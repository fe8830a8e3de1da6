/* A small stack-based bytecode interpreter running a few programs, once
 * with switch dispatch and once with computed-goto (threaded) dispatch. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum op { PUSH, LOAD, STORE, ADD, SUB, MUL, DIVU, MOD, LT, JMP, JZ, DUP, DROP, PRINT, HALT, XOR, SHL, SHR, AND, CALL, RET };

typedef struct {
	int64_t stack[256];
	int sp;
	int64_t vars[16];
	int rstack[64];
	int rsp;
	uint64_t steps;
	uint64_t out_hash;
	int printed;
} vm;

static void out(vm *m, int64_t v)
{
	m->out_hash = (m->out_hash ^ (uint64_t)v) * 0x100000001b3ull;
	if (m->printed++ < 12)
		printf(" %" PRId64, v);
}

static void run_switch(vm *m, const int64_t *code)
{
	int pc = 0;
	for (;;) {
		m->steps++;
		int64_t a, b;
		switch ((enum op)code[pc++]) {
		case PUSH: m->stack[m->sp++] = code[pc++]; break;
		case LOAD: m->stack[m->sp++] = m->vars[code[pc++]]; break;
		case STORE: m->vars[code[pc++]] = m->stack[--m->sp]; break;
		case ADD: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = (int64_t)((uint64_t)a + (uint64_t)b); break;
		case SUB: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = (int64_t)((uint64_t)a - (uint64_t)b); break;
		case MUL: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = (int64_t)((uint64_t)a * (uint64_t)b); break;
		case DIVU: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = (int64_t)((uint64_t)a / (uint64_t)b); break;
		case MOD: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = (int64_t)((uint64_t)a % (uint64_t)b); break;
		case LT: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = a < b; break;
		case XOR: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = a ^ b; break;
		case AND: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = a & b; break;
		case SHL: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = (int64_t)((uint64_t)a << (b & 63)); break;
		case SHR: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = (int64_t)((uint64_t)a >> (b & 63)); break;
		case JMP: pc = (int)code[pc]; break;
		case JZ: a = m->stack[--m->sp]; pc = a ? pc + 1 : (int)code[pc]; break;
		case DUP: m->stack[m->sp] = m->stack[m->sp - 1]; m->sp++; break;
		case DROP: m->sp--; break;
		case PRINT: out(m, m->stack[--m->sp]); break;
		case CALL: m->rstack[m->rsp++] = pc + 1; pc = (int)code[pc]; break;
		case RET: pc = m->rstack[--m->rsp]; break;
		case HALT: return;
		}
	}
}

static void run_threaded(vm *m, const int64_t *code)
{
	static void *labels[] = {&&L_PUSH, &&L_LOAD, &&L_STORE, &&L_ADD, &&L_SUB, &&L_MUL, &&L_DIVU, &&L_MOD, &&L_LT, &&L_JMP,
		&&L_JZ, &&L_DUP, &&L_DROP, &&L_PRINT, &&L_HALT, &&L_XOR, &&L_SHL, &&L_SHR, &&L_AND, &&L_CALL, &&L_RET};
	int pc = 0;
	int64_t a, b;
#define NEXT                                   \
	do {                                   \
		m->steps++;                    \
		goto *labels[code[pc++]];      \
	} while (0)
#define BIN(expr)                              \
	b = m->stack[--m->sp];                 \
	a = m->stack[--m->sp];                 \
	m->stack[m->sp++] = (expr);            \
	NEXT
	NEXT;
L_PUSH: m->stack[m->sp++] = code[pc++]; NEXT;
L_LOAD: m->stack[m->sp++] = m->vars[code[pc++]]; NEXT;
L_STORE: m->vars[code[pc++]] = m->stack[--m->sp]; NEXT;
L_ADD: BIN((int64_t)((uint64_t)a + (uint64_t)b));
L_SUB: BIN((int64_t)((uint64_t)a - (uint64_t)b));
L_MUL: BIN((int64_t)((uint64_t)a * (uint64_t)b));
L_DIVU: BIN((int64_t)((uint64_t)a / (uint64_t)b));
L_MOD: BIN((int64_t)((uint64_t)a % (uint64_t)b));
L_LT: BIN(a < b);
L_XOR: BIN(a ^ b);
L_AND: BIN(a & b);
L_SHL: BIN((int64_t)((uint64_t)a << (b & 63)));
L_SHR: BIN((int64_t)((uint64_t)a >> (b & 63)));
L_JMP: pc = (int)code[pc]; NEXT;
L_JZ: a = m->stack[--m->sp]; pc = a ? pc + 1 : (int)code[pc]; NEXT;
L_DUP: m->stack[m->sp] = m->stack[m->sp - 1]; m->sp++; NEXT;
L_DROP: m->sp--; NEXT;
L_PRINT: out(m, m->stack[--m->sp]); NEXT;
L_CALL: m->rstack[m->rsp++] = pc + 1; pc = (int)code[pc]; NEXT;
L_RET: pc = m->rstack[--m->rsp]; NEXT;
L_HALT: return;
#undef NEXT
#undef BIN
}

/* A tiny assembler with forward labels. */
typedef struct {
	int64_t code[512];
	int n;
	int label[32];
	int fix_at[64], fix_label[64], nfix;
} asm_t;
static void E(asm_t *a, int64_t v) { a->code[a->n++] = v; }
static void E2(asm_t *a, int64_t op, int64_t arg)
{
	E(a, op);
	E(a, arg);
}
static void L(asm_t *a, int l) { a->label[l] = a->n; }
static void J(asm_t *a, int64_t op, int l)
{
	E(a, op);
	a->fix_at[a->nfix] = a->n;
	a->fix_label[a->nfix++] = l;
	E(a, 0);
}
static const int64_t *done(asm_t *a)
{
	for (int i = 0; i < a->nfix; i++)
		a->code[a->fix_at[i]] = a->label[a->fix_label[i]];
	return a->code;
}

/* Primes below 3000 by trial division; prints every prime p with p % 500 < 5. */
static const int64_t *prog_primes(asm_t *a)
{
	enum { LOOP, INNER, PRIME, NEXT_N, END, SKIP };
	E2(a, PUSH, 2), E2(a, STORE, 0);          /* n */
	E2(a, PUSH, 0), E2(a, STORE, 2);          /* count */
	L(a, LOOP);
	E2(a, LOAD, 0), E2(a, PUSH, 3000), E(a, LT), J(a, JZ, END);
	E2(a, PUSH, 2), E2(a, STORE, 1);          /* d */
	L(a, INNER);
	E2(a, LOAD, 1), E2(a, LOAD, 1), E(a, MUL), E2(a, LOAD, 0), E2(a, PUSH, 1), E(a, ADD), E(a, LT);
	J(a, JZ, PRIME);                          /* d*d > n */
	E2(a, LOAD, 0), E2(a, LOAD, 1), E(a, MOD), J(a, JZ, NEXT_N);
	E2(a, LOAD, 1), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 1), J(a, JMP, INNER);
	L(a, PRIME);
	E2(a, LOAD, 2), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 2);
	E2(a, LOAD, 0), E2(a, PUSH, 500), E(a, MOD), E2(a, PUSH, 5), E(a, LT), J(a, JZ, SKIP);
	E2(a, LOAD, 0), E(a, PRINT);
	L(a, SKIP);
	L(a, NEXT_N);
	E2(a, LOAD, 0), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 0), J(a, JMP, LOOP);
	L(a, END);
	E2(a, LOAD, 2), E(a, PRINT), E(a, HALT);
	return done(a);
}

/* Collatz: total number of steps for all n in [1, 1500). */
static const int64_t *prog_collatz(asm_t *a)
{
	enum { LOOP, TRAJ, EVEN, NEXT_N, END };
	E2(a, PUSH, 1), E2(a, STORE, 0), E2(a, PUSH, 0), E2(a, STORE, 2);
	L(a, LOOP);
	E2(a, LOAD, 0), E2(a, PUSH, 1500), E(a, LT), J(a, JZ, END);
	E2(a, LOAD, 0), E2(a, STORE, 1);
	L(a, TRAJ);
	E2(a, LOAD, 1), E2(a, PUSH, 1), E(a, XOR), J(a, JZ, NEXT_N);
	E2(a, LOAD, 2), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 2);
	E2(a, LOAD, 1), E2(a, PUSH, 1), E(a, AND), J(a, JZ, EVEN);
	E2(a, LOAD, 1), E2(a, PUSH, 3), E(a, MUL), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 1), J(a, JMP, TRAJ);
	L(a, EVEN);
	E2(a, LOAD, 1), E2(a, PUSH, 1), E(a, SHR), E2(a, STORE, 1), J(a, JMP, TRAJ);
	L(a, NEXT_N);
	E2(a, LOAD, 0), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 0), J(a, JMP, LOOP);
	L(a, END);
	E2(a, LOAD, 2), E(a, PRINT), E(a, HALT);
	return done(a);
}

/* Fibonacci numbers (wrapping) with a subroutine that prints every 10th. */
static const int64_t *prog_fib(asm_t *a)
{
	enum { LOOP, END, SUB, SHOW };
	E2(a, PUSH, 0), E2(a, STORE, 0), E2(a, PUSH, 1), E2(a, STORE, 1), E2(a, PUSH, 0), E2(a, STORE, 2);
	L(a, LOOP);
	E2(a, LOAD, 2), E2(a, PUSH, 120), E(a, LT), J(a, JZ, END);
	E2(a, LOAD, 0), E2(a, LOAD, 1), E(a, ADD), E2(a, LOAD, 1), E2(a, STORE, 0), E2(a, STORE, 1);
	E2(a, LOAD, 0), J(a, CALL, SUB);
	E2(a, LOAD, 2), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 2), J(a, JMP, LOOP);
	L(a, END);
	E2(a, LOAD, 1), E(a, PRINT), E(a, HALT);
	L(a, SUB);
	E2(a, LOAD, 2), E2(a, PUSH, 10), E(a, MOD), J(a, JZ, SHOW), E(a, DROP), E(a, RET);
	L(a, SHOW);
	E(a, PRINT), E(a, RET);
	return done(a);
}

/* Sum of squares modulo 2^61-1 for i < 100000. */
static const int64_t *prog_squares(asm_t *a)
{
	enum { LOOP, END };
	E2(a, PUSH, 0), E2(a, STORE, 0), E2(a, PUSH, 0), E2(a, STORE, 1);
	L(a, LOOP);
	E2(a, LOAD, 0), E2(a, PUSH, 100000), E(a, LT), J(a, JZ, END);
	E2(a, LOAD, 1), E2(a, LOAD, 0), E(a, DUP), E(a, MUL), E(a, ADD), E2(a, PUSH, 2305843009213693951LL), E(a, MOD);
	E2(a, STORE, 1), E2(a, LOAD, 0), E2(a, PUSH, 1), E(a, ADD), E2(a, STORE, 0), J(a, JMP, LOOP);
	L(a, END);
	E2(a, LOAD, 1), E(a, PRINT), E(a, HALT);
	return done(a);
}

static void run_both(const char *name, const int64_t *code)
{
	vm a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.out_hash = b.out_hash = 0xcbf29ce484222325ull;
	printf("%s switch:", name);
	run_switch(&a, code);
	printf("\n%s threaded:", name);
	run_threaded(&b, code);
	printf("\n%s: steps=%" PRIu64 "/%" PRIu64 " outputs=%d hash=%016" PRIx64 " agree=%d\n", name, a.steps, b.steps,
	       a.printed, a.out_hash, a.out_hash == b.out_hash && a.steps == b.steps);
}

int main(void)
{
	static asm_t a1, a2, a3, a4;
	run_both("primes", prog_primes(&a1));
	run_both("collatz", prog_collatz(&a2));
	run_both("fib", prog_fib(&a3));
	run_both("squares", prog_squares(&a4));
	return 0;
}
