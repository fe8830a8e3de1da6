package syscalls

import (
	"encoding/binary"
	"strconv"

	"ttd/internal/linux"
)

// capget's and capset's structs, as strace prints them:
// {version=_LINUX_CAPABILITY_VERSION_3, pid=0} and {effective=1<<CAP_CHOWN|...,
// permitted=..., inheritable=0}.

// capHeader appends argument i, a struct __user_cap_header_struct.
func (d *decoder) capHeader(b []byte, i int) []byte {
	v := d.c.Raw[i]
	if v == 0 {
		return append(b, "NULL"...)
	}
	m, miss := d.buffer(i, false, v, 8)
	if miss > 0 {
		return appendHex(b, v)
	}
	b = linux.CapVersions.Append(append(b, "{version="...), uint64(binary.LittleEndian.Uint32(m)), "_LINUX_CAPABILITY_VERSION_")
	return append(strconv.AppendInt(append(b, ", pid="...), int64(int32(binary.LittleEndian.Uint32(m[4:]))), 10), '}')
}

// capData appends argument i, the struct __user_cap_data_struct array
// (one for version 1, two for the others) that capget fills and capset
// reads.
func (d *decoder) capData(b []byte, i int) []byte {
	c := d.c
	v := c.Raw[i]
	if v == 0 {
		return append(b, "NULL"...)
	}
	out := c.Nr == linux.SysCapget
	if out && d.failed() {
		return appendHex(b, v)
	}
	words := 2
	if h, miss := d.read(c.Raw[0], 4); miss == 0 && binary.LittleEndian.Uint32(h) == linux.CapVersion1 {
		words = 1
	}
	m, miss := d.buffer(i, out, v, 12*words)
	if miss > 0 {
		return appendHex(b, v)
	}
	for k, name := range []string{"{effective=", ", permitted=", ", inheritable="} {
		var set uint64
		for w := range words {
			set |= uint64(binary.LittleEndian.Uint32(m[12*w+4*k:])) << (32 * w)
		}
		b = appendCapSet(append(b, name...), set)
	}
	return append(b, '}')
}

// appendCapSet appends a capability set: "1<<CAP_CHOWN|1<<CAP_KILL", or 0.
func appendCapSet(b []byte, set uint64) []byte {
	if set == 0 {
		return append(b, '0')
	}
	first := true
	for cp := range 64 {
		if set>>cp&1 == 0 {
			continue
		}
		if !first {
			b = append(b, '|')
		}
		first = false
		b = append(b, "1<<"...)
		if n, ok := linux.Capabilities.Name(uint64(cp)); ok {
			b = append(b, n...)
		} else {
			b = strconv.AppendInt(b, int64(cp), 10)
		}
	}
	return b
}
