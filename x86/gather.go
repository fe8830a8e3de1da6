package x86

// The AVX2 gathers: vpgatherdd/dq/qd/qq and vgatherdps/dpd/qps/qpd
// (VEX.66.0F38 90-93). The memory operand is VSIB: the SIB index names
// an XMM/YMM register whose dword (90, 92) or qword (91, 93) lanes are
// the indexes; VEX.W selects dword or qword data; VEX.vvvv is the mask,
// whose lanes' sign bits select the elements to load. Elements are
// loaded from the lowest, each clearing its mask lane as it completes
// (a masked-off one too),
// so that a fault leaves the lower elements done and the instruction can
// run again (Intel SDM vol. 2, VPGATHERDD); at the end the whole mask is
// zero and the destination's lanes past the elements are zero. The
// same register as two of destination, mask and index is #UD.

import "encoding/binary"

// ymmBytes and fromYmmBytes convert between a YMM value and its bytes.
func ymmBytes(lo, hi XMM) (b [32]byte) {
	binary.LittleEndian.PutUint64(b[0:], lo[0])
	binary.LittleEndian.PutUint64(b[8:], lo[1])
	binary.LittleEndian.PutUint64(b[16:], hi[0])
	binary.LittleEndian.PutUint64(b[24:], hi[1])
	return b
}

func fromYmmBytes(b *[32]byte) (lo, hi XMM) {
	le := binary.LittleEndian
	return XMM{le.Uint64(b[0:]), le.Uint64(b[8:])}, XMM{le.Uint64(b[16:]), le.Uint64(b[24:])}
}

// vgather builds a gather whose indexes are qwords (qidx) or dwords.
func vgather(qidx bool) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		o := &in.Args[1]
		d, m := in.Args[0].Reg&15, vexV(in)
		if o.Kind != KMem || o.Index == NoReg || d == m || d == o.Index || m == o.Index {
			return func(c *CPU, in *Inst) { illegal(c, in) }
		}
		if o.A32 {
			return nil // 32-bit VSIB addresses: not implemented
		}
		esz := 4 // data bytes
		if vexW(in) {
			esz = 8
		}
		isz := 4 // index bytes
		if qidx {
			isz = 8
		}
		vec := 16 // bytes of the wider of data and index vectors
		if vexL(in) {
			vec = 32
		}
		n := vec / max(esz, isz)
		in.MemSize = uint8(esz)
		base := *o
		base.Index = NoReg
		return func(c *CPU, in *Inst) {
			x := in.Args[1].Index & 15
			dst := ymmBytes(c.X[d], c.YH[d])
			mask := ymmBytes(c.X[m], c.YH[m])
			idx := ymmBytes(c.X[x], c.YH[x])
			a0 := c.ea(&base)
			for j := 0; j < n; j++ {
				if mask[j*esz+esz-1]&0x80 == 0 {
					clear(mask[j*esz : j*esz+esz]) // masked off: done too
					continue
				}
				var ix int64
				if isz == 4 {
					ix = int64(int32(binary.LittleEndian.Uint32(idx[j*4:])))
				} else {
					ix = int64(binary.LittleEndian.Uint64(idx[j*8:]))
				}
				v := c.load(a0+uint64(ix)<<base.Scale, esz)
				for k := 0; k < esz; k++ {
					dst[j*esz+k] = byte(v >> (8 * k))
					mask[j*esz+k] = 0
				}
				c.X[d], c.YH[d] = fromYmmBytes(&dst)
				c.X[m], c.YH[m] = fromYmmBytes(&mask)
			}
			clear(dst[n*esz:])
			c.X[d], c.YH[d] = fromYmmBytes(&dst)
			c.X[m], c.YH[m] = XMM{}, XMM{}
		}
	}
}

func init() {
	for _, g := range []struct {
		op   byte
		name string
		qidx bool
	}{{0x90, "VPGATHERDD/DQ", false}, {0x91, "VPGATHERQD/QQ", true}, {0x92, "VGATHERDPS/DPD", false}, {0x93, "VGATHERQPS/QPD", true}} {
		defVex(2, 1, g.op, g.name, FeatAVX2, false, vgather(g.qidx))
		vexOps[vexKey(2, 1, g.op)].vsib = true
	}
}
