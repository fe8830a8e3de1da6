package x86

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"ttd/internal/diskcache"
)

// The persistent cache of decoded code (issue 24). A short program under
// ttd spends a fifth of its CPU decoding blocks (python3 -c pass: 19,600
// blocks, 236,000 instructions, each decoded, marked for dead flags and
// fused pairs, and copied into freshly zeroed slabs). A program run
// again decodes the same bytes at the same addresses to the same
// blocks, so an address space's blocks of file-backed, never-written
// code are kept in a file (CodeFile) that the next run maps: a block
// taken from it is its instructions in the file's pages, not decoded and
// not copied.
//
// A cached block is used only where decoding would give the same block:
// its code bytes and the rest of its last instruction's fetch window
// must be in guest memory, executable, at the block's address (the test
// the code store makes, CodeStore.find), and the CPU features the same.
// So a page that was written, remapped or holds other bytes than the
// file's decodes afresh: the file is keyed by the program only to be
// found, never trusted for what the bytes are.
//
// Instructions are stored as they are in memory, handler pointers and
// all: a file holds only instructions whose handlers are static
// functions of the ttd binary (staticHandler), and is used only by the
// same ttd binary at the same addresses (codeFileStamp: its size, mtime
// and inode, and where one handler is). CRCs of the header, of the hash
// table and of each record (checked when the record is used) guard
// against torn or foreign files; a bad file or record is ignored, and
// the file rewritten.
//
// TTD_CODE_CACHE names the directory (default: the user's cache
// directory's ttd/code), or is "off".

// codeFileMagic starts every code file; its last byte is the version.
const codeFileMagic = "TTDCODE\x01"

// codeFileLimit bounds the directory's size: past it, writing a file
// removes the oldest first. codeFileMaxBlocks bounds one file.
const (
	codeFileLimit     = 512 << 20
	codeFileMaxBlocks = 1 << 20
)

// minCodeFileNew is the least number of blocks an address space must
// have decoded that its file lacks for it to write the file again: a
// write costs about 1 ms per 10,000 blocks, and a process that decoded
// few (a fork child that took its blocks from the code store) would
// only write the same file again.
var minCodeFileNew = 256

// codeFileDir is the directory of the persistent code cache, "" for
// none (TTD_CODE_CACHE, read at each exec, so that a test may set it).
// A test binary (named *.test) has none unless the variable names one:
// tests that run programs must not fill the user's cache.
var codeFileDir = func() string {
	if os.Getenv("TTD_CODE_CACHE") == "" && strings.HasSuffix(os.Args[0], ".test") {
		return ""
	}
	return diskcache.Dir("TTD_CODE_CACHE", "code")
}

// codeFileHeader is the file's first 64 bytes.
type codeFileHeader struct {
	Magic    [8]byte
	Stamp    [16]byte // codeFileStamp
	Features uint32
	InstSize uint32
	NBlocks  uint64
	NSlots   uint64
	Size     uint64 // of the file
	SlotsCRC uint32 // of the hash table (each record has its own)
	HeadCRC  uint32 // of the header's bytes before it
}

// The file's layout after the header: a hash table of the blocks
// (NSlots uint32 slots, a power of two at least twice NBlocks, each the
// offset of a block's record in 8-byte units or 0 for none, padded to 8
// bytes), then the blocks' records in the order the run that wrote the file
// first ran them (SaveCodeFile).
// A record is a fileBlock, the block's code bytes (padded to 8) and its
// instructions: taking a block reads one slot and one record, not an
// index, the code and the instructions from three places (a binary
// search of a separate index was 1.6% of python3 -c pass, the misses
// of the three places 3%).

const codeFileHeaderSize = 64

// fileBlock starts a block's record: the block, the rest of its last
// instruction's fetch window, the record's size and how many
// translations follow the instructions (fileXlatHead).
type fileBlock struct {
	PC    uint64
	NInst uint32
	NCode uint32
	Win   [14]byte
	NWin  uint8
	Cut   bool // the window ended at an unfetchable byte
	Size  uint32
	NXlat uint32
	// CRC sums the record but for itself and the padding after it
	// (recordCRC); it is checked when the block is taken, the record
	// then read once rather than the whole file at its open (a CRC of
	// 23 MB, then the misses of the records the run takes).
	CRC uint32
	_   uint32
}

