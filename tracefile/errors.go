package tracefile

import (
	"errors"
	"fmt"
)

// Sentinel errors. A decoding problem is always a *FormatError whose Err
// is one of ErrBadMagic, ErrVersion, ErrTruncated or ErrCorrupt, so
// errors.Is(err, ErrTruncated) works on what Open and Next return.
var (
	// ErrBadMagic: the file does not start with "TTDTRACE", or a chunk,
	// index or footer does not start with its magic.
	ErrBadMagic = errors.New("bad magic")
	// ErrVersion: the file's major format version is not one this
	// package reads.
	ErrVersion = errors.New("unsupported format version")
	// ErrTruncated: the input ends inside a structure.
	ErrTruncated = errors.New("truncated")
	// ErrCorrupt: a checksum does not match, or a field is impossible.
	ErrCorrupt = errors.New("corrupt")

	// ErrTooLarge is a Writer error: one record exceeds MaxChunkLen.
	ErrTooLarge = errors.New("record too large")
	// ErrInvalid is a Writer error: a record field is out of its range
	// (a MemRead size outside 1..8, a key-frame kind above 15, …).
	ErrInvalid = errors.New("invalid record")
	// ErrClosed is returned by a Writer used after Close.
	ErrClosed = errors.New("writer closed")
)

// FormatError describes a problem in a trace file.
type FormatError struct {
	// Off is the file offset of the problem; for a problem inside a
	// chunk's records it is the offset of the chunk's header.
	Off int64
	// Chunk is the index of the chunk concerned, or -1.
	Chunk int
	// InChunk is the offset of the offending record within the chunk's
	// decompressed payload, or -1 when the problem is not in a record.
	InChunk int64
	// Msg says what is wrong.
	Msg string
	// Err is the sentinel (ErrTruncated, ErrCorrupt, …) or nil.
	Err error
}

func (e *FormatError) Error() string {
	s := "tracefile: "
	if e.Chunk >= 0 {
		s += fmt.Sprintf("chunk %d at offset %d", e.Chunk, e.Off)
		if e.InChunk >= 0 {
			s += fmt.Sprintf(", payload byte %d", e.InChunk)
		}
	} else {
		s += fmt.Sprintf("offset %d", e.Off)
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the sentinel error.
func (e *FormatError) Unwrap() error { return e.Err }

// fileErr makes a FormatError at a file offset outside any chunk payload.
func fileErr(off int64, sentinel error, format string, args ...any) *FormatError {
	return &FormatError{Off: off, Chunk: -1, InChunk: -1, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
