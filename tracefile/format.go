package tracefile

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"sync"
	"time"
)

// The format's version. A reader accepts any file with the same major
// version; a newer minor version only adds things an older reader can skip
// (record kinds in the length-prefixed tag range, header fields, chunk
// header bytes, index fields). See FORMAT.md, "Versioning".
const (
	VersionMajor = 1
	VersionMinor = 6 // 1: AccessSummary records (tag 0x0e), Process (0x20); 2: ProcessState (0x21); 3: AccessSummary of other processes (0x0f); 4: Process's Envc; 5: chunk flags for Module and Process records; 6: the index lists the checkpoints
	// VersionMajorNoReads is the major version of the traces that log
	// no reads (header parameter reads=none, `ttd record --mode
	// replayable`; minor version 0): the same encoding, but a reader of
	// major version 1 would predict the reads these traces leave out, so
	// it must refuse them.
	VersionMajorNoReads = 2
	// VersionMinorNoReads is their minor version: 1 added SharedMmap
	// records (tag 0x22, shared.go).
	VersionMinorNoReads = 1
)

// versionOf is the version a trace with header h is written with.
func versionOf(h *Header) (major, minor uint16) {
	if h.Params["reads"] == "none" {
		return VersionMajorNoReads, VersionMinorNoReads
	}
	return VersionMajor, VersionMinor
}

// Magic strings of the structures of a file.
const (
	FileMagic   = "TTDTRACE" // first 8 bytes of a trace
	chunkMagic  = "TTDC"     // first 4 bytes of a chunk header
	indexMagic  = "TTDX"     // first 4 bytes of the index section
	footerMagic = "TTDTRAIL" // last 8 bytes of a closed trace
)

// Format limits. A reader refuses larger values as corrupt, so a damaged
// or hostile length never makes it allocate more than this.
const (
	// MaxChunkLen bounds a chunk's payload, compressed or not, and
	// therefore any single record.
	MaxChunkLen = 1 << 30
	// maxHeaderLen bounds the file header's body (program path,
	// arguments, environment, parameters).
	maxHeaderLen = 64 << 20
	// maxChunkHeaderLen bounds a chunk header of a newer minor version.
	maxChunkHeaderLen = 4096
)

const (
	fileHeaderFixedLen = 24 // magic, version, body length, body CRC, fixed-part CRC
	chunkHeaderLen     = 80 // chunk header size written by this version
	footerLen          = 32
)

// Chunk header flags.
const (
	flagCheckpoint   = 1 << 0 // the payload begins with a Checkpoint record
	flagExit         = 1 << 1 // the payload contains an Exit record
	flagCompressMask = 0xf << 8
	compressZstd     = 0 << 8
	compressNone     = 1 << 8
)

// castagnoli is made on first use: building its tables costs about 0.1
// ms, which commands that write or read no trace (ttd run) need not pay.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli()) }

// Header is the trace's creation information, written once at the start
// of the file. Every field is optional.
type Header struct {
	// ProgramPath is the recorded program as given on the command line.
	ProgramPath string
	// Args are its arguments, argv[0] included.
	Args []string
	// Env is its environment (or a summary of it), "KEY=value" strings.
	Env []string
	// Cwd is the directory it started in.
	Cwd string
	// Created is when the recording started.
	Created time.Time
	// Recorder names the program and version that wrote the trace.
	Recorder string
	// Params are recorder settings the reader must know to re-simulate
	// (for instance the prediction cache's size); tracefile stores them
	// and gives them no meaning.
	Params map[string]string
}

// Header field identifiers (FORMAT.md, "File header").
const (
	hfProgramPath = 1
	hfArg         = 2
	hfEnv         = 3
	hfCwd         = 4
	hfCreated     = 5
	hfRecorder    = 6
	hfParam       = 7
)

