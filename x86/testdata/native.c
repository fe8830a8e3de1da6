/*
 * native.c: the host-CPU oracle of the x86 differential test (diff_test.go).
 *
 * It reads test cases from stdin and writes one result per case to stdout,
 * both as fixed-size little-endian binary records (struct input and struct
 * output below; diff_test.go mirrors them). For each case it copies the
 * instruction bytes into an RWX code page at CODE_ADDR+CODE_OFF, followed by
 * int3 bytes (the whole page is int3), copies the data region into place
 * and then enters the instruction through a signal: the SIGUSR1 handler
 * rewrites its ucontext with the input state (all general registers,
 * RFLAGS, RIP, XMM0-15, MXCSR, MM0-7) so that the kernel's sigreturn loads
 * the complete state at once. The instruction runs, and the int3 after it
 * (or a fault, or a SIGFPE) enters the capture handler, which records the
 * state from its ucontext and siglongjmps back to the loop. Signal handlers
 * run on an alternate stack, so the test may load any value into rsp.
 *
 * Memory layout (identical in the emulator):
 *   CODE_ADDR .. +4K   code page, RWX, int3 everywhere but the instruction
 *   RO_PAGE  .. +4K    read-only page, byte i = i*7
 *   DATA_PAGE .. +4K   read-write page, zero but for the data region
 *   MEM_ADDR .. +512   the data region at the end of DATA_PAGE: loaded
 *                      from and compared with the case's memory image
 *   DATA_PAGE+4K       unmapped (faults that cross the page end)
 *
 * Output sig is 0 when the instruction completed (rip then is where the
 * int3 after it was reached), else the signal number with its si_code, the
 * fault address and the state at the fault (rip at the instruction).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define CODE_ADDR 0x10000000UL
#define CODE_OFF 0x800
#define RO_PAGE 0x1ffff000UL
#define DATA_PAGE 0x20000000UL
#define MEM_SIZE 512
#define MEM_ADDR (DATA_PAGE + 4096 - MEM_SIZE)

struct state {
	uint64_t gpr[16]; /* rax rcx rdx rbx rsp rbp rsi rdi r8-r15 */
	uint64_t rflags;
	uint64_t rip; /* output only */
	uint32_t mxcsr;
	uint16_t fsw; /* x87 status word (with TOP), output only */
	uint8_t ftw;  /* abridged x87 tag word, output only */
	uint8_t pad;
	uint64_t xmm[32];
	uint64_t mm[8]; /* significands of ST0-7 (MM0-7 when TOP is 0) */
	uint64_t ymmh[32]; /* bits 128-255 of YMM0-15 (zero without AVX) */
	uint8_t mem[MEM_SIZE];
};

/* The AVX state component in the signal frame's XSAVE area (standard
   format), when the kernel saved it. */
static uint64_t *avx_state(struct _libc_fpstate *fp)
{
	uint32_t magic, size;
	uint64_t features;
	memcpy(&magic, (char *)fp + 464, 4);
	memcpy(&size, (char *)fp + 464 + 4, 4);
	memcpy(&features, (char *)fp + 464 + 8, 8);
	if (magic != 0x46505853 || !(features & 4) || size < 576 + 256)
		return 0;
	return (uint64_t *)((char *)fp + 576);
}

struct input {
	uint8_t len;
	uint8_t pad[7];
	uint8_t code[16];
	struct state st;
};

struct output {
	int32_t sig;
	int32_t code;
	uint64_t addr;
	struct state st;
};

