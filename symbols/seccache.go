package symbols

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"

	"ttd/internal/diskcache"
)

// The cache of decompressed DWARF sections. Debian's separate debug
// files (libc6-dbg) compress their DWARF with zlib, and naming a call
// tree's few hundred functions and call sites reads all of libc's
// .debug_info, .debug_abbrev and .debug_line to reach the 10% of units
// they are in (the units are spread over the whole section, so no prefix
// would do): 8 MB inflated at about 175 MB/s, 60-90 ms of CPU in every
// `ttd calls`, a third of one over a 1.6e8-instruction lua trace (no
// faster inflater helps: klauspost/compress's zlib measured the same).
// So a compressed section, once inflated, is kept in a file named by the
// debug file's build id, the section's name, offset and sizes and a CRC
// of the ends of its compressed bytes (a zlib stream ends with a sum of
// its contents), with a CRC of its contents at the end; a later run
// maps it (a few ms of CPU for libc's, most of it the CRC). A cache file
// that is missing, of another size or whose CRC does not match is
// ignored and rewritten.
// TTD_DWARF_CACHE names the directory (default: the user's cache
// directory's ttd/dwarf), or is "off".

// sectionCacheDir is the directory of the cache of decompressed DWARF
// sections, "" for none (TTD_DWARF_CACHE).
var sectionCacheDir = diskcache.Dir("TTD_DWARF_CACHE", "dwarf")

// sectionCacheLimit bounds the cache's size: past it, writing a section
// removes the oldest files first.
const sectionCacheLimit = 512 << 20

// minCachedSection is the least compressed size worth a cache file:
// below it inflating costs less than the file's open and read.
var minCachedSection uint64 = 16 << 10

// sectionEnd is how many bytes of each end of a compressed section its
// cache file's name sums.
const sectionEnd = 4096

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sectionCacheHits and sectionCacheWrites count the sections read from
// the cache and written to it (tests).
var sectionCacheHits, sectionCacheWrites atomic.Int64

// debugSection is the DWARF section .debug_<name> of f, decompressed,
// as godwarf.GetDebugSectionElf reads it; raw reads f's bytes (nil: no
// cache), id is f's build id.
func debugSection(f *elf.File, raw io.ReaderAt, id, name string) []byte {
	dir := sectionCacheDir
	s := f.Section(".debug_" + name)
	if dir == "" || raw == nil || s == nil || s.Flags&elf.SHF_COMPRESSED == 0 ||
		s.Type == elf.SHT_NOBITS || s.FileSize < minCachedSection {
		b, _ := godwarf.GetDebugSectionElf(f, name)
		return b
	}
	// The compressed bytes' ends: a zlib stream ends with the Adler-32
	// of what it holds (reading and summing all of libc's 3.5 MB took
	// 2-3 ms of a run).
	var ends [2 * sectionEnd]byte
	n := min(uint64(sectionEnd), s.FileSize/2)
	_, err1 := raw.ReadAt(ends[:n], int64(s.Offset))
	_, err2 := raw.ReadAt(ends[n:2*n], int64(s.Offset+s.FileSize-n))
	if err1 != nil || err2 != nil {
		b, _ := godwarf.GetDebugSectionElf(f, name)
		return b
	}
	if id == "" {
		id = "none"
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%x-%x-%x-%08x", id, name, s.Offset, s.FileSize, s.Size,
		crc32.Checksum(ends[:2*n], castagnoli)))
	if b := readCachedSection(path, s.Size); b != nil {
		sectionCacheHits.Add(1)
		return b
	}
	b, err := s.Data()
	if err != nil {
		return nil
	}
	writeCachedSection(path, b)
	return b
}

// readCachedSection reads a section of size bytes from its cache file,
// or returns nil if the file is missing or not that section. The file
// is mapped, not read: reading libc's 8 MB into fresh memory zeroed it
// first, 20 ms of CPU; a mapping costs the pages the CRC and the DWARF
// reads touch. A path is mapped once per process (a cache file is
// replaced by a rename, never rewritten in place, so the mapping stays
// good).
func readCachedSection(path string, size uint64) []byte {
	mapped.Lock()
	defer mapped.Unlock()
	if b, ok := mapped.files[path]; ok { // the path holds the size
		return b
	}
	full := mapFile(path)
	if uint64(len(full)) != size+4 {
		unmapFile(full)
		return nil
	}
	b, sum := full[:size:size], binary.LittleEndian.Uint32(full[size:])
	if crc32.Checksum(b, castagnoli) != sum {
		unmapFile(full)
		return nil
	}
	if mapped.files == nil {
		mapped.files = map[string][]byte{}
	}
	mapped.files[path] = b
	return b
}

// mapped holds the cache files mapped so far, by path.
var mapped struct {
	sync.Mutex
	files map[string][]byte
}

// mapFile maps the file at path read-only, or returns nil.
func mapFile(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= 0 || fi.Size() != int64(int(fi.Size())) {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}

// unmapFile unmaps what mapFile mapped (nil: nothing).
func unmapFile(b []byte) {
	if b != nil {
		syscall.Munmap(b)
	}
}

// writeCachedSection writes b and its CRC to path, keeping the
// directory under sectionCacheLimit. Failures only lose the cache.
func writeCachedSection(path string, b []byte) {
	err := diskcache.Write(path, sectionCacheLimit, func(w io.Writer) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli)))
		return err
	})
	if err == nil {
		sectionCacheWrites.Add(1)
	}
}
