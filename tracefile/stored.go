package tracefile

import (
	"encoding/binary"
	"math"
	"sync"
)

// Parts of a chunk that do not compress (the bytes read(2) returned
// from random or already compressed input: md5sum's 16 MiB) skip the
// compressor: the writer ends the chunk's zstd frame and stores the part
// as a frame of raw blocks of its own, so the payload stays a standard
// zstd stream (FORMAT.md, "Chunks"). The compressor would store such
// blocks raw too, after hashing every position for matches it does not
// find.

// storedEntropy is the estimated entropy, in bits per byte, from which
// a part is stored: uniform random bytes estimate 7.8 from a sample of
// sampleLen, text 4.5-5.5, the broad benchmark's binary records 5-6.
// At 7.5 bits zstd's literal coding would save at most 6%.
const storedEntropy = 7.5

// sampleLen is how many bytes of a part the estimate looks at, spread
// evenly over it.
const sampleLen = 1024

// clog2 holds c·log2(c) for c up to sampleLen.
var clog2 = sync.OnceValue(func() *[sampleLen + 1]float32 {
	var t [sampleLen + 1]float32
	for c := 2; c <= sampleLen; c++ {
		t[c] = float32(float64(c) * math.Log2(float64(c)))
	}
	return &t
})

// incompressible reports whether p's bytes look random enough that
// compressing them would not pay: the order-0 entropy of a sample of
// them is at least storedEntropy bits per byte.
func incompressible(p []byte) bool {
	if len(p) < 2*sampleLen {
		return false
	}
	var hist [256]uint16
	step := len(p) / sampleLen
	for i := 0; i < sampleLen; i++ {
		hist[p[i*step]]++
	}
	t := clog2()
	var sum float32
	for _, c := range hist {
		sum += t[c]
	}
	// H = log2(n) - Σ c·log2(c) / n, with n = sampleLen = 2^10.
	return 10-sum/sampleLen >= storedEntropy
}

// maxRawBlock is the largest raw block of a stored frame: zstd's block
// size limit, and no more than its window.
const maxRawBlock = 128 << 10

// appendStoredFrame appends p to out as a zstd frame of raw blocks (RFC
// 8878: magic, a frame header with a 1 MiB window and no content size,
// then blocks whose 3-byte header says raw, its size and whether it is
// the last).
func appendStoredFrame(out, p []byte) []byte {
	out = binary.LittleEndian.AppendUint32(out, 0xFD2FB528)
	// Frame header descriptor 0: no content size, not single-segment,
	// no checksum, no dictionary; window descriptor 0x50: 2^(10+10).
	out = append(out, 0, 0x50)
	for {
		n := min(len(p), maxRawBlock)
		h := uint32(n) << 3 // block type 0: raw
		if n == len(p) {
			h |= 1 // last block
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
		out = append(out, p[:n]...)
		p = p[n:]
		if len(p) == 0 {
			return out
		}
	}
}
