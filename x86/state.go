package x86

import (
	"encoding/binary"
	"errors"

	"ttd/x86/f80"
)

// StateSize is the size of a marshalled CPU state.
const StateSize = 16*8 + 8 + 8 + 8 + 8 + 8 + 16*16 + 4 + 8*10 + 1 + 1 + 2 + 2 + 2 + 8 + 8

// StateSizeAVX is the size of a marshalled state whose YMM registers
// upper halves are not all zero (they follow the rest).
const StateSizeAVX = StateSize + 16*16

// ErrBadState is returned for a register blob of the wrong size.
var ErrBadState = errors.New("x86: bad CPU state blob")

// MarshalState appends the architectural state (general registers, rip,
// rflags, fs/gs bases, icount, SSE and x87) to b, in a fixed little-endian
// layout of StateSize bytes. Checkpoints store it; UnmarshalState restores it.
func (c *CPU) MarshalState(b []byte) []byte {
	le := binary.LittleEndian
	for _, r := range c.R {
		b = le.AppendUint64(b, r)
	}
	b = le.AppendUint64(b, c.RIP)
	b = le.AppendUint64(b, c.Rflags())
	b = le.AppendUint64(b, c.FSBase)
	b = le.AppendUint64(b, c.GSBase)
	b = le.AppendUint64(b, c.Icount)
	for _, x := range c.X {
		b = le.AppendUint64(b, x[0])
		b = le.AppendUint64(b, x[1])
	}
	b = le.AppendUint32(b, c.MXCSR)
	var r [10]byte
	for _, v := range c.FPU.Regs {
		v.Bytes(r[:])
		b = append(b, r[:]...)
	}
	b = append(b, c.FPU.Top, c.FPU.Tag)
	b = le.AppendUint16(b, c.FPU.CW)
	b = le.AppendUint16(b, c.FPU.SW)
	b = le.AppendUint16(b, c.FPU.FOP)
	b = le.AppendUint64(b, c.FPU.FIP)
	b = le.AppendUint64(b, c.FPU.FDP)
	if c.YH != ([16]XMM{}) {
		// The upper halves of the YMM registers, only when one is
		// not zero: states without AVX keep their size.
		for _, x := range c.YH {
			b = le.AppendUint64(b, x[0])
			b = le.AppendUint64(b, x[1])
		}
	}
	return b
}

// UnmarshalState restores a state written by MarshalState.
func (c *CPU) UnmarshalState(b []byte) error {
	if len(b) != StateSize && len(b) != StateSizeAVX {
		return ErrBadState
	}
	avx := len(b) == StateSizeAVX
	le := binary.LittleEndian
	u64 := func() uint64 { v := le.Uint64(b); b = b[8:]; return v }
	for i := range c.R {
		c.R[i] = u64()
	}
	c.RIP = u64()
	fl := u64()
	c.flags = 0
	c.SetRflags(fl)
	c.flags = fl | 2
	c.FSBase = u64()
	c.GSBase = u64()
	c.Icount = u64()
	for i := range c.X {
		c.X[i][0] = u64()
		c.X[i][1] = u64()
	}
	c.MXCSR = le.Uint32(b)
	b = b[4:]
	for i := range c.FPU.Regs {
		c.FPU.Regs[i] = f80.FromBytes(b[:10])
		b = b[10:]
	}
	c.FPU.Top, c.FPU.Tag = b[0]&7, b[1]
	b = b[2:]
	c.FPU.CW = le.Uint16(b)
	c.FPU.SW = le.Uint16(b[2:])
	c.FPU.FOP = le.Uint16(b[4:])
	b = b[6:]
	c.FPU.FIP = u64()
	c.FPU.FDP = u64()
	c.YH = [16]XMM{}
	if avx {
		for i := range c.YH {
			c.YH[i][0] = u64()
			c.YH[i][1] = u64()
		}
	}
	return nil
}
