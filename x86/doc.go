// Package x86 is ttd's x86-64 processor: CPU state, guest memory as the CPU
// sees it (pages, permissions and a software TLB), decoding through
// golang.org/x/arch/x86/x86asm (and vex.go for the VEX encoding) into a
// compact cached form, and instruction semantics (integer, lazy flags, x87,
// SSE to SSE4.2, AVX/AVX2, FMA3, BMI1/2, F16C: the x86-64-v1 to v3 levels,
// which features.go gates). Blocks that run often
// are translated to host code (jit.go) that does exactly what the
// interpreter does, and hands any case it does not handle back to it.
//
// It knows nothing of Linux: system calls, faults and non-deterministic
// instructions leave the execution loop as an Exit for the caller (package
// emu) to handle. It must never depend on emu, the recorder or the reader.
//
// One file touches the host's files: codefile.go, the persistent cache of
// decoded blocks and their translations (TTD_CODE_CACHE), which stores
// instructions in their in-memory form and so lives with them; it is used
// only when emu attaches a file to a code cache (UseCodeFile), never by
// the reader.
package x86
