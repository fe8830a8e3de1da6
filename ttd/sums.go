package ttd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"ttd/reader"
	"ttd/tracefile"
)

// The access summaries of a trace that logs no reads (`ttd record`'s
// default mode) cannot come from its recorder, which sees no access:
// the first command that needs them builds them with one replay per
// interval that observes every access (SummarizeTrace, as the other mode
// builds them after recording) and keeps them next to the trace, in
// TRACE.sums (tracefile.SumsPath; FORMAT.md, "Access summary files"),
// for every later command. A file made for another trace, or cut short,
// is built again.

// sidecarSummaries returns the summaries of tr (a trace that logs no
// reads, read from a file) from its access summary file when valid
// accepts them, else builds them (built), and writes the file when it is
// missing, not this trace's, damaged or not valid. A directory this user
// cannot write gets no file: the summaries last as long as this process.
func sidecarSummaries(tr *reader.Trace, workers int, progress func(done, total int), valid func([]tracefile.AccessSummary) bool) (sums []tracefile.AccessSummary, built bool, err error) {
	id, err := tr.File().Identity()
	if err != nil {
		return nil, false, err
	}
	path := tracefile.SumsPath(tr.Path())
	sums, err = tracefile.ReadSums(path, id)
	var fe *tracefile.FormatError
	switch {
	case err == nil && valid(sums):
		return sums, false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &fe):
		return nil, false, err
	}
	if sums, err = summarize(tr, workers, progress); err != nil {
		return nil, false, err
	}
	if err := tracefile.WriteSums(path, id, sums); err != nil && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return nil, false, fmt.Errorf("access summaries: %w", err)
	}
	return sums, true, nil
}

// BuildSummaryFile builds the access summaries of tr (a trace that logs
// no reads, read from a file) and writes its access summary file (ttd
// index), whatever is there.
func BuildSummaryFile(tr *reader.Trace, workers int, progress func(done, total int)) (int, int64, error) {
	id, err := tr.File().Identity()
	if err != nil {
		return 0, 0, err
	}
	sums, err := summarize(tr, workers, progress)
	if err != nil {
		return 0, 0, err
	}
	path := tracefile.SumsPath(tr.Path())
	if err := tracefile.WriteSums(path, id, sums); err != nil {
		return 0, 0, fmt.Errorf("access summaries: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	return len(sums), fi.Size(), nil
}
