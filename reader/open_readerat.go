package reader

import (
	"io"

	"ttd/tracefile"
)

// NewTrace opens a trace of size bytes held by ra, for traces that are
// not files on this machine: one read into memory from a remote
// filesystem (package fleet reads gs:// and other Beam filesystems so).
func NewTrace(ra io.ReaderAt, size int64) (*Trace, error) {
	f, err := tracefile.NewReader(ra, size)
	if err != nil {
		return nil, err
	}
	return newTrace(f)
}