const fileBlockSize = 48

// recordCRC is the CRC of the record rec.
func recordCRC(rec []byte) uint32 {
	return crc32.Update(crc32.Checksum(rec[:fileBlockSize-8], castagnoliTab), castagnoliTab, rec[fileBlockSize:])
}

// fileXlatHead starts a translation in a record: its mode, its code's
// size, and how many of each of storedXlat's offsets follow (linkSite,
// linkMis, resumeK, resumeAt, idSites, tabSites, int32 each, padded to
// 8 bytes), then the code (padded to 8).
type fileXlatHead struct {
	Mode     uint8
	Declined bool
	_        [2]byte
	NCode    uint32
	ChainOff int32
	N        [6]uint16
	Beyond   uint64
}

const fileXlatHeadSize = 32

// fileXlat is a translation for the code file: kept when translate made
// it (keepFileXlat) or taken from the file with its block, and adopted
// like one from the code store (adoptable).
type fileXlat struct {
	mode uint8
	x    storedXlat
}

// xlatSize is the size of x in a record.
func xlatSize(x *storedXlat) int {
	n := len(x.linkSite) + len(x.linkMis) + len(x.resumeK) + len(x.resumeAt) + len(x.idSites) + len(x.tabSites)
	return fileXlatHeadSize + (4*n+7)&^7 + (len(x.code)+7)&^7
}

// recordSize is the size of a record of ninst instructions, ncode code
// bytes and the translations xs.
func recordSize(ninst, ncode int, xs []*fileXlat) int {
	n := fileBlockSize + (ncode+7)&^7 + ninst*instSize
	for _, x := range xs {
		n += xlatSize(&x.x)
	}
	return n
}

// CodeFile is one persistent file of decoded blocks: what an earlier
// run left (mapped copy-on-write), and its path.
type CodeFile struct {
	path     string
	features Features
	data     []byte
	slots    []uint32
	nblocks  int
	// Taken counts the blocks taken from the file.
	Taken atomic.Uint64
}

// codeFileTaken counts the blocks taken from code files (tests).
var codeFileTaken atomic.Uint64

// CodeFileTaken returns how many blocks this process took from code
// files (for tests).
func CodeFileTaken() uint64 { return codeFileTaken.Load() }

// codeFiles are the files open in this process by path: an exec'd
// image of the same program (bash's children) maps the file once.
var codeFiles struct {
	sync.Mutex
	m map[string]*CodeFile
}

// OpenCodeFile returns the code file of the program named by key (any
// string that tells programs apart: emu gives the executable's path,
// size, mtime and inode) for code decoded with features f, mapping what
// an earlier run wrote; nil if the cache is off.
func OpenCodeFile(key string, f Features) *CodeFile {
	dir := codeFileDir()
	if dir == "" {
		return nil
	}
	stamp, ok := codeFileStamp()
	if !ok {
		return nil
	}
	h := crc32.Checksum([]byte(key), castagnoliTab)
	h2 := crc32.ChecksumIEEE([]byte(key))
	// The stamp is in the name too: two ttd binaries (or settings) that
	// run one program keep a file each rather than rewrite one in turn.
	name := strconv.FormatUint(uint64(h)<<32|uint64(h2), 16) + "-" + strconv.FormatUint(uint64(f), 16) + "-" +
		strconv.FormatUint(uint64(crc32.Checksum(stamp[:], castagnoliTab)), 16) + ".code"
	path := filepath.Join(dir, name)
	codeFiles.Lock()
	defer codeFiles.Unlock()
	if cf := codeFiles.m[path]; cf != nil {
		return cf
	}
	cf := openCodeFile(path, f, stamp)
	if codeFiles.m == nil {
		codeFiles.m = make(map[string]*CodeFile)
	}
	codeFiles.m[path] = cf
	return cf
}

// openCodeFile maps the code file at path if it is whole and this
// ttd's, else returns an empty one that SaveCodeFile may write there.
func openCodeFile(path string, f Features, stamp [16]byte) *CodeFile {
	cf := &CodeFile{path: path, features: f}
	if data, err := mapFile(path); err == nil {
		if !cf.parse(data, stamp) {
			unmapFile(data)
		}
	}
	return cf
}

