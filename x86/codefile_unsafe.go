package x86

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// mapFile maps the file at path copy-on-write (nothing should write a
// decoded instruction, but a write must not reach the file).
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < codeFileHeaderSize || fi.Size() > 1<<32 {
		return nil, errCodeFile
	}
	return syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
}

func unmapFile(data []byte) { syscall.Munmap(data) }

// blockAt is the record entry at data[off:], which the caller has
// checked is inside data and 8-aligned.
func blockAt(data []byte, off uint64) *fileBlock { return (*fileBlock)(unsafe.Pointer(&data[off])) }

// xlatHeadAt is the translation's head at data[off:] (8-aligned).
func xlatHeadAt(data []byte, off uint64) *fileXlatHead {
	return (*fileXlatHead)(unsafe.Pointer(&data[off]))
}

// int32sOf views b (4-aligned) as int32s.
func int32sOf(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

var _ = [1]struct{}{}[unsafe.Sizeof(fileXlatHead{})-fileXlatHeadSize]

// slotsOf views b (a multiple of 4 bytes) as hash slots.
func slotsOf(b []byte) []uint32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// instsOf views b (8-aligned) as instructions, as many as fit.
func instsOf(b []byte) []Inst {
	if len(b) < instSize {
		return nil
	}
	n := len(b) / instSize
	return unsafe.Slice((*Inst)(unsafe.Pointer(&b[0])), n)[:n:n]
}

// instBytes is in's memory, Fn and all.
func instBytes(in *Inst) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(in)), instSize) }

// handlerAddr is where h's function value is (not its code).
func handlerAddr(h Handler) uintptr { return *(*uintptr)(unsafe.Pointer(&h)) }

var _ = [1]struct{}{}[unsafe.Sizeof(fileBlock{})-fileBlockSize]

// fileIdentity is fi's device and inode.
func fileIdentity(fi os.FileInfo) []byte {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return strconv.AppendUint(strconv.AppendUint(nil, st.Dev, 16), st.Ino, 16)
}

// staticHandler reports whether h's function value is in the ttd
// binary's own file-backed pages (a top-level function or a closure
// that captures nothing), not in the heap (a closure made at run time,
// whose address differs from run to run and which the garbage collector
// would not see in a mapped file).
func staticHandler(h Handler) bool {
	p := handlerAddr(h)
	r := imageRange()
	return p >= r[0] && p < r[1]
}

// imageRange spans the executable's own mappings: nothing else is
// mapped between them (the Go heap and other mappings are far above a
// non-PIE binary, far below a PIE one), and the function values of a
// closure made at run time are in the heap. (A test of each mapping was
// 2% of a first run's CPU.)
var imageRange = sync.OnceValue(func() [2]uintptr {
	r := [2]uintptr{^uintptr(0), 0}
	for _, m := range imageRanges() {
		r[0], r[1] = min(r[0], m[0]), max(r[1], m[1])
	}
	return r
})

// imageRanges are the address ranges of the executable's own mappings,
// from /proc/self/maps.
var imageRanges = sync.OnceValue(func() [][2]uintptr {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer f.Close()
	var rs [][2]uintptr
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[5] != exe {
			continue
		}
		lo, hi, ok := strings.Cut(fs[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil {
			rs = append(rs, [2]uintptr{uintptr(a), uintptr(b)})
		}
	}
	return rs
})
