package symbols

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
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
var sectionCacheDir = defaultSectionCacheDir()

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

func defaultSectionCacheDir() string {
	switch v := os.Getenv("TTD_DWARF_CACHE"); v {
	case "off":
		return ""
	case "":
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(d, "ttd", "dwarf")
	default:
		return v
	}
}

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
	writeCachedSection(dir, path, b)
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

// writeCachedSection writes b to path, through a temporary file renamed
// into place (a concurrent run reads the whole file or none), and keeps
// the directory under sectionCacheLimit. Failures only lose the cache.
func writeCachedSection(dir, path string, b []byte) {
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	sum := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli))
	_, err = tmp.Write(b)
	if err == nil {
		_, err = tmp.Write(sum)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return
	}
	sectionCacheWrites.Add(1)
	pruneSectionCache(dir, sectionCacheLimit)
}

// pruneSectionCache removes the oldest files of dir until it holds at
// most limit bytes.
func pruneSectionCache(dir string, limit int64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		mod  int64
	}
	var files []file
	var total int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || strings.HasPrefix(e.Name(), ".tmp-") {
			continue
		}
		files = append(files, file{e.Name(), info.Size(), info.ModTime().UnixNano()})
		total += info.Size()
	}
	if total <= limit {
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod < files[j].mod })
	for _, f := range files {
		if total <= limit {
			break
		}
		if os.Remove(filepath.Join(dir, f.name)) == nil {
			total -= f.size
		}
	}
}