var castagnoliTab = crc32.MakeTable(crc32.Castagnoli)

// errCodeFile reports a code file that is not whole or not this ttd's.
var errCodeFile = errors.New("x86: bad code file")

// parse adopts data, a mapped code file, if it is whole and made by this
// ttd binary for cf's features.
func (cf *CodeFile) parse(data []byte, stamp [16]byte) bool {
	if len(data) < codeFileHeaderSize {
		return false
	}
	var h codeFileHeader
	if _, err := binary.Decode(data[:codeFileHeaderSize], binary.LittleEndian, &h); err != nil {
		return false
	}
	if string(h.Magic[:]) != codeFileMagic || h.Stamp != stamp || h.InstSize != instSize ||
		Features(h.Features) != cf.features || h.HeadCRC != crc32.Checksum(data[:codeFileHeaderSize-4], castagnoliTab) ||
		h.Size != uint64(len(data)) || h.NBlocks > codeFileMaxBlocks || h.NSlots != uint64(codeFileSlots(int(h.NBlocks))) {
		return false
	}
	rs := codeFileHeaderSize + slotBytes(int(h.NBlocks))
	if rs > uint64(len(data)) || crc32.Checksum(data[codeFileHeaderSize:rs], castagnoliTab) != h.SlotsCRC {
		return false
	}
	// Slots and records are checked when used (find, record): a walk
	// over them all here cost as much as the CRC (1% of python3 -c pass).
	slots := slotsOf(data[codeFileHeaderSize:rs])[:h.NSlots]
	n := h.NBlocks
	cf.data, cf.slots, cf.nblocks = data, slots, int(n)
	return true
}

// slotBytes is the size of the hash table of n blocks in the file.
func slotBytes(n int) uint64 { return uint64(codeFileSlots(n)*4+7) &^ 7 }

// codeFileSlots is the size of the hash table of a file of n blocks: a
// power of two at least twice n.
func codeFileSlots(n int) int {
	s := 16
	for s < 2*n {
		s <<= 1
	}
	return s
}

// codeFileHash is pc's first slot in a table of mask+1.
func codeFileHash(pc uint64, mask uint32) uint32 {
	return uint32((pc*0x9e3779b97f4a7c15)>>32) & mask
}

// find returns the offset of the record of the block at pc, or 0.
func (cf *CodeFile) find(pc uint64) uint64 {
	if len(cf.slots) == 0 {
		return 0
	}
	mask := uint32(len(cf.slots) - 1)
	for i := codeFileHash(pc, mask); ; i = (i + 1) & mask {
		k := cf.slots[i]
		if k == 0 {
			return 0
		}
		off := uint64(k) * 8
		if off < uint64(codeFileHeaderSize)+uint64(len(cf.slots))*4 || off > uint64(len(cf.data))-fileBlockSize {
			return 0 // (not written so: the CRC matched a foreign file)
		}
		if blockAt(cf.data, off).PC == pc {
			return off
		}
	}
}

// record returns the block whose record is at off: its entry, code
// bytes and instructions, all in the file's pages, and where its
// translations start.
func (cf *CodeFile) record(off uint64) (*fileBlock, []byte, []Inst, uint64) {
	return cf.recordAt(off, true)
}

// recordAt is record, which checks the record's CRC only if crc: a
// block taken from the file had its record checked then (xlatOf).
func (cf *CodeFile) recordAt(off uint64, crc bool) (*fileBlock, []byte, []Inst, uint64) {
	e := blockAt(cf.data, off)
	if e.NInst == 0 || e.NInst > maxBlockInsts || e.NCode == 0 || e.NCode > maxBlockInsts*15 || e.NWin > 14 ||
		uint64(e.Size) > uint64(len(cf.data))-off || e.Size < uint32(recordSize(int(e.NInst), int(e.NCode), nil)) || e.Size&7 != 0 ||
		crc && recordCRC(cf.data[off:off+uint64(e.Size)]) != e.CRC {
		return nil, nil, nil, 0 // (not written so)
	}
	c := off + fileBlockSize
	i := c + uint64(e.NCode+7)&^7
	x := i + uint64(e.NInst)*instSize
	return e, cf.data[c : c+uint64(e.NCode) : c+uint64(e.NCode)], instsOf(cf.data[i:x]), x
}

