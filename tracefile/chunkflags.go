package tracefile

// Chunk flags that say which records a chunk holds (minor version 5), so
// that a reader looking for the few records that describe the programs
// (Module, Process) decodes only the chunks that hold them instead of
// every chunk of the trace: the serial start of `ttd probe --jobs N`
// decoded all of them twice (FORMAT.md, "Chunks").

const (
	// flagModules marks a chunk that holds Module records.
	flagModules = 1 << 4
	// flagProcessRecords marks a chunk that holds Process records (tag
	// 0x20); flagProcesses also marks the ProcessState records that
	// follow every checkpoint of a process tree, so it is set on nearly
	// every chunk of one.
	flagProcessRecords = 1 << 5
	// minorRecordFlags is the first minor version whose writers set
	// flagModules and flagProcessRecords.
	minorRecordFlags = 5
)

// flagRecord sets the flag of the current chunk that says it holds a
// record with tag (Module or Process). It is the writer's whole part in
// the record flags.
func (w *Writer) flagRecord(tag byte) {
	switch tag {
	case tagModule:
		w.cur.flags |= flagModules
	case tagProcess:
		w.cur.flags |= flagProcessRecords
	}
}

// RecordFlags reports whether the chunks say which ones hold Module and
// Process records (HoldsModules, HoldsProcessRecords): traces written
// before minor version 5 do not, and a reader must look in every chunk.
func (r *Reader) RecordFlags() bool { return r.hasMinor(minorRecordFlags) }

// hasMinor reports whether the file has what minor version minor of
// major version 1 added. Major version 2 (no reads) began after minor
// 7 of major 1, with all of it: its minor versions count anew, and
// its traces were read as older than minor 5 (every chunk surveyed at
// Open, no checkpoint list: gzip -9's trace surveyed its 5 chunks, 7
// ms before ttd probe could bind, where 2 hold Process records).
func (r *Reader) hasMinor(minor int) bool {
	return r.major == VersionMajorNoReads || r.minor >= minor
}

// HoldsModules reports whether the chunk holds Module records. Only
// meaningful when the Reader's RecordFlags is true.
func (c *ChunkInfo) HoldsModules() bool { return c.hdr.flags&flagModules != 0 }

// HoldsProcessRecords reports whether the chunk holds Process records
// (not only ProcessState ones). Only meaningful when the Reader's
// RecordFlags is true; else HoldsProcesses is the best there is.
func (c *ChunkInfo) HoldsProcessRecords() bool { return c.hdr.flags&flagProcessRecords != 0 }

// ProcessChunks lists the chunks that may hold Process records, in order:
// those flagged as holding them, or for a trace before minor version 5
// those holding Process or ProcessState records.
func (r *Reader) ProcessChunks() []int {
	var out []int
	for i := range r.chunks {
		c := &r.chunks[i]
		if r.RecordFlags() && c.HoldsProcessRecords() || !r.RecordFlags() && c.HoldsProcesses() {
			out = append(out, i)
		}
	}
	return out
}

// ModuleChunks lists the chunks that may hold Module records, in order:
// those flagged as holding them, or every chunk of a trace before minor
// version 5.
func (r *Reader) ModuleChunks() []int {
	var out []int
	for i := range r.chunks {
		if !r.RecordFlags() || r.chunks[i].HoldsModules() {
			out = append(out, i)
		}
	}
	return out
}
