package tracefile

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/klauspost/compress/zstd"
)

// Access summary files (FORMAT.md, "Access summary files"): the access
// summaries of a trace that logs no reads, which its recorder cannot
// write (they come from a replay that observes every access), kept next
// to the trace (SumsPath) once a replay has built them, so that ttd
// query and the debuggers read them as they read a trace's own. The file
// names its trace by TraceIdentity, as a checkpoint memory file does: one
// made for another trace, or for this one before it changed, is refused
// (ErrStale).

const (
	sumsMagic  = "TTDSUMMS"
	sumsTrail  = "TTDSTRAL"
	sumsMajor  = 1
	sumsMinor  = 0
	sumsHdrLen = pagesHdrLen
	// the footer: the body's length (8), its CRC32C (4), the magic
	sumsFooterLen = 8 + 4 + 8
)

// SumsPath is where the access summary file of the trace at path is.
func SumsPath(trace string) string { return trace + ".sums" }

// identityHeader is the header of a file that belongs to the trace of
// identity id: magic, major and minor version, id, CRC32C.
func identityHeader(magic string, major, minor uint16, id [IdentityLen]byte) []byte {
	hdr := make([]byte, 0, pagesHdrLen)
	hdr = append(hdr, magic...)
	hdr = binary.LittleEndian.AppendUint16(hdr, major)
	hdr = binary.LittleEndian.AppendUint16(hdr, minor)
	hdr = append(hdr, id[:]...)
	return binary.LittleEndian.AppendUint32(hdr, crc(hdr))
}

// checkIdentityHeader checks a header identityHeader made, for the trace
// of identity id: on error, the offset of the field that is wrong, the
// cause and what is wrong.
func checkIdentityHeader(hdr []byte, magic string, major uint16, id [IdentityLen]byte) (off int, err error, msg string) {
	n := len(hdr)
	switch {
	case string(hdr[:8]) != magic:
		return 0, ErrBadMagic, "no " + magic
	case crc(hdr[:n-4]) != binary.LittleEndian.Uint32(hdr[n-4:]):
		return 0, ErrCorrupt, "header checksum mismatch"
	case binary.LittleEndian.Uint16(hdr[8:]) != major:
		return 8, ErrVersion, fmt.Sprintf("major version %d", binary.LittleEndian.Uint16(hdr[8:]))
	case [IdentityLen]byte(hdr[12:12+IdentityLen]) != id:
		return 12, ErrStale, fmt.Sprintf("made for a trace of %d bytes", binary.LittleEndian.Uint64(hdr[12:]))
	}
	return 0, nil, ""
}

// EncodeSums returns the access summary file of sums (each with its
// Pid: 0 for the first process) for the trace of identity id.
func EncodeSums(id [IdentityLen]byte, sums []AccessSummary) []byte {
	body := binary.AppendUvarint(nil, uint64(len(sums)))
	var one []byte
	for i := range sums {
		s := &sums[i]
		one = AppendAccessSummary(one[:0], s)
		body = binary.AppendUvarint(body, uint64(s.Pid))
		body = binary.AppendUvarint(body, uint64(len(one)))
		body = append(body, one...)
	}
	return sealSums(id, body)
}

// sealSums returns the access summary file of body (uncompressed).
func sealSums(id [IdentityLen]byte, body []byte) []byte {
	b := identityHeader(sumsMagic, sumsMajor, sumsMinor, id)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // only for bad options
	}
	body = enc.EncodeAll(body, nil)
	b = append(b, body...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(body)))
	b = binary.LittleEndian.AppendUint32(b, crc(body))
	return append(b, sumsTrail...)
}

// WriteSums writes the access summary file of sums for the trace of
// identity id at path, through a temporary file renamed into place (a
// reader never sees half of one).
func WriteSums(path string, id [IdentityLen]byte, sums []AccessSummary) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, EncodeSums(id, sums), 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// ReadSums reads the access summary file at path, made for the trace of
// identity id.
func ReadSums(path string, id [IdentityLen]byte) ([]AccessSummary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := DecodeSums(b, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func sumsErr(off int, err error, format string, args ...any) error {
	return &FormatError{Off: int64(off), Chunk: -1, InChunk: -1, Msg: "access summary file: " + fmt.Sprintf(format, args...), Err: err}
}

// DecodeSums decodes an access summary file made for the trace of
// identity id: every error a *FormatError with the offset, or ErrStale.
func DecodeSums(b []byte, id [IdentityLen]byte) ([]AccessSummary, error) {
	if len(b) < sumsHdrLen+sumsFooterLen {
		return nil, sumsErr(0, ErrTruncated, "file of %d bytes", len(b))
	}
	if off, err, msg := checkIdentityHeader(b[:sumsHdrLen], sumsMagic, sumsMajor, id); err != nil {
		return nil, sumsErr(off, err, "%s", msg)
	}
	footOff := len(b) - sumsFooterLen
	foot := b[footOff:]
	if string(foot[12:]) != sumsTrail {
		return nil, sumsErr(footOff, ErrTruncated, "no footer (a file cut short)")
	}
	body := b[sumsHdrLen:footOff]
	if n := binary.LittleEndian.Uint64(foot); n != uint64(len(body)) {
		return nil, sumsErr(footOff, ErrCorrupt, "body of %d bytes, %d between header and footer", n, len(body))
	}
	if crc(body) != binary.LittleEndian.Uint32(foot[8:]) {
		return nil, sumsErr(sumsHdrLen, ErrCorrupt, "checksum mismatch")
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	if body, err = dec.DecodeAll(body, nil); err != nil {
		return nil, sumsErr(sumsHdrLen, ErrCorrupt, "%v", err)
	}
	p := 0
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(body[p:])
		if k <= 0 {
			return 0, false
		}
		p += k
		return v, true
	}
	n, ok := uv()
	if !ok || n > uint64(len(body)) {
		return nil, sumsErr(sumsHdrLen, ErrCorrupt, "bad summary count")
	}
	out := make([]AccessSummary, 0, n)
	for i := uint64(0); i < n; i++ {
		at := p
		pid, ok1 := uv()
		l, ok2 := uv()
		if !ok1 || !ok2 || pid > 1<<31-1 || l > uint64(len(body)-p) {
			return nil, sumsErr(sumsHdrLen, ErrCorrupt, "summary %d (byte %d of the body): bad pid or length", i, at)
		}
		s, k, err := DecodeAccessSummary(body[p : p+int(l)])
		if err != nil {
			return nil, sumsErr(sumsHdrLen, ErrCorrupt, "summary %d (byte %d of the body): %v", i, p+k, err)
		}
		p += int(l)
		s.Pid = int(pid)
		out = append(out, s)
	}
	if p != len(body) {
		return nil, sumsErr(sumsHdrLen, ErrCorrupt, "%d bytes after the last summary", len(body)-p)
	}
	return out, nil
}
