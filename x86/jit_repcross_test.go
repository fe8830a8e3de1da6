package x86

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"ttd/predict"
)

// feedObserver records as the recorder does (the interpreter alone),
// keeping the logged reads, and replays as the reader does: a read that
// is the next logged one (the cache's Stop) takes the logged value (a
// piece of one byte its whole word, which memory takes too), the others
// the cache's prediction, and memory takes a read within one word that
// it did not hold (Replay.MemRead, memReadSlow, logged). It hands the
// logged reads to translated code (ReadFeeder) as the reader does.
type feedObserver struct {
	predObserver
	record   bool
	logs     []FedRead
	next     int
	memReads int // the reads of 16 bytes (movups) that reached MemRead
}

func (o *feedObserver) setStop(c *CPU) {
	c.Pred.Stop = 0
	if o.next < len(o.logs) {
		c.Pred.Stop = o.logs[o.next].Reads
	}
}

func (o *feedObserver) MemRead(c *CPU, addr uint64, size int, img uint64) uint64 {
	if in := c.CurrentInst(); in != nil && in.Op == x86asm.MOVUPS {
		o.memReads++
	}
	var got uint64
	shift, a, n0 := uint(0), addr, size
	for size > 0 {
		n := predict.Split(a, size)
		v := img >> shift & (1<<(8*uint(n)) - 1)
		if n == 8 {
			v = img
		}
		c.Pred.Reads++
		switch {
		case o.record && n == 1:
			if w, hit := c.Pred.ReadWord(a, 1, v, c.Mem.Read64(a&^7)); !hit {
				o.logs = append(o.logs, FedRead{c.Pred.Reads, w})
			}
		case o.record:
			if !c.Pred.Read(a, n, v) {
				o.logs = append(o.logs, FedRead{c.Pred.Reads, v})
			}
		case o.next < len(o.logs) && o.logs[o.next].Reads == c.Pred.Reads:
			v = o.logs[o.next].Val
			o.next++
			if n == 1 {
				if c.Mem.Read64(a&^7) != v {
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], v)
					c.Mem.Poke(a&^7, b[:])
				}
				v = c.Pred.LoggedWord(a, 1, v)
			} else {
				c.Pred.Update(a, n, v)
			}
			o.setStop(c)
		default:
			v = c.Pred.Predict(a, n)
		}
		got |= v << shift
		shift += 8 * uint(n)
		a += uint64(n)
		size -= n
	}
	if !o.record && predict.Split(addr, n0) == n0 && got != img {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], got)
		c.Mem.Poke(addr, b[:n0])
	}
	return got
}

func (o *feedObserver) FeedReads(c *CPU, buf []FedRead) (n int, after uint64) {
	n = copy(buf, o.logs[o.next:])
	if o.next+n < len(o.logs) {
		after = o.logs[o.next+n].Reads
	}
	return n, after
}

func (o *feedObserver) ConsumedReads(c *CPU, n int) {
	o.next += n
	o.setStop(c)
}

