//go:build linux && amd64

package x86

import (
	"encoding/binary"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Host faults for `ttd run`'s reads (issue 24, qemu-user's way): with
// winFault, translated code reads guest memory at the window's base plus
// the address after checking only that the address is inside the
// window (below 2^winBits), with no TLB entry: the host's protection of
// the window is the guest's (window_linux.go: a page is readable there
// exactly while the guest may read it and its data are there), and a
// host SIGSEGV in translated code resumes at the exit the TLB check
// would have taken, which hands the instruction to the interpreter as a
// TLB miss does. Writes keep their TLB check (copy-on-write, code pages,
// the write TLB's other uses), so a write never faults.
//
// Each translation ends with its fault table (jitT.faultTable): for
// each read check, the range of host code from the check to the next
// one or the end of the instruction, and the exit. alloc files the
// ranges by chunk (jitFaultTabs) for the handler (winfault_amd64.s),
// which finds the faulting RIP's range without Go; the chunks come from
// one reservation (jitRes), so that the handler tells translated code
// from Go's by RIP alone. Any other fault goes to Go's handler, which
// behaves as before (a nil dereference panics, a crash crashes).
var winFault bool

// jitResChunks is the number of 2 MiB chunks of the JIT reservation (8
// GiB of address space, none of it committed until used).
const jitResChunks = 4096

var (
	// jitResBase and jitResSpan are the reservation (jitSigSegv).
	jitResBase, jitResSpan uintptr
	// jitFaultTabs are the fault sites by chunk, in address order.
	jitFaultTabs [jitResChunks][]jitFaultSite
	// jitGoSegv is Go's SIGSEGV handler.
	jitGoSegv uintptr
	// jitFaults counts the faults resumed at an exit (not atomically:
	// TTD_STATS only).
	jitFaults uint64
)

// jitFaultSite is a range of a chunk's code in which a fault resumes at
// exit (offsets in the chunk); 16 bytes (jitSigSegv).
type jitFaultSite struct {
	start, end, exit, _ uint32
}

func jitSigSegv()

func jitSigSegvAddr() uintptr

var jitRes struct {
	sync.Mutex
	mem  []byte // the chunks, from jitResBase
	next int
	free []int
}

// winFaultAfter is the number of instructions an address space runs
// before its window goes over to host faults (toFault): a process that
// runs less (bash's children, python3 -c pass, gcc's driver) keeps the
// TLB checks and opens no page one by one. 0 (TTD_WINFAULT=1): every
// window is in host-fault mode from the start. TTD_WINFAULT_AFTER sets
// it (measurements, tests). gcc -O2 hello.c runs 113M in all: going
// over after 2^24 took 1.2x the CPU of never (least of 9, load 14),
// after 2^25, 2^26, 2^27 1.09x, 1.06x, 1.05x base's, xz -6 of 512 KB
// (530M) 0.88x, 0.83x, 0.94x (least of 7, load 9-19, each with its
// own code cache): 2^27, so that short compiles keep base's start-up.
var winFaultAfter uint64 = 1 << 27

// winSettleOn lets a process go over before winFaultAfter once its
// code has settled (CPU.winSettled); TTD_WINFAULT_AFTER turns it off.
var winSettleOn = true

// winFaultSwitches counts the windows gone over to host faults
// (TTD_STATS only).
var winFaultSwitches uint64

