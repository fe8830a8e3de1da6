package syscalls

import "strconv"

const hexDigits = "0123456789abcdef"

// appendQuoted appends b as strace -x prints a string: the first max
// bytes (all when max < 0) in double quotes, every byte as \xNN when one
// of them is neither printable ASCII nor \t \n \v \f \r, then "..." when
// b was cut. Such a string is called "non-ASCII" in strace's manual.
func appendQuoted(dst, b []byte, max int) []byte {
	cut := false
	if max >= 0 && len(b) > max {
		b, cut = b[:max], true
	}
	hex := false
	for _, c := range b {
		if c >= 0x7f || c < ' ' && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' {
			hex = true
			break
		}
	}
	dst = append(dst, '"')
	for _, c := range b {
		if hex {
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			continue
		}
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\v':
			dst = append(dst, '\\', 'v')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, c)
		}
	}
	dst = append(dst, '"')
	if cut {
		dst = append(dst, "..."...)
	}
	return dst
}

// appendPtr appends an address as strace prints a pointer: NULL or 0x...
func appendPtr(dst []byte, v uint64) []byte {
	if v == 0 {
		return append(dst, "NULL"...)
	}
	return appendHex(dst, v)
}

func appendHex(dst []byte, v uint64) []byte {
	if v == 0 {
		return append(dst, '0')
	}
	return strconv.AppendUint(append(dst, "0x"...), v, 16)
}
