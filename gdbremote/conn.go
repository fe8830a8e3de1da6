package gdbremote

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// MaxPacket bounds the payload of one incoming packet (after
// unescaping); qSupported advertises it.
const MaxPacket = 0x4000

// Interrupt is the byte a client sends to interrupt a running target
// (Ctrl-C), outside any packet.
const Interrupt = 0x03

// ErrPacket is wrapped by the errors of malformed packets.
var ErrPacket = errors.New("malformed packet")

// Conn frames gdb remote protocol packets on a byte stream:
// "$payload#xx", with '}' escapes, run-length encoding and
// acknowledgements ('+' and '-') until no-ack mode is on. It knows
// nothing of what the packets mean.
type Conn struct {
	r     *bufio.Reader
	w     *bufio.Writer
	noAck atomic.Bool
	// wmu serialises writes: Read acknowledges packets (on the reading
	// goroutine) while replies are written.
	wmu  sync.Mutex
	last []byte // the last packet sent, for a '-' asking to resend it
}

// NewConn frames packets on rw.
func NewConn(r io.Reader, w io.Writer) *Conn {
	return &Conn{r: bufio.NewReaderSize(r, 2*MaxPacket+16), w: bufio.NewWriter(w)}
}

// SetNoAck turns acknowledgements off (after QStartNoAckMode is
// acknowledged).
func (c *Conn) SetNoAck(on bool) { c.noAck.Store(on) }

// Read returns the next packet's payload, unescaped, or interrupt true
// for a Ctrl-C. A packet with a bad checksum is answered with '-' (in
// ack mode) and skipped; a packet that is too long or badly escaped is
// an error wrapping ErrPacket, after which reading can go on.
func (c *Conn) Read() (payload []byte, interrupt bool, err error) {
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			return nil, false, err
		}
		switch b {
		case Interrupt:
			return nil, true, nil
		case '-':
			if !c.noAck.Load() {
				if err := c.resend(); err != nil {
					return nil, false, err
				}
			}
			continue
		case '$':
		default:
			continue // '+' and noise between packets
		}
		raw, err := c.r.ReadSlice('#')
		if err == bufio.ErrBufferFull {
			// Skip the rest of a packet longer than the buffer.
			for err == bufio.ErrBufferFull {
				_, err = c.r.ReadSlice('#')
			}
			if err == nil {
				_, err = io.ReadFull(c.r, make([]byte, 2))
			}
			if err != nil {
				return nil, false, err
			}
			return nil, false, fmt.Errorf("%w: longer than %d bytes", ErrPacket, c.r.Size())
		}
		if err != nil {
			return nil, false, err
		}
		body := raw[:len(raw)-1]
		var sum [2]byte
		if _, err := io.ReadFull(c.r, sum[:]); err != nil {
			return nil, false, err
		}
		want, perr := strconv.ParseUint(string(sum[:]), 16, 8)
		if !c.noAck.Load() {
			if perr != nil || byte(want) != checksum(body) {
				if err := c.writeAck('-'); err != nil {
					return nil, false, err
				}
				continue
			}
			if err := c.writeAck('+'); err != nil {
				return nil, false, err
			}
		}
		p, err := Decode(body)
		return p, false, err
	}
}

func checksum(b []byte) byte {
	var s byte
	for _, x := range b {
		s += x
	}
	return s
}

// Decode undoes a packet body's escapes ('}' then the byte xor 0x20)
// and run-length encoding ('*' then the repeat count + 29).
func Decode(body []byte) ([]byte, error) {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		switch b := body[i]; b {
		case '}':
			if i+1 >= len(body) {
				return nil, fmt.Errorf("%w: escape at the end", ErrPacket)
			}
			i++
			out = append(out, body[i]^0x20)
		case '*':
			if len(out) == 0 || i+1 >= len(body) {
				return nil, fmt.Errorf("%w: run-length without a byte to repeat", ErrPacket)
			}
			i++
			n := int(body[i]) - 29
			if n < 0 {
				return nil, fmt.Errorf("%w: bad run length %q", ErrPacket, body[i])
			}
			prev := out[len(out)-1]
			for ; n > 0; n-- {
				out = append(out, prev)
			}
		default:
			out = append(out, b)
		}
		if len(out) > MaxPacket {
			return nil, fmt.Errorf("%w: longer than %d bytes", ErrPacket, MaxPacket)
		}
	}
	return out, nil
}

// Encode escapes a payload for the wire: '$', '#', '}' and '*'.
func Encode(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+4)
	out = append(out, '$')
	for _, b := range payload {
		switch b {
		case '$', '#', '}', '*':
			out = append(out, '}', b^0x20)
		default:
			out = append(out, b)
		}
	}
	sum := checksum(out[1:])
	return append(out, '#', hexDigits[sum>>4], hexDigits[sum&15])
}

const hexDigits = "0123456789abcdef"

// Write sends one packet.
func (c *Conn) Write(payload []byte) error {
	p := Encode(payload)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.last = p
	return c.writeRaw(p)
}

func (c *Conn) resend() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.last == nil {
		return nil
	}
	return c.writeRaw(c.last)
}

// WriteString sends one packet.
func (c *Conn) WriteString(payload string) error { return c.Write([]byte(payload)) }

func (c *Conn) writeRaw(p []byte) error {
	if _, err := c.w.Write(p); err != nil {
		return err
	}
	return c.w.Flush()
}

func (c *Conn) writeAck(b byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.w.WriteByte(b); err != nil {
		return err
	}
	return c.w.Flush()
}
