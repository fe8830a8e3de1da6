package emu

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The guest ABI is the host's (both are Linux x86-64), so kernel structs
// filled by host syscalls are copied to the guest byte for byte. This file
// holds the only conversions between Go values and raw bytes.

// structBytes returns the memory of *v as a byte slice aliasing it.
func structBytes[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

// hostArg is an argument of a raw host syscall: an integer, or a byte
// buffer passed by address.
type hostArg struct {
	v uintptr
	b []byte
}

func hInt[T ~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64 | ~uintptr](v T) hostArg {
	return hostArg{v: uintptr(v)}
}

func hBuf(b []byte) hostArg { return hostArg{b: b} }

// hostSyscall performs a raw host system call whose pointer arguments are
// host byte buffers (filled or read by the kernel).
func hostSyscall(nr uintptr, args ...hostArg) (uintptr, error) {
	var a [6]uintptr
	for i, x := range args {
		if x.b != nil {
			if len(x.b) > 0 {
				a[i] = uintptr(unsafe.Pointer(&x.b[0]))
			} else {
				a[i] = uintptr(unsafe.Pointer(unsafe.SliceData(x.b)))
			}
		} else {
			a[i] = x.v
		}
	}
	r, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	runtime.KeepAlive(args)
	if e != 0 {
		return r, e
	}
	return r, nil
}

// hostMsg performs sendmsg or recvmsg with a host msghdr.
func hostMsg(nr uintptr, fd int, msg *unix.Msghdr, flags int) (int, error) {
	r, _, e := unix.Syscall(nr, uintptr(fd), uintptr(unsafe.Pointer(msg)), uintptr(flags))
	runtime.KeepAlive(msg)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