func appendField(b []byte, id uint64, data []byte) []byte {
	b = binary.AppendUvarint(b, id)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// encodeHeader returns the complete file header: fixed part and body.
func encodeHeader(h *Header) []byte {
	var body []byte
	if h.ProgramPath != "" {
		body = appendField(body, hfProgramPath, []byte(h.ProgramPath))
	}
	for _, a := range h.Args {
		body = appendField(body, hfArg, []byte(a))
	}
	for _, e := range h.Env {
		body = appendField(body, hfEnv, []byte(e))
	}
	if h.Cwd != "" {
		body = appendField(body, hfCwd, []byte(h.Cwd))
	}
	if !h.Created.IsZero() {
		body = appendField(body, hfCreated, binary.AppendVarint(nil, h.Created.UnixNano()))
	}
	if h.Recorder != "" {
		body = appendField(body, hfRecorder, []byte(h.Recorder))
	}
	keys := make([]string, 0, len(h.Params))
	for k := range h.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := binary.AppendUvarint(nil, uint64(len(k)))
		p = append(p, k...)
		p = append(p, h.Params[k]...)
		body = appendField(body, hfParam, p)
	}
	b := make([]byte, fileHeaderFixedLen, fileHeaderFixedLen+len(body))
	copy(b, FileMagic)
	major, minor := versionOf(h)
	binary.LittleEndian.PutUint16(b[8:], major)
	binary.LittleEndian.PutUint16(b[10:], minor)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(body)))
	binary.LittleEndian.PutUint32(b[16:], crc(body))
	binary.LittleEndian.PutUint32(b[20:], crc(b[:20]))
	return append(b, body...)
}

// decodeHeaderBody parses the header body that starts at file offset off.
func decodeHeaderBody(body []byte, off int64) (Header, error) {
	var h Header
	p := 0
	for p < len(body) {
		start := p
		id, n := binary.Uvarint(body[p:])
		if n <= 0 {
			return h, fileErr(off+int64(start), ErrCorrupt, "bad header field id")
		}
		p += n
		l, n := binary.Uvarint(body[p:])
		if n <= 0 || l > uint64(len(body)-p-n) {
			return h, fileErr(off+int64(start), ErrCorrupt, "bad header field length")
		}
		p += n
		data := body[p : p+int(l)]
		p += int(l)
		switch id {
		case hfProgramPath:
			h.ProgramPath = string(data)
		case hfArg:
			h.Args = append(h.Args, string(data))
		case hfEnv:
			h.Env = append(h.Env, string(data))
		case hfCwd:
			h.Cwd = string(data)
		case hfCreated:
			ns, n := binary.Varint(data)
			if n <= 0 || n != len(data) {
				return h, fileErr(off+int64(start), ErrCorrupt, "bad creation time")
			}
			h.Created = time.Unix(0, ns)
		case hfRecorder:
			h.Recorder = string(data)
		case hfParam:
			kl, n := binary.Uvarint(data)
			if n <= 0 || kl > uint64(len(data)-n) {
				return h, fileErr(off+int64(start), ErrCorrupt, "bad header parameter")
			}
			if h.Params == nil {
				h.Params = make(map[string]string)
			}
			h.Params[string(data[n:n+int(kl)])] = string(data[n+int(kl):])
		default:
			// A field of a newer minor version: skipped.
		}
	}
	return h, nil
}

// chunkHeader is the uncompressed header in front of every chunk
// (FORMAT.md, "Chunk header").
type chunkHeader struct {
	size         uint16 // header length in bytes
	flags        uint16
	index        uint32 // the chunk's number, from 0
	clen, ulen   uint32 // payload length in the file, and decompressed
	payloadCRC   uint32 // CRC32C of the payload as stored in the file
	firstPos     uint64
	firstSeq     uint64
	lastPos      uint64
	lastSeq      uint64
	records      uint32
	keyFrames    uint32
	checkpoints  uint32
	syscalls     uint32
	threadStarts uint32
}

