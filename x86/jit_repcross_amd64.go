package x86

import as "ttd/internal/amd64asm"

// Logged reads across words in a replay.
//
// A read that crosses an 8-byte word is two reads of the prediction
// cache per 8 bytes (predict.Split); when one of them is a logged read
// (the replay's Stop read), translated code used to leave before the
// instruction for the interpreter, which takes the logged value from the
// reader (Replay.memReadSlow). sort -n left translated code so 1.7
// million times in 1.2e9 instructions, before a MOVDQU reading unaligned
// lines (TTD_STATS=1 ttd replay), and `ttd calls` drained its record log
// at each of those exits. repCrossCode takes the logged pieces from the
// reads ReadFeeder handed translated code (CPU.jitFeed), as fedCode does
// for a read within one word.
//
// What the interpreter does with such a read: each piece in order gets
// the logged value if it is the Stop read (the cache takes it: the
// piece's bytes, or for a piece of one byte the whole logged word, which
// memory takes too: Replay.logged), or the cache's prediction if not.
// Memory is left as it is otherwise. repCrossCode handles the common
// case, where every piece's value is what memory holds (memory lacks
// only the bytes of mapped files that the trace does not carry): it
// checks that first, with nothing changed, and leaves otherwise (or when
// the feed runs out); then the cache takes memory's bytes of the read,
// and the words of logged one-byte pieces, the fed reads are consumed,
// and the read's value is memory's, as on the way without logged reads.

// jitFeedCrossReads turns repCrossCode on (tests turn it off to compare).
var jitFeedCrossReads = true

// feedsCrossReads reports whether the cross code of the read being
// translated takes its logged pieces from the feed rather than leave:
// only for 16- and 32-byte reads. Every load of 2, 4 or 8 bytes has
// cross code in a replay's translation, and repCrossCode for them all
// made sqlite3's host code 73% bigger (2197 to 3806 KiB) for 62
// thousand of sort -n's 1.2e9 instructions' exits (231 to 169
// thousand).
func (t *jitT) feedsCrossReads(c jitCross) bool {
	return jitFeedCrossReads && t.pred && !t.log && c.size >= 16 && c.size <= 32
}

// Stack slots of repCrossCode, below the saved RBX, RCX and RDX.
const (
	rcMask = 0  // bit k: piece k was a logged piece of one byte
	rcFeed = 8  // the next fed read (CPU.jitFeedI as it will be)
	rcStop = 16 // the next Stop read, minus one (CPU.jitStop as it will be)
)

// repCrossCode emits the code, at in, that makes c's read (at RSI, its
// host address in RDI, its cache byte in RDX, the bytes not running past
// the cache's last word) when one of its pieces is the Stop read.
func (t *jitT) repCrossCode(c jitCross, in as.Label) {
	a := &t.a
	a.Bind(in)
	halves := max(c.size/8, 1)
	hsize := min(c.size, 8)
	out := t.repEnter()
	// RAX: the cache word of RSI's word (the next ones follow it).
	a.MovRR(8, as.RAX, as.RSI)
	a.ALURM(as.AND, 8, as.RAX, as.M(hCPU, offJitMask))
	a.ALURI(as.AND, 8, as.RAX, -8)
	a.ALURR(as.ADD, 8, as.RAX, hSlots)
	highCL := func() { // the last 8-off bytes of a word: CL = 8*off
		a.MovRR(4, as.RCX, as.RSI)
		a.ALURI(as.AND, 4, as.RCX, 7)
		a.ShiftRI(as.SHL, 4, as.RCX, 3)
	}
	lowCL := func() { // the first hsize-8+off bytes: CL = 64 - 8*(hsize-8+off)
		highCL()
		a.NegR(4, as.RCX)
		a.ALURI(as.ADD, 4, as.RCX, int64(128-8*hsize))
	}
	for h := 0; h < halves; h++ {
		t.repPiece(c, int32(8*h), int32(2*h), highCL, true, out)
		t.repPiece(c, int32(8*h+8), int32(2*h+1), lowCL, false, out)
	}
	// Every piece is memory's: the cache takes the words of the logged
	// pieces of one byte...
	for k := 0; k < 2*halves; k++ {
		d := int32(8 * (k/2 + k%2))
		skip := a.NewLabel()
		a.TestMI(4, as.M(as.RSP, rcMask), int64(1)<<k)
		a.Jcc(4, skip) // je
		a.MovRR(4, as.RDX, as.RSI)
		a.ALURI(as.AND, 4, as.RDX, 7)
		a.NegR(8, as.RDX)
		a.MovRM(8, as.RBX, as.Mem{Base: as.RDI, Index: as.RDX, Disp: d})
		a.MovMR(8, as.M(as.RAX, d), as.RBX)
		a.Bind(skip)
	}
	// ... the fed reads are consumed and the next Stop set, and the
	// cache takes the read's bytes (memory's, in c.vals).
	t.repLeave()
	if c.size < 8 {
		a.MovMR(c.size, as.Mem{Base: hSlots, Index: as.RDX}, c.vals[0])
	} else {
		for i := 0; i < c.size/8; i++ {
			a.MovMR(8, as.Mem{Base: hSlots, Index: as.RDX, Disp: int32(8 * i)}, c.vals[i])
		}
	}
	a.Lea(8, hReads, as.M(hReads, int32(c.extra)))
	a.MovRI(hMark, uint64(c.mark))
	a.Jmp(c.back)
	t.repOut(out, c.exit)
}

