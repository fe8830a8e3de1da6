package linux

import "strconv"

// struct termios (asm-generic/termbits.h): c_iflag, c_oflag, c_cflag,
// c_lflag (4 bytes each), c_line, c_cc[19]. The tables are in the order
// strace prints the bits.

// TermiosSize is the size of the kernel's struct termios (TCGETS).
const TermiosSize = 36

// TermIflags are c_iflag's bits.
var TermIflags = Flags{
	{0o1, "IGNBRK"}, {0o2, "BRKINT"}, {0o4, "IGNPAR"}, {0o10, "PARMRK"}, {0o20, "INPCK"}, {0o40, "ISTRIP"},
	{0o100, "INLCR"}, {0o200, "IGNCR"}, {0o400, "ICRNL"}, {0o1000, "IUCLC"}, {0o2000, "IXON"},
	{0o4000, "IXANY"}, {0o10000, "IXOFF"}, {0o20000, "IMAXBEL"}, {0o40000, "IUTF8"},
}

// TermOdelays are c_oflag's delay fields: mask, then the name of each
// value, printed before the flags.
var TermOdelays = []struct {
	Mask  uint64
	Names Enum
}{
	{0o400, Enum{{0, "NL0"}, {0o400, "NL1"}}},
	{0o3000, Enum{{0, "CR0"}, {0o1000, "CR1"}, {0o2000, "CR2"}, {0o3000, "CR3"}}},
	{0o14000, Enum{{0, "TAB0"}, {0o4000, "TAB1"}, {0o10000, "TAB2"}, {0o14000, "TAB3"}}},
	{0o20000, Enum{{0, "BS0"}, {0o20000, "BS1"}}},
	{0o40000, Enum{{0, "VT0"}, {0o40000, "VT1"}}},
	{0o100000, Enum{{0, "FF0"}, {0o100000, "FF1"}}},
}

// TermOflags are c_oflag's bits besides the delays.
var TermOflags = Flags{
	{0o1, "OPOST"}, {0o2, "OLCUC"}, {0o4, "ONLCR"}, {0o10, "OCRNL"}, {0o20, "ONOCR"}, {0o40, "ONLRET"},
	{0o100, "OFILL"}, {0o200, "OFDEL"},
}

// TermBauds are c_cflag's speeds (CBAUD).
var TermBauds = Enum{
	{0, "B0"}, {1, "B50"}, {2, "B75"}, {3, "B110"}, {4, "B134"}, {5, "B150"}, {6, "B200"}, {7, "B300"},
	{0o10, "B600"}, {0o11, "B1200"}, {0o12, "B1800"}, {0o13, "B2400"}, {0o14, "B4800"}, {0o15, "B9600"},
	{0o16, "B19200"}, {0o17, "B38400"}, {0o10001, "B57600"}, {0o10002, "B115200"}, {0o10003, "B230400"},
	{0o10004, "B460800"}, {0o10005, "B500000"}, {0o10006, "B576000"}, {0o10007, "B921600"},
	{0o10010, "B1000000"}, {0o10011, "B1152000"}, {0o10012, "B1500000"}, {0o10013, "B2000000"},
	{0o10014, "B2500000"}, {0o10015, "B3000000"}, {0o10016, "B3500000"}, {0o10017, "B4000000"},
	{0o10000, "BOTHER"},
}

// TermCsizes are c_cflag's character sizes (CSIZE).
var TermCsizes = Enum{{0, "CS5"}, {0o20, "CS6"}, {0o40, "CS7"}, {0o60, "CS8"}}

// TermCflags are c_cflag's bits besides the speed and the size.
var TermCflags = Flags{
	{0o100, "CSTOPB"}, {0o200, "CREAD"}, {0o400, "PARENB"}, {0o1000, "PARODD"}, {0o2000, "HUPCL"},
	{0o4000, "CLOCAL"}, {0o10000000000, "CMSPAR"}, {0o20000000000, "CRTSCTS"},
}

// TermLflags are c_lflag's bits.
var TermLflags = Flags{
	{0o1, "ISIG"}, {0o2, "ICANON"}, {0o4, "XCASE"}, {0o10, "ECHO"}, {0o20, "ECHOE"}, {0o40, "ECHOK"},
	{0o100, "ECHONL"}, {0o200, "NOFLSH"}, {0o100000, "IEXTEN"}, {0o1000, "ECHOCTL"}, {0o2000, "ECHOPRT"},
	{0o4000, "ECHOKE"}, {0o10000, "FLUSHO"}, {0o40000, "PENDIN"}, {0o400, "TOSTOP"}, {0o200000, "EXTPROC"},
}

