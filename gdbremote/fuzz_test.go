package gdbremote

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

var seeds = []string{
	"qSupported:multiprocess+;swbreak+", "vCont;c:p1.-1", "vCont;s:p1.2;c", "vCont;r1000,2000:p1.1", "bc", "bs",
	"m7fff0000,40", "M1000,2:abcd", "X1000,1:}]", "Z2,601040,4", "z0,400000,1", "Hgp1.2", "Hc-1", "Tp1.1",
	"qXfer:features:read:target.xml:0,fff", "qXfer:auxv:read::0,1000", "qRcmd,7768656e", "qGetTLSAddr:p1.1,8,0",
	"p3a", "P0=0011", "qThreadExtraInfo,p1.1", "g", "?", "D;1", "vKill;1", "c", "s400000", "qXfer:x:write:a:0,1",
}

// FuzzParse: any payload parses to a request or to an error wrapping
// ErrPacket, never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		req, err := Parse(p)
		if err != nil && !errors.Is(err, ErrPacket) {
			t.Fatalf("Parse(%q): error %v does not wrap ErrPacket", p, err)
		}
		if err == nil && req.Kind == VCont && len(req.Actions) == 0 {
			t.Fatalf("Parse(%q): vCont without actions", p)
		}
	})
}

// FuzzConn: any byte stream gives packets, interrupts or errors, never a
// panic or a hang; a packet encoded by Encode reads back the same.
func FuzzConn(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), []byte(string(Encode([]byte(s)))+"\x03$bad#00$m0,1#"))
	}
	f.Add([]byte("a*\"b"), []byte("$a*\"#00$}#00$*#00"))
	f.Fuzz(func(t *testing.T, payload, stream []byte) {
		var out bytes.Buffer
		c := NewConn(bytes.NewReader(append(Encode(payload), stream...)), &out)
		c.SetNoAck(true)
		p, intr, err := c.Read()
		if len(payload) <= MaxPacket && (err != nil || intr || !bytes.Equal(p, payload)) {
			t.Fatalf("Encode(%q) read back as %q, %v, %v", payload, p, intr, err)
		}
		for i := 0; i < len(stream)+2; i++ {
			_, _, err := c.Read()
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return
			}
			if err != nil && !errors.Is(err, ErrPacket) {
				t.Fatalf("Read: %v", err)
			}
		}
	})
}

// A malformed packet gets an error reply and the server goes on.
func TestServeBadPacket(t *testing.T) {
	var out bytes.Buffer
	in := bytes.NewReader(append(append(Encode([]byte("mzz")), Encode([]byte("m0,}"))...), Encode([]byte("vCont;q"))...))
	srv := &Server{c: NewConn(in, &out), bps: map[zKey]int{}, kinds: map[int]zKey{}, xfer: map[string][]byte{}}
	for {
		p, _, err := srv.c.Read()
		if err == io.EOF {
			break
		}
		if err == nil {
			_, err = Parse(p)
		}
		if err == nil || !errors.Is(err, ErrPacket) {
			t.Fatalf("packet %q: %v, want a malformed-packet error", p, err)
		}
	}
}