// repEnter saves RBX, RCX and RDX and makes repCrossCode's and
// repWordsCode's stack slots; it returns the label of their way out.
func (t *jitT) repEnter() as.Label {
	a := &t.a
	a.Push(as.RBX)
	a.Push(as.RCX)
	a.Push(as.RDX)
	a.MovRM(8, as.RAX, as.M(hCPU, offStop))
	a.Push(as.RAX) // rcStop
	a.MovRM(8, as.RAX, as.M(hCPU, offJitFeedI))
	a.Push(as.RAX) // rcFeed
	a.ALURR(as.XOR, 4, as.RAX, as.RAX)
	a.Push(as.RAX) // rcMask
	return a.NewLabel()
}

// repLeave consumes the fed reads the code took and sets the next Stop,
// and restores RBX, RCX and RDX.
func (t *jitT) repLeave() {
	a := &t.a
	a.Pop(as.RAX) // rcMask
	a.Pop(as.RAX) // rcFeed
	a.MovMR(8, as.M(hCPU, offJitFeedI), as.RAX)
	a.Pop(as.RAX) // rcStop
	a.MovMR(8, as.M(hCPU, offStop), as.RAX)
	a.Pop(as.RDX)
	a.Pop(as.RCX)
	a.Pop(as.RBX)
}

// repOut emits the way out at out: the stack as it was, then exit.
func (t *jitT) repOut(out, exit as.Label) {
	a := &t.a
	a.Bind(out)
	a.ALURI(as.ADD, 8, as.RSP, 24)
	a.Pop(as.RDX)
	a.Pop(as.RCX)
	a.Pop(as.RBX)
	a.Jmp(exit)
}

// repLogged jumps to notStop unless the read whose number is hReads +
// pos + 1 is the next Stop; if it is, it leaves the address of the next
// fed read's value in RDX, or jumps to out if the feed has none.
func (t *jitT) repLogged(pos int32, notStop, out as.Label) {
	a := &t.a
	a.Lea(8, as.RDX, as.M(hReads, pos))
	a.ALURM(as.CMP, 8, as.RDX, as.M(as.RSP, rcStop))
	a.Jcc(5, notStop) // jne
	a.MovRM(8, as.RDX, as.M(as.RSP, rcFeed))
	a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offJitFeedN))
	a.Jcc(3, out) // jae: not fed
	a.ShiftRI(as.SHL, 8, as.RDX, 4)
	a.Lea(8, as.RDX, as.Mem{Base: hCPU, Index: as.RDX, Disp: offJitFeed + 8})
}

// repNext takes the next fed read; the next Stop is its number, or the
// first logged read after the fed ones (as in fedCode). Clobbers RDX.
func (t *jitT) repNext() { t.nextFed(as.RDX, as.M(as.RSP, rcFeed), as.M(as.RSP, rcStop)) }