static const int greg[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
			     REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

static struct input in;
static struct output out;
static sigjmp_buf env;
static volatile int entering;

static void handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct _libc_fpstate *fp = uc->uc_mcontext.fpregs;
	if (entering && sig == SIGUSR1) {
		entering = 0;
		for (int i = 0; i < 16; i++)
			uc->uc_mcontext.gregs[greg[i]] = in.st.gpr[i];
		uc->uc_mcontext.gregs[REG_EFL] = in.st.rflags;
		uc->uc_mcontext.gregs[REG_RIP] = CODE_ADDR + CODE_OFF;
		memcpy(fp->_xmm, in.st.xmm, sizeof in.st.xmm);
		fp->mxcsr = in.st.mxcsr;
		fp->cwd = 0x37f;
		fp->swd = 0;
		fp->ftw = 0;
		for (int i = 0; i < 8; i++) {
			memcpy(fp->_st[i].significand, &in.st.mm[i], 8);
			fp->_st[i].exponent = 0xffff;
		}
		/* Make XRSTOR take x87 and SSE state from the frame even if
		   they were in their init state when the signal came. */
		uint32_t magic;
		memcpy(&magic, (char *)fp + 464, 4);
		if (magic == 0x46505853) {
			uint64_t bv;
			memcpy(&bv, (char *)fp + 512, 8);
			bv |= 3;
			uint64_t *y = avx_state(fp);
			if (y) {
				memcpy(y, in.st.ymmh, sizeof in.st.ymmh);
				bv |= 4;
			}
			memcpy((char *)fp + 512, &bv, 8);
		}
		return;
	}
	for (int i = 0; i < 16; i++)
		out.st.gpr[i] = uc->uc_mcontext.gregs[greg[i]];
	out.st.rflags = uc->uc_mcontext.gregs[REG_EFL];
	out.st.rip = uc->uc_mcontext.gregs[REG_RIP];
	memcpy(out.st.xmm, fp->_xmm, sizeof out.st.xmm);
	uint64_t *y = avx_state(fp);
	if (y) {
		uint64_t bv;
		memcpy(&bv, (char *)fp + 512, 8);
		if (bv & 4)
			memcpy(out.st.ymmh, y, sizeof out.st.ymmh);
	}
	out.st.mxcsr = fp->mxcsr;
	out.st.fsw = fp->swd;
	out.st.ftw = (uint8_t)fp->ftw;
	for (int i = 0; i < 8; i++)
		memcpy(&out.st.mm[i], fp->_st[i].significand, 8);
	if (sig == SIGTRAP && si->si_code == SI_KERNEL) {
		/* The int3 after the instruction. */
		out.sig = 0;
		out.st.rip--;
	} else {
		out.sig = sig;
		out.code = si->si_code;
		out.addr = (uint64_t)si->si_addr;
	}
	siglongjmp(env, 1);
}

int main(void)
{
	static char altstack[1 << 16];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	if (sigaltstack(&ss, 0) < 0) {
		perror("sigaltstack");
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	int sigs[] = {SIGUSR1, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM};
	for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, 0);

	uint8_t *code = mmap((void *)CODE_ADDR, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	uint8_t *ro = mmap((void *)RO_PAGE, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			   -1, 0);
	uint8_t *data = mmap((void *)DATA_PAGE, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (code != (void *)CODE_ADDR || ro != (void *)RO_PAGE || data != (void *)DATA_PAGE) {
		fprintf(stderr, "native: cannot map the fixed pages\n");
		return 1;
	}
	for (int i = 0; i < 4096; i++)
		ro[i] = (uint8_t)(i * 7);
	mprotect(ro, 4096, PROT_READ);
	memset(code, 0xcc, 4096);

	while (fread(&in, sizeof in, 1, stdin) == 1) {
		memset(code + CODE_OFF, 0xcc, 16);
		memcpy(code + CODE_OFF, in.code, in.len > 15 ? 15 : in.len);
		memset(data, 0, 4096 - MEM_SIZE);
		memcpy((void *)MEM_ADDR, in.st.mem, MEM_SIZE);
		memset(&out, 0, sizeof out);
		alarm(5);
		if (sigsetjmp(env, 1) == 0) {
			entering = 1;
			raise(SIGUSR1);
			abort(); /* not reached: the handler enters the code */
		}
		alarm(0);
		memcpy(out.st.mem, (void *)MEM_ADDR, MEM_SIZE);
		/* The x87 may be left in MMX state with ugly tags; C code
		   expects an empty stack. */
		asm volatile("emms");
		if (fwrite(&out, sizeof out, 1, stdout) != 1)
			return 1;
	}
	return 0;
}