// TestJITReplayFeedsWideAndCrossReads: while replaying, translated code
// takes the logged pieces of a read across words, and the logged words
// of an aligned 16-byte read, from the feed (jit_repcross_amd64.go)
// instead of leaving for the interpreter: the replay ends with the same
// registers, cache, count of reads, logged reads consumed and memory as
// the interpreter's, for reads of 2, 4, 8 and 16 bytes at every offset
// (pieces of one byte included), with memory that holds what the
// recording read and with memory that lacks some of it (a mapped file's
// bytes: the code leaves then). The 16-byte reads reach the observer a
// quarter as often as with repCrossCode and repWordsCode off (the test
// checks that it tests something); reads of 2, 4 and 8 bytes across
// words still leave (feedsCrossReads).
func TestJITReplayFeedsWideAndCrossReads(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	p := newSlotLoads()
	p.loads(0, true)
	code, start := p.code, p.start
	// An aligned read whose first word is the cache's last (64 words,
	// at the third iteration): its second word's is the first
	// (CPU.load128).
	code = d32(append(code, 0x0f, 0x10, 0x86), 0x11e8) // movups 0x11e8(%rsi), %xmm0
	code = append(code, 0x66, 0x0f, 0xd4, 0xc8)        // paddq %xmm0, %xmm1
	code = d32(append(code, 0x48, 0x01, 0x86), 1005)   // add %rax, 1005(%rsi)
	code = append(code, 0x48, 0x81, 0xc6)              // add $8, %rsi (other slots)
	code = d32(code, 8)
	code = append(code, 0x41, 0xff, 0xc8) // dec %r8d
	code = append(code, 0x0f, 0x85)       // jnz to the start
	code = d32(code, start-(len(code)+4))
	code = append(code, 0x0f, 0x05) // syscall
	const data = 0x600000
	page := func(stale bool) *Page {
		p := NewPage()
		for i := range p.Data {
			p.Data[i] = byte(i*29 + 3)
			// Not what the recording read: scattered bytes, then one
			// byte of every second word (a 16-byte read's other word
			// may be the logged one).
			if stale && (i < 512 && i%13 == 0 || i >= 512 && i < 1024 && i%16 == 11) {
				p.Data[i] ^= 0x11
			}
		}
		return p
	}
	page2 := func() *Page {
		p := NewPage()
		for i := range p.Data {
			p.Data[i] = byte(i*13 + 5)
		}
		return p
	}
	cacheFill := func(c *CPU, p *Page) {
		// The cache holds memory but for every fifth byte of the first
		// word of every 16: some pieces and words are logged, some
		// not, one-byte ones included.
		b := append([]byte(nil), p.Data[:2048]...)
		for i := range b {
			if i%5 == 0 && i%16 < 8 {
				b[i] ^= 0x40
			}
		}
		c.Pred.Fill(data, b)
	}
	newCPU := func(p *Page, obs *feedObserver) *CPU {
		c := newTestCPU(t, code)
		c.Mem.SetPage(data>>PageShift, p, PermRead|PermWrite)
		c.Mem.SetPage(data>>PageShift+1, page2(), PermRead|PermWrite)
		c.Pred, c.Obs = predict.New(6), obs
		cacheFill(c, p)
		c.R[RSI], c.R[R8] = data, 3
		return c
	}
	// The recording.
	rec := &feedObserver{record: true}
	func() {
		defer SetJIT(SetJIT(false, 0))
		c := newCPU(page(false), rec)
		runToSyscallJIT(t, c, 100000, false)
	}()
	if len(rec.logs) < 20 {
		t.Fatalf("the recording logged %d reads", len(rec.logs))
	}
	type result struct {
		state    string
		memReads int
	}
	replay := func(jit, stale bool) result {
		defer SetJIT(SetJIT(jit, 0))
		p := page(stale)
		obs := &feedObserver{logs: rec.logs}
		c := newCPU(p, obs)
		obs.setStop(c)
		runToSyscallJIT(t, c, 100000, jit)
		h := fnv.New64a()
		h.Write(p.Data[:])
		return result{
			state: fmt.Sprintf("%s, consumed %d, regs %x, x1 %x, memory %x",
				predState(c, &obs.predObserver), obs.next, c.R, c.X[1], h.Sum64()),
			memReads: obs.memReads,
		}
	}
	for _, stale := range []bool{false, true} {
		want, got := replay(false, stale), replay(true, stale)
		if got.state != want.state {
			t.Errorf("stale %v: interpreted %s\ntranslated %s", stale, want.state, got.state)
		}
		func() {
			defer func(on bool) { jitFeedCrossReads = on }(jitFeedCrossReads)
			jitFeedCrossReads = false
			off := replay(true, stale)
			if off.state != want.state {
				t.Errorf("stale %v: without the feed, translated %s", stale, off.state)
			}
			t.Logf("stale %v: reads that reached the observer: interpreted %d, translated %d, without the feed %d",
				stale, want.memReads, got.memReads, off.memReads)
			// Only the read at the cache's last word leaves (slotWrap).
			if !stale && (got.memReads > 4 || off.memReads < 40) {
				t.Errorf("stale %v: %d reads reached the observer, %d without the feed", stale, got.memReads, off.memReads)
			}
		}()
	}
}
