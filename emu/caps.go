package emu

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"ttd/internal/linux"
)

// Capabilities are the guest's own: each thread has its effective,
// permitted and inheritable sets, its bounding and ambient sets, starting
// as ttd's (the host's) and changed by capset, prctl's PR_CAPBSET_DROP
// and PR_CAP_AMBIENT, and execve as Linux's rules change them for a
// program without file capabilities. ttd's own capabilities never
// change: a guest that drops one keeps ttd (and the other guests) able
// to use it, as a process does not take its siblings' away. What a
// capability permits is still the host's to decide.

// capState is a thread's capability sets, a bit per capability.
type capState struct {
	eff, perm, inh, bset, amb uint64
	// securebits are PR_SET_SECUREBITS's, less SECBIT_KEEP_CAPS,
	// which is threadPrctl.keepcaps.
	securebits uint64
}

// Linux's capability ABI (include/uapi/linux/capability.h).
const (
	capSetpcap        = 8
	secAllBits        = 0x55 // SECBIT_NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE
	secAllLocks       = secAllBits << 1
	secNoRoot         = 1 << 0
	secKeepCaps       = 1 << 4
	secKeepCapsLocked = 1 << 5
	secNoAmbRaise     = 1 << 6
	prCapAmbient      = 47
	prCapAmbIsSet     = 1
	prCapAmbRaise     = 2
	prCapAmbLower     = 3
	prCapAmbClearAll  = 4
)

// capValid is the mask of the capabilities the host's kernel knows.
var capValid = sync.OnceValue(func() uint64 {
	last := 40 // CAP_CHECKPOINT_RESTORE, Linux 5.9
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 && n < 63 {
			last = n
		}
	}
	return 1<<(last+1) - 1
})

// hostCaps are ttd's own sets, which the first guest thread starts with.
var hostCaps = sync.OnceValue(func() capState {
	var c capState
	hdr := unix.CapUserHeader{Version: linux.CapVersion3}
	var d [2]unix.CapUserData
	if unix.Capget(&hdr, &d[0]) == nil {
		if r, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0); err == nil {
			c.securebits = uint64(r) &^ secKeepCaps
		}
		c.eff = uint64(d[1].Effective)<<32 | uint64(d[0].Effective)
		c.perm = uint64(d[1].Permitted)<<32 | uint64(d[0].Permitted)
		c.inh = uint64(d[1].Inheritable)<<32 | uint64(d[0].Inheritable)
	}
	for cp := 0; cp < 64 && capValid()>>cp&1 != 0; cp++ {
		if r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(cp), 0, 0, 0); err == nil && r == 1 {
			c.bset |= 1 << cp
		}
		if r, err := unix.PrctlRetInt(prCapAmbient, prCapAmbIsSet, uintptr(cp), 0, 0); err == nil && r == 1 {
			c.amb |= 1 << cp
		}
	}
	return c
})

// capWords reads a capability header's version at hdr: the number of
// 32-bit words per set it asks for. An unknown version is answered with
// Linux's preferred one, written back, and EINVAL.
func (t *Thread) capWords(hdr uint64) (int, error) {
	v, err := t.readU32(hdr)
	if err != nil {
		return 0, err
	}
	switch v {
	case linux.CapVersion1:
		return 1, nil
	case linux.CapVersion2, linux.CapVersion3:
		return 2, nil
	}
	if err := t.writeU32(hdr, linux.CapVersion3); err != nil {
		return 0, err
	}
	return 0, unix.EINVAL
}

// Capget implements Linux syscall capget(2).
func Capget(t *Thread, a *SyscallArgs) (uint64, error) {
	words, err := t.capWords(a.A[0])
	if a.A[1] == 0 {
		if err == unix.EINVAL {
			return 0, nil // a caller asking for the version
		}
		return 0, err
	}
	if err != nil {
		return 0, err
	}
	pid, err := t.readU32(a.A[0] + 4)
	if err != nil {
		return 0, err
	}
	target := t
	if pid := int32(pid); pid < 0 {
		return 0, unix.EINVAL
	} else if pid != 0 && int(pid) != t.Tid {
		if target = t.P.m.threadByID(int(pid)); target == nil {
			return 0, unix.ESRCH
		}
	}
	c := target.prctl.caps
	b := make([]byte, 0, 24)
	for i := range words {
		for _, set := range []uint64{c.eff, c.perm, c.inh} {
			b = binary.LittleEndian.AppendUint32(b, uint32(set>>(32*i)))
		}
	}
	return 0, t.CopyOut(a.A[1], b)
}