// repPiece emits the check of one piece of repCrossCode: the piece lies
// in the aligned word d bytes after RSI's (in memory and, from RAX, in
// the cache) and is the read's k-th; shift sets CL as for recPiece (a
// piece of one byte is the one whose CL is 56). A logged piece (the next
// Stop) takes the next fed read, which must be memory's bytes (its whole
// word for a piece of one byte), and sets the next Stop; a predicted one
// must be memory's bytes in the cache. Otherwise, or when the feed has no
// read left, the code jumps to out.
func (t *jitT) repPiece(c jitCross, d, k int32, shift func(), high bool, out as.Label) {
	a := &t.a
	keep := as.SHR
	if !high {
		keep = as.SHL
	}
	predicted, word, next, done := a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel()
	// RBX: memory's word (RDI - off + d).
	a.MovRR(4, as.RDX, as.RSI)
	a.ALURI(as.AND, 4, as.RDX, 7)
	a.NegR(8, as.RDX)
	a.MovRM(8, as.RBX, as.Mem{Base: as.RDI, Index: as.RDX, Disp: d})
	shift()
	t.repLogged(c.reads+k, predicted, out)
	a.ALURI(as.CMP, 4, as.RCX, 56)
	a.Jcc(4, word) // je: one byte, logged with its word
	// The piece's bytes of memory, at the bottom of RBX.
	if high {
		a.ShiftRCL(as.SHR, 8, as.RBX)
	} else {
		a.ShiftRCL(as.SHL, 8, as.RBX)
		a.ShiftRCL(as.SHR, 8, as.RBX)
	}
	a.ALURM(as.CMP, 8, as.RBX, as.M(as.RDX, 0))
	a.Jcc(5, out)
	a.Jmp(next)
	a.Bind(word)
	a.ALURM(as.CMP, 8, as.RBX, as.M(as.RDX, 0))
	a.Jcc(5, out)
	a.ALUMI(as.OR, 4, as.M(as.RSP, rcMask), int64(1)<<k)
	a.Bind(next)
	t.repNext()
	a.Jmp(done)
	// Predicted: the piece's bytes of the cache's word are memory's.
	a.Bind(predicted)
	a.MovRM(8, as.RDX, as.M(as.RAX, d))
	a.ALURR(as.XOR, 8, as.RDX, as.RBX)
	a.ShiftRCL(keep, 8, as.RDX)
	a.Jcc(5, out) // jnz
	a.Bind(done)
}

// jitRepWords is the out-of-line code of a replay's read of words 8-byte
// aligned words (load128, loadWide: CPU.load128 and loadY read 8 bytes at
// a time) of which one is the Stop read: the block's reads-th read is
// the first word's; RDI is the host address and RDX the cache byte.
type jitRepWords struct {
	in, back, exit as.Label
	words          int
	reads          int32
}

// repWords returns the label to which the Stop checks of an aligned read
// of words words (the block's sreads-th read first) jump, and whose code
// goes on to back, or exit when the interpreter must read.
func (t *jitT) repWords(words int, back, exit as.Label) as.Label {
	if !jitFeedCrossReads || !t.pred || t.log {
		return exit
	}
	w := jitRepWords{in: t.a.NewLabel(), back: back, exit: exit, words: words, reads: t.sreads}
	t.repWordsList = append(t.repWordsList, w)
	return w.in
}

// repWordsCode emits w: as Replay.MemRead does with each word in turn,
// a logged word takes the next fed read, and the cache predicts the
// others. The code checks first that each is memory's word (and leaves
// otherwise: the interpreter makes memory hold it), then the cache takes
// memory's words and the fed reads are consumed. The read's value is
// memory's, as on the way without a Stop read.
func (t *jitT) repWordsCode(w jitRepWords) {
	a := &t.a
	a.Bind(w.in)
	out := t.repEnter()
	a.Lea(8, as.RAX, as.Mem{Base: hSlots, Index: as.RDX})
	for k := int32(0); k < int32(w.words); k++ {
		predicted, done := a.NewLabel(), a.NewLabel()
		a.MovRM(8, as.RBX, as.M(as.RDI, 8*k))
		t.repLogged(w.reads+k, predicted, out)
		a.ALURM(as.CMP, 8, as.RBX, as.M(as.RDX, 0))
		a.Jcc(5, out)
		t.repNext()
		a.Jmp(done)
		a.Bind(predicted)
		a.ALURM(as.CMP, 8, as.RBX, as.M(as.RAX, 8*k))
		a.Jcc(5, out)
		a.Bind(done)
	}
	for k := int32(0); k < int32(w.words); k++ {
		a.MovRM(8, as.RBX, as.M(as.RDI, 8*k))
		a.MovMR(8, as.M(as.RAX, 8*k), as.RBX)
	}
	t.repLeave()
	a.Jmp(w.back)
	t.repOut(out, w.exit)
}