// xlats returns the translations of the record whose entry is e, which
// start at off; nil if they do not fit the record.
func (cf *CodeFile) xlats(e *fileBlock, off, end uint64) []*fileXlat {
	if e.NXlat == 0 || e.NXlat > jitModes {
		return nil
	}
	xs := make([]*fileXlat, 0, e.NXlat)
	for range e.NXlat {
		fx := &fileXlat{}
		next, ok := cf.xlat(fx, e, off, end)
		if !ok {
			return nil
		}
		xs = append(xs, fx)
		off = next
	}
	return xs
}

// xlatFor returns the translation for mode of the record whose entry is
// e, which start at off, in cc's slab (take allocates nothing else for
// it); nil if it has none or they do not fit the record.
func (cf *CodeFile) xlatFor(cc *CodeCache, e *fileBlock, off, end uint64, mode uint8) *fileXlat {
	if e.NXlat == 0 || e.NXlat > jitModes {
		return nil
	}
	var fx fileXlat
	for range e.NXlat {
		next, ok := cf.xlat(&fx, e, off, end)
		if !ok {
			return nil
		}
		if fx.mode == mode {
			if len(cc.fileXlSlab) == cap(cc.fileXlSlab) {
				cc.fileXlSlab = make([]fileXlat, 0, 256)
			}
			cc.fileXlSlab = append(cc.fileXlSlab, fx)
			return &cc.fileXlSlab[len(cc.fileXlSlab)-1]
		}
		off = next
	}
	return nil
}

// xlat reads into fx the translation at off of the record whose entry
// is e and which ends at end, and returns where the next one starts;
// false if it does not fit the record.
func (cf *CodeFile) xlat(fx *fileXlat, e *fileBlock, off, end uint64) (uint64, bool) {
	if end-off < fileXlatHeadSize {
		return 0, false
	}
	h := xlatHeadAt(cf.data, off)
	var n int
	for _, k := range h.N {
		n += int(k)
	}
	o := off + fileXlatHeadSize
	c := o + uint64(4*n+7)&^7
	next := c + uint64(h.NCode+7)&^7
	if h.Mode >= jitModes || next > end || h.ChainOff < 0 || uint32(h.ChainOff) > h.NCode {
		return 0, false
	}
	offs := int32sOf(cf.data[o : o+4*uint64(n)])
	*fx = fileXlat{mode: h.Mode}
	x := &fx.x
	x.declined, x.chainOff, x.beyond, x.hot = h.Declined, h.ChainOff, h.Beyond, true
	x.code = cf.data[c : c+uint64(h.NCode) : c+uint64(h.NCode)]
	x.linkSite, offs = offs[:h.N[0]:h.N[0]], offs[h.N[0]:]
	x.linkMis, offs = offs[:h.N[1]:h.N[1]], offs[h.N[1]:]
	x.resumeK, offs = offs[:h.N[2]:h.N[2]], offs[h.N[2]:]
	x.resumeAt, offs = offs[:h.N[3]:h.N[3]], offs[h.N[3]:]
	x.idSites, offs = offs[:h.N[4]:h.N[4]], offs[h.N[4]:]
	x.tabSites = offs[:h.N[5]:h.N[5]]
	// Every site must be inside the code (4-byte ids and links,
	// 8-byte tables), every resumed instruction in the block.
	for _, v := range x.linkSite {
		if v < 0 || uint32(v)+4 > h.NCode {
			return 0, false
		}
	}
	for _, v := range x.idSites {
		if v < 0 || uint32(v)+4 > h.NCode {
			return 0, false
		}
	}
	for _, v := range x.tabSites {
		if v < 0 || uint32(v)+8 > h.NCode {
			return 0, false
		}
	}
	for _, v := range x.linkMis {
		if v < 0 || uint32(v) > h.NCode {
			return 0, false
		}
	}
	for _, v := range x.resumeAt {
		if v < 0 || uint32(v) > h.NCode {
			return 0, false
		}
	}
	for _, k := range x.resumeK {
		if k < 0 || uint32(k) >= e.NInst {
			return 0, false
		}
	}
	if len(x.resumeK) != len(x.resumeAt) || len(x.linkSite) != len(x.linkMis) {
		return 0, false
	}
	return next, true
}

