package syscalls

import (
	"strconv"

	"ttd/internal/linux"
)

// The decoders of socket options (setsockopt, getsockopt) and of
// socket's protocol, as strace prints them.

// sockArg appends an argument of the kinds this file decodes; ok is
// false for any other kind.
func (d *decoder) sockArg(b []byte, i int, sp arg) (_ []byte, ty ArgType, ok bool) {
	c := d.c
	v := c.Raw[i]
	switch sp.k {
	case kSockProto:
		switch c.Raw[0] {
		case 2, 10: // AF_INET, AF_INET6
			return linux.IPProtocols.Append(b, v, "IPPROTO_"), ArgFlags, true
		case 16: // AF_NETLINK
			return linux.NetlinkProtocols.Append(b, v, "NETLINK_"), ArgFlags, true
		}
		return strconv.AppendInt(b, int64(int32(v)), 10), ArgInt, true
	case kSockLevel:
		if n, known := linux.SockLevels.Name(v); known {
			return append(b, n...), ArgFlags, true
		}
		b = appendHex(b, v)
		return append(b, " /* SOL_?? */"...), ArgFlags, true
	case kSockOpt:
		if t, prefix := sockOptions(c.Raw[1]); t != nil {
			return t.Append(b, v, prefix), ArgFlags, true
		}
		return strconv.AppendUint(b, uint64(uint32(v)), 10), ArgInt, true
	case kSockoptIn, kSockoptOut:
		return d.sockoptValue(b, i, sp.k == kSockoptOut), ArgStruct, true
	case kSocklenOut:
		if v == 0 {
			return append(b, "NULL"...), ArgPtr, true
		}
		m, miss := d.buffer(i, !d.failed(), v, 4)
		if miss > 0 {
			return appendHex(b, v), ArgPtr, true
		}
		return append(strconv.AppendUint(append(b, '['), uint64(le32(m, 0)), 10), ']'), ArgStruct, true
	}
	return b, 0, false
}

// sockOptions returns the option names of a level.
func sockOptions(level uint64) (linux.Enum, string) {
	switch level {
	case linux.SOL_SOCKET:
		return linux.SocketOptions, "SO_"
	case linux.SOL_TCP:
		return linux.TCPOptions, "TCP_"
	case linux.SOL_IP:
		return linux.IPOptions, "IP_"
	case linux.SOL_IPV6:
		return linux.IPv6Options, "IPV6_"
	case linux.SOL_NETLINK:
		return linux.NetlinkOptions, "NETLINK_"
	}
	return nil, ""
}

// sockoptValue appends an option's value: setsockopt's as given (its
// length in argument 4), getsockopt's as the kernel wrote it (its length
// in the socklen_t argument 4 points to). An int is "[1]", struct linger
// and struct ucred are shown by field, other values as their bytes.
func (d *decoder) sockoptValue(b []byte, i int, out bool) []byte {
	c := d.c
	v := c.Raw[i]
	if v == 0 {
		return append(b, "NULL"...)
	}
	if out && d.failed() {
		return appendHex(b, v)
	}
	n := int64(c.Raw[4])
	if out {
		l, miss := d.read(c.Raw[4], 4)
		if miss > 0 {
			return appendHex(b, v)
		}
		n = int64(le32(l, 0))
	}
	if n <= 0 || n > 1<<16 {
		return appendHex(b, v)
	}
	level, name := c.Raw[1], c.Raw[2]
	linger := level == linux.SOL_SOCKET && name == linux.SO_LINGER
	cred := level == linux.SOL_SOCKET && name == linux.SO_PEERCRED
	switch {
	case linger && out && n >= 4 && n < 8:
		// The kernel wrote l_onoff alone.
		if m, miss := d.buffer(i, out, v, 4); miss == 0 {
			return append(strconv.AppendInt(append(b, "{l_onoff="...), int64(int32(le32(m, 0))), 10), '}')
		}
		return appendHex(b, v)
	case linger && n < 8, cred && n < 12:
		return appendHex(b, v)
	case linger:
		n = 8 // struct linger
	case cred:
		n = 12 // struct ucred
	case intOption(level, name):
		if n < 4 {
			return appendHex(b, v)
		}
		n = 4 // the kernel reads (and writes) one int of a longer value
	}
	m, miss := d.buffer(i, out, v, int(n))
	if miss > 0 {
		return appendHex(b, v)
	}
	switch {
	case linger:
		b = strconv.AppendInt(append(b, "{l_onoff="...), int64(int32(le32(m, 0))), 10)
		b = strconv.AppendInt(append(b, ", l_linger="...), int64(int32(le32(m, 4))), 10)
		return append(b, '}')
	case cred:
		b = strconv.AppendInt(append(b, "{pid="...), int64(int32(le32(m, 0))), 10)
		b = strconv.AppendUint(append(b, ", uid="...), uint64(le32(m, 4)), 10)
		b = strconv.AppendUint(append(b, ", gid="...), uint64(le32(m, 8)), 10)
		return append(b, '}')
	case n == 4:
		return append(strconv.AppendInt(append(b, '['), int64(int32(le32(m, 0))), 10), ']')
	}
	return appendQuoted(b, m, d.strSize)
}

// intOption reports whether an option's value is an int (shorter
// lengths strace prints as an address, longer ones by their first
// int): the named options of the
// levels ttd knows, less those whose values are structures or strings.
func intOption(level, name uint64) bool {
	t, _ := sockOptions(level)
	if _, known := t.Name(name); !known {
		return false
	}
	switch {
	case level == linux.SOL_SOCKET:
		switch name {
		case 20, 21, 25, 26, 28, 29, 31, 35, 37, 50, 51, 52, 55, 59, 61, 63, 64, 65, 66, 67:
			// timeouts, a device name, filters, names, timestamps
			return false
		}
	case level == linux.SOL_TCP:
		switch name {
		case 11, 13, 14, 31, 33, 35: // TCP_INFO, TCP_CONGESTION, TCP_MD5SIG, TCP_ULP, keys, zerocopy
			return false
		}
	case level == linux.SOL_IP:
		switch name {
		case 4, 7, 8, 32, 35, 36: // options, pktinfo, multicast structures
			return false
		}
	}
	return true
}