// enableWinFault reserves the JIT's chunks and installs the handler
// (EnableWindow) unless TTD_WINFAULT=0; it reports whether it did.
// Address spaces go over to host faults one by one (toFault), or all
// from the start with TTD_WINFAULT=1.
func enableWinFault() bool {
	if os.Getenv("TTD_WINFAULT") == "0" {
		return false
	}
	if n, err := strconv.ParseUint(os.Getenv("TTD_WINFAULT_AFTER"), 10, 64); err == nil {
		winFaultAfter, winSettleOn = n, false
	}
	if os.Getenv("TTD_WINFAULT") == "1" {
		winFaultAfter = 0
	}
	b, err := unix.Mmap(-1, 0, (jitResChunks+1)*jitChunk, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return false
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	base := (start + jitChunk - 1) &^ (jitChunk - 1)
	var old sigactiont
	if rtSigaction(unix.SIGSEGV, nil, &old) != 0 || old.handler <= 1 {
		unix.Munmap(b)
		return false
	}
	jitResBase, jitResSpan = base, jitResChunks*jitChunk
	jitRes.mem = b[base-start : base-start+jitResSpan]
	jitGoSegv = old.handler
	nw := old
	nw.handler = jitSigSegvAddr()
	if rtSigaction(unix.SIGSEGV, &nw, nil) != 0 {
		jitResSpan = 0
		return false
	}
	winFault = true
	return true
}

// sigactiont is the kernel's struct sigaction on x86-64.
type sigactiont struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

func rtSigaction(sig unix.Signal, act, old *sigactiont) unix.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	return e
}

// jitResChunk returns a chunk of the reservation, read, write and
// execute, and its fault table emptied; nil when all are in use.
func jitResChunk() []byte {
	jitRes.Lock()
	i, ok := takeFree(&jitRes.free, &jitRes.next, jitResChunks)
	jitRes.Unlock()
	if !ok {
		return nil
	}
	m := jitRes.mem[i*jitChunk : (i+1)*jitChunk : (i+1)*jitChunk]
	if unix.Mprotect(m, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC) != nil {
		jitResGive(i)
		return nil
	}
	jitFaultTabs[i] = jitFaultTabs[i][:0]
	unix.Madvise(m, unix.MADV_HUGEPAGE)
	return m
}

func jitResGive(i int) {
	jitRes.Lock()
	jitRes.free = append(jitRes.free, i)
	jitRes.Unlock()
}

// jitResIndex returns the reservation's chunk of m, or -1 when m is
// not one.
func jitResIndex(m []byte) int {
	a := uintptr(unsafe.Pointer(&m[0]))
	if !winFault || a-jitResBase >= jitResSpan {
		return -1
	}
	return int((a - jitResBase) / jitChunk)
}

// jitResReuse empties the fault table of m, a chunk a freed arena
// kept (jitFree) that another takes.
func jitResReuse(m []byte) {
	if i := jitResIndex(m); i >= 0 {
		jitFaultTabs[i] = jitFaultTabs[i][:0]
	}
}

// jitResRelease gives a chunk of the reservation back to it (its
// memory to the system): false when m is not one.
func jitResRelease(m []byte) bool {
	i := jitResIndex(m)
	if i < 0 {
		return false
	}
	unix.Madvise(m, unix.MADV_DONTNEED)
	unix.Mprotect(m, unix.PROT_NONE)
	jitFaultTabs[i] = jitFaultTabs[i][:0]
	jitResGive(i)
	return true
}

// fileFaults files the fault table at the end of code, copied to p in
// chunk m (alloc), for the handler.
func fileFaults(m []byte, p uintptr, code []byte) {
	i := jitResIndex(m)
	n := len(code)
	if i < 0 || n < 4 {
		return
	}
	k := int(binary.LittleEndian.Uint32(code[n-4:]))
	off := uint32(p - uintptr(unsafe.Pointer(&m[0])))
	t := code[n-4-12*k : n-4]
	for j := 0; j < k; j++ {
		e := t[12*j:]
		jitFaultTabs[i] = append(jitFaultTabs[i], jitFaultSite{
			start: off + binary.LittleEndian.Uint32(e),
			end:   off + binary.LittleEndian.Uint32(e[4:]),
			exit:  off + binary.LittleEndian.Uint32(e[8:]),
		})
	}
}

// WinFaultAfter reports the number of instructions after which an
// address space's reads take no TLB check (0: from the start), and
// whether any do (tests).
func WinFaultAfter() (uint64, bool) { return winFaultAfter, winFault }

// HostFaults counts the host faults of translated reads resumed at
// their exits so far (tests).
func HostFaults() uint64 { return jitFaults }
