package syscalls

import (
	"encoding/binary"
	"slices"

	"ttd/internal/linux"
)

// Call is one syscall of the recording, decoded.
type Call struct {
	Pos uint64 // the position it completed at
	// Entry is the position it was entered at: Pos, unless the thread
	// blocked in it while others ran (then the position it stopped at).
	Entry    uint64
	Pid, Tid int
	Nr       int
	Name     string
	Raw      [6]uint64
	Ret      int64 // the value left in rax (negative errno on failure)
	// NoReturn is set for exit and exit_group (strace prints "= ?").
	NoReturn bool
	Args     []Arg
	Buffers  []Buffer
	// Text is the call as strace -x prints it, without the pid and the
	// result: `openat(AT_FDCWD, "x", O_RDONLY)`.
	Text []byte
	// RetText is the result as strace prints it: "3", "0x7f00",
	// "-1 ENOENT (No such file or directory)", "?".
	RetText []byte
	// Split is where Text's arguments the kernel writes begin (before
	// the closing parenthesis if none): strace -f prints a call a
	// thread blocked in as "read(3,  <unfinished ...>" at entry and
	// "<... read resumed>"x", 1) = 1" at exit.
	Split int
	// Resumed is set when the call's "<unfinished ...>" line was
	// written (UnfinishedSink): the sink prints the resumed part.
	Resumed bool
	// VDSO is set for a call the vDSO's code made (clock_gettime
	// through libc): Linux's vDSO answers without a syscall, so strace
	// does not show it, and the strace format leaves it out.
	VDSO bool
}

// Errno is the call's error (0 when it succeeded).
func (c *Call) Errno() linux.Errno {
	if c.Ret < 0 && c.Ret >= -linux.MaxErrno && !c.NoReturn {
		return linux.Errno(-c.Ret)
	}
	return 0
}

// ArgType says what an argument is.
type ArgType uint8

// Argument types.
const (
	ArgInt    ArgType = iota // a signed integer
	ArgUint                  // an unsigned integer (sizes, counts)
	ArgPtr                   // an address
	ArgFd                    // a file descriptor (AT_FDCWD included)
	ArgFlags                 // a flag word or an enumeration value (Text has the names)
	ArgMode                  // a file mode (octal)
	ArgString                // a NUL-terminated string (paths): Data
	ArgBuffer                // a byte buffer: Data (see Buffers)
	ArgStruct                // a struct or an array of them: Text, and Buffers
)

var argTypeNames = [...]string{"int", "uint", "ptr", "fd", "flags", "mode", "string", "buffer", "struct"}

func (t ArgType) String() string { return argTypeNames[t] }

// Arg is one decoded argument.
type Arg struct {
	Type  ArgType
	Value uint64 // the raw register
	Text  string // as strace prints it
	Data  []byte // ArgString and ArgBuffer: the bytes (nil if unknown)
}

// Buffer is memory a call read (In) or wrote (Out), in full.
type Buffer struct {
	Arg  int // the argument it belongs to
	Out  bool
	Addr uint64
	Data []byte
	// Missing counts the bytes of Data the re-simulation does not know
	// (left zero in Data).
	Missing int
}

// Memory gives guest memory at the syscall (after it completed: its
// output buffers are filled in).
type Memory interface {
	// Read fills b with the bytes at addr and returns how many of them
	// are unknown (left zero).
	Read(addr uint64, b []byte) (missing int)
}

// decoder decodes one call's arguments into strace's text.
type decoder struct {
	m       Memory
	c       *Call
	strSize int         // -s: bytes of a buffer strace prints (<0: all)
	arena   []byte      // the bytes of the call's buffers
	pollOut []byte      // poll's revents list, for its result
	frame   uint64      // rt_sigreturn: the signal frame it returns from
	entry   entryReader // memory at the call's entry (nil: unknown)
	split   int         // a decoder's own Call.Split (clone), 0: none
	scratch [64]byte
}

// read returns n bytes of memory at addr (from the call's arena).
func (d *decoder) read(addr uint64, n int) ([]byte, int) {
	if n < 0 {
		n = 0
	}
	start := len(d.arena)
	d.arena = slices.Grow(d.arena, n)
	b := d.arena[start : start+n]
	clear(b)
	miss := d.m.Read(addr, b)
	d.arena = d.arena[:start+n]
	return b, miss
}

// u64 and u32 read integers (ok is false when a byte is unknown).
func (d *decoder) u64(addr uint64) (uint64, bool) {
	b := d.scratch[:8]
	clear(b)
	if d.m.Read(addr, b) != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}

// readString returns the NUL-terminated string at addr (up to max
// bytes), and whether it was known and terminated.
func (d *decoder) readString(addr uint64, max int) ([]byte, bool) {
	start := len(d.arena)
	for n := 0; n < max; {
		k := min(len(d.scratch), max-n)
		b := d.scratch[:k]
		clear(b)
		at := addr + uint64(n)
		if d.m.Read(at, b) != 0 {
			// An unknown byte: the string is known if a NUL comes first.
			for i := range b {
				if d.m.Read(at+uint64(i), b[i:i+1]) != 0 {
					d.arena = d.arena[:start]
					return nil, false
				}
				if b[i] == 0 {
					d.arena = append(d.arena, b[:i]...)
					return d.arena[start:], true
				}
			}
		}
		for i, c := range b {
			if c == 0 {
				d.arena = append(d.arena, b[:i]...)
				return d.arena[start:], true
			}
		}
		d.arena = append(d.arena, b...)
		n += k
	}
	return d.arena[start:], false
}