// Capset implements Linux syscall capset(2): a thread changes only its
// own sets, within what Linux allows.
func Capset(t *Thread, a *SyscallArgs) (uint64, error) {
	words, err := t.capWords(a.A[0])
	if err != nil {
		return 0, err
	}
	pid, err := t.readU32(a.A[0] + 4)
	if err != nil {
		return 0, err
	}
	if pid != 0 && int(int32(pid)) != t.Tid {
		return 0, unix.EPERM
	}
	b := make([]byte, 12*words)
	if err := t.CopyIn(a.A[1], b); err != nil {
		return 0, err
	}
	var set [3]uint64 // effective, permitted, inheritable
	for i := range words {
		for k := range set {
			set[k] |= uint64(binary.LittleEndian.Uint32(b[12*i+4*k:])) << (32 * i)
		}
	}
	eff, perm, inh := set[0]&capValid(), set[1]&capValid(), set[2]&capValid()
	old := &t.prctl.caps
	if old.eff>>capSetpcap&1 == 0 && inh&^(old.inh|old.perm) != 0 ||
		inh&^(old.inh|old.bset) != 0 || perm&^old.perm != 0 || eff&^perm != 0 {
		return 0, unix.EPERM
	}
	old.eff, old.perm, old.inh = eff, perm, inh
	old.amb &= perm & inh
	return 0, nil
}

// capPrctl answers prctl's capability options; ok is false for others.
func (t *Thread) capPrctl(a *SyscallArgs) (r uint64, err error, ok bool) {
	c := &t.prctl.caps
	valid := func(cp uint64) bool { return cp < 64 && capValid()>>cp&1 != 0 }
	switch a.Int(0) {
	case unix.PR_GET_SECUREBITS:
		r := c.securebits
		if t.prctl.keepcaps {
			r |= secKeepCaps
		}
		return r, nil, true
	case unix.PR_SET_SECUREBITS:
		old, bits := c.securebits, a.A[1]
		if t.prctl.keepcaps {
			old |= secKeepCaps
		}
		if (old&secAllLocks)>>1&(old^bits) != 0 || old&secAllLocks&^bits != 0 || bits&^(secAllBits|secAllLocks) != 0 ||
			c.eff>>capSetpcap&1 == 0 {
			return 0, unix.EPERM, true
		}
		c.securebits = bits &^ secKeepCaps
		t.prctl.keepcaps = bits&secKeepCaps != 0
		return 0, nil, true
	case unix.PR_CAPBSET_READ:
		if !valid(a.A[1]) {
			return 0, unix.EINVAL, true
		}
		return c.bset >> a.A[1] & 1, nil, true
	case unix.PR_CAPBSET_DROP:
		if c.eff>>capSetpcap&1 == 0 {
			return 0, unix.EPERM, true
		}
		if !valid(a.A[1]) {
			return 0, unix.EINVAL, true
		}
		c.bset &^= 1 << a.A[1]
		return 0, nil, true
	case prCapAmbient:
		if a.A[1] == prCapAmbClearAll {
			if a.A[2]|a.A[3]|a.A[4] != 0 {
				return 0, unix.EINVAL, true
			}
			c.amb = 0
			return 0, nil, true
		}
		if a.A[3]|a.A[4] != 0 || !valid(a.A[2]) {
			return 0, unix.EINVAL, true
		}
		bit := uint64(1) << a.A[2]
		switch a.A[1] {
		case prCapAmbIsSet:
			return c.amb >> a.A[2] & 1, nil, true
		case prCapAmbRaise:
			if c.perm&bit == 0 || c.inh&bit == 0 || c.securebits&secNoAmbRaise != 0 {
				return 0, unix.EPERM, true
			}
			c.amb |= bit
			return 0, nil, true
		case prCapAmbLower:
			c.amb &^= bit
			return 0, nil, true
		}
		return 0, unix.EINVAL, true
	}
	return 0, nil, false
}

// execCaps changes the sets as execve of a program without file
// capabilities does: root (a real or effective uid of 0, unless
// SECBIT_NOROOT) gets its bounding and inheritable sets (and its
// ambient), every capability effective; anyone else keeps the ambient
// set only.
func (c *capState) execCaps(root bool) {
	if root && c.securebits&secNoRoot == 0 {
		c.perm = (c.bset | c.inh | c.amb) & capValid()
		c.eff = c.perm
		return
	}
	c.perm, c.eff = c.amb, c.amb
}