// AppendTermios appends a struct termios as strace prints it without
// -v: {c_iflag=..., c_oflag=..., c_cflag=..., c_lflag=..., ...}.
func AppendTermios(b []byte, iflag, oflag, cflag, lflag uint32) []byte {
	b = TermIflags.Append(append(b, "{c_iflag="...), uint64(iflag))
	b = append(b, ", c_oflag="...)
	o := uint64(oflag)
	for _, d := range TermOdelays {
		n, _ := d.Names.Name(o & d.Mask)
		b = append(append(b, n...), '|')
		o &^= d.Mask
	}
	if o == 0 {
		b = b[:len(b)-1]
	} else {
		b = TermOflags.Append(b, o)
	}
	c := uint64(cflag)
	const cbaud, csize, cibaud = 0o10017, 0o60, 0o10017 << 16
	if n, ok := TermBauds.Name(c & cbaud); ok {
		b = append(append(b, ", c_cflag="...), n...)
	} else {
		b = strconv.AppendUint(append(b, ", c_cflag=0x"...), c&cbaud, 16)
	}
	if ib := (c & cibaud) >> 16; ib != 0 {
		n, _ := TermBauds.Name(ib)
		b = append(append(append(b, '|'), n...), "<<IBSHIFT"...)
	}
	n, _ := TermCsizes.Name(c & csize)
	b = append(append(b, '|'), n...)
	if rest := c &^ (cbaud | csize | cibaud); rest != 0 {
		b = TermCflags.Append(append(b, '|'), rest)
	}
	b = TermLflags.Append(append(b, ", c_lflag="...), uint64(lflag))
	return append(b, ", ...}"...)
}

// FadviseAdvice names fadvise64's advice.
var FadviseAdvice = Enum{{0, "POSIX_FADV_NORMAL"}, {1, "POSIX_FADV_RANDOM"}, {2, "POSIX_FADV_SEQUENTIAL"},
	{3, "POSIX_FADV_WILLNEED"}, {4, "POSIX_FADV_DONTNEED"}, {5, "POSIX_FADV_NOREUSE"}}

// FutexWakeOps and FutexWakeCmps name FUTEX_WAKE_OP's operation (bits
// 28-30 of val3; bit 31 is FUTEX_OP_OPARG_SHIFT) and comparison (bits
// 24-27).
var (
	FutexWakeOps  = Enum{{0, "FUTEX_OP_SET"}, {1, "FUTEX_OP_ADD"}, {2, "FUTEX_OP_OR"}, {3, "FUTEX_OP_ANDN"}, {4, "FUTEX_OP_XOR"}}
	FutexWakeCmps = Enum{{0, "FUTEX_OP_CMP_EQ"}, {1, "FUTEX_OP_CMP_NE"}, {2, "FUTEX_OP_CMP_LT"}, {3, "FUTEX_OP_CMP_LE"},
		{4, "FUTEX_OP_CMP_GT"}, {5, "FUTEX_OP_CMP_GE"}}
)

// AppendFutexWakeOp appends FUTEX_WAKE_OP's encoded operation as strace
// prints it: FUTEX_OP_SET<<28|0x1<<12|FUTEX_OP_CMP_GT<<24|0.
func AppendFutexWakeOp(b []byte, v uint32) []byte {
	if v>>31 != 0 {
		b = append(b, "FUTEX_OP_OPARG_SHIFT<<28|"...)
	}
	b = FutexWakeOps.Append(b, uint64(v>>28&7), "FUTEX_OP_")
	b = appendCHex(append(b, "<<28|"...), uint64(v>>12&0xfff))
	b = FutexWakeCmps.Append(append(b, "<<12|"...), uint64(v>>24&0xf), "FUTEX_OP_CMP_")
	return appendCHex(append(b, "<<24|"...), uint64(v&0xfff))
}

// appendCHex appends v as C's %#x: 0, 0x1...
func appendCHex(b []byte, v uint64) []byte {
	if v == 0 {
		return append(b, '0')
	}
	return strconv.AppendUint(append(b, "0x"...), v, 16)
}