// xlatOf returns the file's translation of block b for mode, nil when
// it has none (or cf is nil).
func (cf *CodeFile) xlatOf(cc *CodeCache, b *Block, mode uint8) *fileXlat {
	if cf == nil || !b.forFile || cf.features != cc.Features {
		return nil
	}
	off := cf.find(b.PC)
	if off == 0 {
		return nil
	}
	e, code, _, xo := cf.recordAt(off, false)
	if e == nil || !bytes.Equal(code, b.Bytes) {
		return nil
	}
	return cf.xlatFor(cc, e, xo, off+uint64(e.Size), mode)
}

// take returns the file's block at pc if guest memory holds its bytes
// (as CodeStore.find tests), else nil.
func (cf *CodeFile) take(cc *CodeCache, pc uint64) *Block {
	if cf.features != cc.Features {
		return nil
	}
	off := cf.find(pc)
	if off == 0 {
		return nil
	}
	e, code, insts, xo := cf.record(off)
	if e == nil {
		return nil
	}
	end := pc + uint64(len(code))
	if !cc.mem.codeIs(pc, code) || !cc.mem.codeIs(end, e.Win[:e.NWin]) || e.Cut && cc.mem.fetchable(end+uint64(e.NWin)) {
		return nil
	}
	cf.Taken.Add(1)
	codeFileTaken.Add(1)
	b := &keepZero(&cc.blockSlab, 1, blockSlabLen)[0]
	*b = Block{PC: pc, End: end, Insts: insts, Bytes: code, forFile: true,
		setsRIP: insts[len(insts)-1].Flags&InstSetsRIP != 0}
	if e.NXlat > 0 {
		// A block an earlier run translated is hot: it adopts the
		// translation the first time it runs (runBlock), rather than
		// running jitThreshold times in the interpreter first.
		mode := uint8(jitModeRun)
		if c := cc.running; c != nil {
			mode = c.jitMode
		}
		if fx := cf.xlatFor(cc, e, xo, off+uint64(e.Size), mode); fx != nil {
			b.jit = &keepZero(&cc.jitSlab, 1, blockSlabLen)[0] // (jx's new: 0.8% of a warm python3 -c pass)
			b.jit.fileXl = fx
			b.heat = jitThreshold
		}
	}
	return b
}

// UseCodeFile makes cc take blocks from f before decoding them, and
// keep in it (SaveCodeFile) the blocks at addresses fileCode approves
// (file-backed code that was never writable). f nil: no file.
func (cc *CodeCache) UseCodeFile(f *CodeFile, fileCode func(pc uint64) bool) {
	cc.file, cc.fileCode = f, fileCode
}

// CodeFile returns the code file cc uses, nil for none.
func (cc *CodeCache) CodeFile() *CodeFile { return cc.file }

// cacheable reports whether cc would keep b, which it just decoded, in
// its code file.
func (cc *CodeCache) cacheable(b *Block) bool {
	return !b.truncated && len(b.Insts) > 0 && cc.fileCode(b.PC) && cc.fileCode(b.End-1) && allStatic(b.Insts)
}

