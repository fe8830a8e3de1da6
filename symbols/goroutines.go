package symbols

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// Goroutine is one goroutine of a Go program, read from runtime.allgs
// with the offsets of the runtime's DWARF types (runtime.g, gobuf, m), as
// delve reads them.
type Goroutine struct {
	ID     int64
	Addr   uint64 // the runtime.g
	Status uint32 // g.atomicstatus without the _Gscan bit
	// PC, SP and BP are the registers saved in g.sched: where a goroutine
	// that is not running resumes.
	PC, SP, BP uint64
	// StartPC is the function the goroutine was started with (go f()),
	// GoPC the pc of the go statement.
	StartPC, GoPC uint64
	// StackLo and StackHi bound the goroutine's stack.
	StackLo, StackHi uint64
	// M is the runtime.m the goroutine is bound to (0: none); ThreadID is
	// that m's OS thread id (m.procid) and Current reports m.curg == g.
	M        uint64
	ThreadID int
	Current  bool
}

// Goroutine statuses (runtime/runtime2.go).
const (
	GoroutineIdle     = 0
	GoroutineRunnable = 1
	GoroutineRunning  = 2
	GoroutineSyscall  = 3
	GoroutineWaiting  = 4
	GoroutineDead     = 6
	goroutineScan     = 0x1000
)

// maxGoroutines bounds what Goroutines reads of allgs.
const maxGoroutines = 100000

// ErrNotGo is returned by Goroutines for a program without a Go runtime.
var ErrNotGo = errors.New("not a Go program")

// IsGo reports whether a loaded module is a Go program (has
// runtime.allgs and Go compile units).
func (t *Table) IsGo() bool {
	_, _, ok := t.allgs()
	return ok
}

func (t *Table) allgs() (*image, *globalVar, bool) {
	if t == nil {
		return nil, nil, false
	}
	for _, img := range t.imageList() {
		if g := img.globals["runtime.allgs"]; g != nil && img.isGo {
			return img, g, true
		}
	}
	return nil, nil, false
}

// Goroutines lists the goroutines of runtime.allgs that are not dead, in
// allgs order, as mem shows them. It returns ErrNotGo for a program
// without a Go runtime; before the runtime has started, the list is
// empty.
func (t *Table) Goroutines(mem MemReader) ([]Goroutine, error) {
	img, gv, ok := t.allgs()
	if !ok {
		return nil, ErrNotGo
	}
	c := &evalCtx{t: t, img: img, mem: mem, isGo: true}
	typ, err := img.readType(gv.typeOff)
	if err != nil {
		return nil, err
	}
	st, ok := resolve(typ).(*godwarf.SliceType)
	if !ok {
		return nil, fmt.Errorf("runtime.allgs is a %T", resolve(typ))
	}
	pt, ok := resolve(st.ElemType).(*godwarf.PtrType)
	if !ok {
		return nil, errors.New("runtime.allgs: elements are not pointers")
	}
	gt, ok := resolve(pt.Type).(*godwarf.StructType)
	if !ok {
		return nil, errors.New("runtime.g is not a struct")
	}
	n, _, arr, err := c.sliceHeader(value{typ: typ, addr: gv.addr, inMem: true})
	if err != nil {
		return nil, err
	}
	if n == 0 || arr == 0 {
		return nil, nil
	}
	n = min(n, maxGoroutines)
	b, known, err := c.read(arr, int(n)*8)
	if err != nil {
		return nil, err
	}
	var out []Goroutine
	for i := range int(n) {
		if known != nil && !allTrue(known[i*8:i*8+8]) {
			continue
		}
		addr := binary.LittleEndian.Uint64(b[i*8:])
		if addr == 0 {
			continue
		}
		g, err := c.goroutine(value{typ: gt, addr: addr, inMem: true}, gt)
		if err != nil || g.Status == GoroutineDead {
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

func allTrue(k []bool) bool {
	for _, v := range k {
		if !v {
			return false
		}
	}
	return true
}

// path reads the integer at a dotted field path of a struct value
// ("sched.pc"); a struct-typed leaf (atomic.Uint32) reads its last field.
func (c *evalCtx) path(v value, st *godwarf.StructType, path string) (uint64, error) {
	var typ godwarf.Type = st
	for name := range strings.SplitSeq(path, ".") {
		s, ok := resolve(typ).(*godwarf.StructType)
		if !ok {
			return 0, fmt.Errorf("%s: not a struct", path)
		}
		f := field(s, name)
		if f == nil {
			return 0, fmt.Errorf("runtime type %s has no field %s", s.StructName, name)
		}
		v, typ = c.sub(v, f.ByteOffset, f.Type), f.Type
	}
	for range 4 {
		s, ok := resolve(typ).(*godwarf.StructType)
		if !ok {
			break
		}
		if len(s.Field) == 0 {
			return 0, fmt.Errorf("%s: empty struct", path)
		}
		f := s.Field[len(s.Field)-1] // an atomic wrapper's value
		v, typ = c.sub(v, f.ByteOffset, f.Type), f.Type
	}
	return c.uint(v)
}

// goroutine reads one runtime.g.
func (c *evalCtx) goroutine(v value, gt *godwarf.StructType) (Goroutine, error) {
	c.load(&v)
	if v.err != nil {
		return Goroutine{}, v.err
	}
	g := Goroutine{Addr: v.addr}
	id, err := c.path(v, gt, "goid")
	if err != nil {
		return g, err
	}
	g.ID = int64(id)
	status, err := c.path(v, gt, "atomicstatus")
	if err != nil {
		return g, err
	}
	g.Status = uint32(status) &^ goroutineScan
	for _, p := range []struct {
		path string
		dst  *uint64
	}{{"sched.pc", &g.PC}, {"sched.sp", &g.SP}, {"sched.bp", &g.BP}, {"startpc", &g.StartPC},
		{"gopc", &g.GoPC}, {"stack.lo", &g.StackLo}, {"stack.hi", &g.StackHi}, {"m", &g.M}} {
		if x, err := c.path(v, gt, p.path); err == nil {
			*p.dst = x
		}
	}
	if g.M != 0 {
		if f := field(gt, "m"); f != nil {
			if mp, ok := resolve(f.Type).(*godwarf.PtrType); ok {
				if mt, ok := resolve(mp.Type).(*godwarf.StructType); ok {
					m := value{typ: mt, addr: g.M, inMem: true}
					if curg, err := c.path(m, mt, "curg"); err == nil {
						g.Current = curg == g.Addr
					}
					if tid, err := c.path(m, mt, "procid"); err == nil {
						g.ThreadID = int(tid)
					}
				}
			}
		}
	}
	return g, nil
}