// put writes h into b[:chunkHeaderLen].
func (h *chunkHeader) put(b []byte) {
	_ = b[chunkHeaderLen-1]
	copy(b, chunkMagic)
	le := binary.LittleEndian
	le.PutUint16(b[4:], chunkHeaderLen)
	le.PutUint16(b[6:], h.flags)
	le.PutUint32(b[8:], h.index)
	le.PutUint32(b[12:], h.clen)
	le.PutUint32(b[16:], h.ulen)
	le.PutUint32(b[20:], h.payloadCRC)
	le.PutUint64(b[24:], h.firstPos)
	le.PutUint64(b[32:], h.firstSeq)
	le.PutUint64(b[40:], h.lastPos)
	le.PutUint64(b[48:], h.lastSeq)
	le.PutUint32(b[56:], h.records)
	le.PutUint32(b[60:], h.keyFrames)
	le.PutUint32(b[64:], h.checkpoints)
	le.PutUint32(b[68:], h.syscalls)
	le.PutUint32(b[72:], h.threadStarts)
	le.PutUint32(b[76:], crc(b[:76]))
}

// chunkHeaderSize returns the length announced by the first bytes of a
// chunk header (at least 6 of them), or 0 if they are not one.
func chunkHeaderSize(b []byte) int {
	if len(b) < 6 || string(b[:4]) != chunkMagic {
		return 0
	}
	n := int(binary.LittleEndian.Uint16(b[4:]))
	if n < chunkHeaderLen || n > maxChunkHeaderLen {
		return 0
	}
	return n
}

// parseChunkHeader decodes a complete chunk header; b holds exactly its
// bytes. It returns a message, empty when the header is sound.
func parseChunkHeader(b []byte) (chunkHeader, string) {
	var h chunkHeader
	n := chunkHeaderSize(b)
	switch {
	case n == 0 && (len(b) < 4 || string(b[:4]) != chunkMagic):
		return h, "no chunk magic"
	case n == 0:
		return h, "bad chunk header size"
	case n != len(b):
		return h, "chunk header size mismatch"
	}
	le := binary.LittleEndian
	if crc(b[:n-4]) != le.Uint32(b[n-4:]) {
		return h, "chunk header checksum mismatch"
	}
	h.size = uint16(n)
	h.flags = le.Uint16(b[6:])
	h.index = le.Uint32(b[8:])
	h.clen = le.Uint32(b[12:])
	h.ulen = le.Uint32(b[16:])
	h.payloadCRC = le.Uint32(b[20:])
	h.firstPos = le.Uint64(b[24:])
	h.firstSeq = le.Uint64(b[32:])
	h.lastPos = le.Uint64(b[40:])
	h.lastSeq = le.Uint64(b[48:])
	h.records = le.Uint32(b[56:])
	h.keyFrames = le.Uint32(b[60:])
	h.checkpoints = le.Uint32(b[64:])
	h.syscalls = le.Uint32(b[68:])
	h.threadStarts = le.Uint32(b[72:])
	switch {
	case h.clen > MaxChunkLen || h.ulen > MaxChunkLen:
		return h, "chunk length too large"
	case h.flags&flagCompressMask == compressNone && h.clen != h.ulen:
		return h, "stored chunk with different lengths"
	case h.flags&flagCompressMask != compressNone && h.flags&flagCompressMask != compressZstd:
		return h, "unknown chunk compression"
	case h.ulen == 0 && h.records != 0:
		return h, "empty chunk with records"
	}
	return h, ""
}

// putFooter writes the footer into b[:footerLen].
func putFooter(b []byte, indexOff, indexLen int64, indexCRC uint32) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(indexOff))
	le.PutUint64(b[8:], uint64(indexLen))
	le.PutUint32(b[16:], indexCRC)
	le.PutUint32(b[20:], crc(b[:20]))
	copy(b[24:], footerMagic)
}