// SaveCodeFile writes cc's code file anew when cc decoded enough blocks
// the file lacks (FileMisses): the blocks of the file and cc's valid
// cacheable blocks. Call it before the address space goes away, while
// its memory still holds the code.
func (cc *CodeCache) SaveCodeFile() error {
	cf := cc.file
	if cf == nil || cc.Features != cf.features || cc.FileMisses < uint64(minCodeFileNew) && cc.FileXlats < uint64(max(1, minCodeFileNew/4)) {
		return nil
	}
	type entry struct {
		pc    uint64
		insts []Inst
		code  []byte
		win   [14]byte
		nwin  uint8
		cut   bool
		xl    []*fileXlat
	}
	// The blocks of cc in the order they first ran, with the
	// translations they have for the file, then those of the file that
	// cc does not have, in the file's order: the next run takes its
	// records one after the other, not at random over the file (whose
	// record misses were most of find and of the records' CRCs, 9% of
	// a warm python3 -c pass, in the order of the addresses).
	all := make([]entry, 0, cf.nblocks+int(cc.FileMisses))
	seen := make(map[uint64]bool, len(cc.fileOrder))
	for _, b := range cc.fileOrder {
		pc := b.PC
		if !b.valid || !b.forFile || cc.blocks[pc] != b || seen[pc] {
			continue
		}
		seen[pc] = true
		e := entry{pc: pc, insts: b.Insts, code: b.Bytes}
		if j := b.jit; j != nil && j.fileXl != nil {
			e.xl = []*fileXlat{j.fileXl}
		}
		want := 15 - int(b.Insts[len(b.Insts)-1].Len)
		var f pageFetcher
		got := f.fetch(cc.mem, b.End, e.win[:want])
		e.nwin, e.cut = uint8(got), got < want
		// The file's translations of the same block for other modes
		// (ttd record's and ttd run's of one program) stay.
		if off := cf.find(pc); off != 0 {
			if o, code, _, xo := cf.record(off); o != nil && bytes.Equal(code, e.code) && bytes.Equal(o.Win[:o.NWin], e.win[:e.nwin]) && o.Cut == e.cut {
				for _, fx := range cf.xlats(o, xo, off+uint64(o.Size)) {
					if len(e.xl) == 0 || fx.mode != e.xl[0].mode {
						e.xl = append(e.xl, fx)
					}
				}
			}
		}
		all = append(all, e)
	}
	for off := uint64(codeFileHeaderSize) + slotBytes(cf.nblocks); off < uint64(len(cf.data)); {
		e, code, insts, xo := cf.record(off)
		if e == nil {
			break
		}
		if !seen[e.PC] {
			all = append(all, entry{pc: e.PC, insts: insts, code: code, win: e.Win, nwin: e.NWin, cut: e.Cut,
				xl: cf.xlats(e, xo, off+uint64(e.Size))})
		}
		off += uint64(e.Size)
	}
	stamp, ok := codeFileStamp()
	if !ok {
		return nil
	}
	if len(all) > codeFileMaxBlocks {
		all = all[:codeFileMaxBlocks]
	}
	// The header and the hash table first, then the records one by one
	// through a small buffer: a buffer of the whole file (24 MB for
	// python3 -c pass) cost its first touch and a collection.
	rs := codeFileHeaderSize + int(slotBytes(len(all)))
	head := make([]byte, rs)
	slots := slotsOf(head[codeFileHeaderSize:rs])[:codeFileSlots(len(all))]
	mask := uint32(len(slots) - 1)
	size := rs
	for _, e := range all {
		j := codeFileHash(e.pc, mask)
		for slots[j] != 0 {
			j = (j + 1) & mask
		}
		slots[j] = uint32(size / 8)
		size += recordSize(len(e.insts), len(e.code), e.xl)
	}
	h := codeFileHeader{Stamp: stamp, Features: uint32(cf.features), InstSize: instSize,
		NBlocks: uint64(len(all)), NSlots: uint64(len(slots)), Size: uint64(size),
		SlotsCRC: crc32.Checksum(head[codeFileHeaderSize:rs], castagnoliTab)}
	copy(h.Magic[:], codeFileMagic)
	hb, _ := binary.Append(nil, binary.LittleEndian, &h)
	copy(head, hb)
	binary.LittleEndian.PutUint32(head[codeFileHeaderSize-4:], crc32.Checksum(head[:codeFileHeaderSize-4], castagnoliTab))
	err := diskcache.Write(cf.path, codeFileLimit, func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		var rec []byte
		for _, e := range all {
			n := recordSize(len(e.insts), len(e.code), e.xl)
			if cap(rec) < n {
				rec = make([]byte, n+4096)
			}
			rec = rec[:n]
			clear(rec)
			*blockAt(rec, 0) = fileBlock{PC: e.pc, NInst: uint32(len(e.insts)), NCode: uint32(len(e.code)),
				Win: e.win, NWin: e.nwin, Cut: e.cut, Size: uint32(n), NXlat: uint32(len(e.xl))}
			copy(rec[fileBlockSize:], e.code)
			xo := fileBlockSize + (len(e.code)+7)&^7
			copy(instsOf(rec[xo:]), e.insts)
			xo += len(e.insts) * instSize
			for _, fx := range e.xl {
				x := &fx.x
				h := xlatHeadAt(rec, uint64(xo))
				*h = fileXlatHead{Mode: fx.mode, Declined: x.declined, NCode: uint32(len(x.code)), ChainOff: x.chainOff, Beyond: x.beyond}
				o := xo + fileXlatHeadSize
				for i, s := range [][]int32{x.linkSite, x.linkMis, x.resumeK, x.resumeAt, x.idSites, x.tabSites} {
					h.N[i] = uint16(len(s))
					o += 4 * copy(int32sOf(rec[o:o+4*len(s)]), s)
				}
				copy(rec[(o+7)&^7:], x.code)
				xo += xlatSize(x)
			}
			blockAt(rec, 0).CRC = recordCRC(rec)
			if _, err := w.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Later address spaces of this process (exec'd images) use the new
	// file; cc's blocks keep pointing into the old mapping, which stays.
	codeFiles.Lock()
	defer codeFiles.Unlock()
	if n := openCodeFile(cf.path, cf.features, stamp); n.nblocks > 0 {
		codeFiles.m[cf.path] = n
		cc.file, cc.FileMisses = n, 0
	}
	return nil
}

// codeFileStamp identifies the running ttd binary and where its
// handlers are: a file's instructions hold handler pointers, right only
// for the binary that wrote them.
var codeFileStamp = sync.OnceValues(func() ([16]byte, bool) {
	var s [16]byte
	exe, err := os.Executable()
	if err != nil {
		return s, false
	}
	fi, err := os.Stat(exe)
	if err != nil || !fixedAddresses(exe) {
		return s, false
	}
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, uint64(fi.Size()))
	b = binary.LittleEndian.AppendUint64(b, uint64(fi.ModTime().UnixNano()))
	b = append(b, exe...)
	b = append(b, fileIdentity(fi)...)
	// Translations depend on the host's instructions (BMI2's rorx…)
	// and on the knobs of the translator.
	b = appendHostID(b)
	for _, v := range []string{"TTD_HOSTISA", "TTD_JITSKIP", "TTD_JITREGS"} {
		b = append(append(b, os.Getenv(v)...), 0)
	}
	binary.LittleEndian.PutUint64(s[:], uint64(crc32.Checksum(b, castagnoliTab))<<32|uint64(crc32.ChecksumIEEE(b)))
	binary.LittleEndian.PutUint64(s[8:], uint64(handlerAddr(opNop)))
	return s, true
})

// fixedAddresses reports whether the executable at exe is loaded at the
// addresses it was linked for (ELF type ET_EXEC, as `go build` makes it
// on linux/amd64): a position-independent ttd (-buildmode=pie) is
// loaded elsewhere each run, its handler pointers with it, and would
// write a file every run that no later run could use.
func fixedAddresses(exe string) bool {
	f, err := os.Open(exe)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [18]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return string(h[:4]) == "\x7fELF" && binary.LittleEndian.Uint16(h[16:]) == 2 // ET_EXEC
}

// allStatic reports whether every handler of insts is a static function
// of the binary (staticHandler).
func allStatic(insts []Inst) bool {
	for i := range insts {
		if !staticHandler(insts[i].Fn) {
			return false
		}
	}
	return true
}

// sameBlock reports whether a and b are alike in what decoding gives
// (tests compare blocks from a file with decoded ones).
func sameBlock(a, b *Block) bool {
	if a.PC != b.PC || a.End != b.End || len(a.Insts) != len(b.Insts) || !bytes.Equal(a.Bytes, b.Bytes) ||
		a.setsRIP != b.setsRIP || a.firstPage() != b.firstPage() || a.lastPage() != b.lastPage() {
		return false
	}
	for i := range a.Insts {
		x, y := a.Insts[i], b.Insts[i]
		if funcPC(x.Fn) != funcPC(y.Fn) {
			return false
		}
		x.Fn, y.Fn = nil, nil
		if !bytes.Equal(instBytes(&x), instBytes(&y)) {
			return false
		}
	}
	return true
}
