package x86

import "ttd/predict"

// Access logging: translated code that tracks every access. A replay that
// must know which bytes a program read and wrote (the reader's tracking,
// from which the access summaries are built) used to run every
// instruction in the interpreter, which calls Observer.MemRead and
// MemWrite for each access. An Observer that implements AccessLogger
// lets translated code run there instead: the code checks the
// prediction cache as a replay's does (jitModeReplay) and in addition
// appends each access that passes its TLB check — address, size, read or
// write — to a log in the CPU (no Go call per access). Go hands the log
// to LoggedAccesses whenever translated code returns, before anything
// else happens in Go, so the accesses arrive in order with the
// interpreter's MemRead and MemWrite calls and the events between runs.
//
// The interpreter's instructions still go through MemRead and MemWrite:
// CPU.Pred stays nil and only translated code uses the cache that
// AccessLogCache returns (CPU.jitPred). Both count the reads of the
// cache the same way, so they can take turns within a block.
//
// A recorder that builds the access summaries while it records is an
// AccessLogger and a ReadLogger, and leaves CPU.Pred nil: its translated
// code then logs the reads the cache misses, as while recording
// (jitModeRecord), and every access (jitModeRecordTrack).
//
// An access logged is one that passed its TLB check; if the instruction
// then leaves translated code (a miss of the prediction cache, a full
// log), the interpreter runs it again and makes the same access, which
// a tracker records twice: marking bytes is idempotent.
type AccessLogger interface {
	// AccessLogCache returns the prediction cache of the thread c runs,
	// for translated code to check while logging accesses, or nil when
	// every access must go through MemRead and MemWrite (then the
	// interpreter runs everything, as without an AccessLogger).
	AccessLogCache(c *CPU) *predict.Cache
	// LoggedAccesses receives the accesses translated code made, in
	// order.
	LoggedAccesses(c *CPU, acc []LoggedAccess)
}

// RunAccessLogger, when an AccessLogger implements it, lets translated
// code log every access where AccessLogCache gives no cache because
// the observer needs none: its memory holds what the program read (the
// replay of a trace that logs no reads). The code then runs as `ttd
// run`'s (jitModeRun, no prediction cache) and logs every access that
// passes its TLB check (jitModeRunTrack). The summaries of such a trace
// were built in the interpreter: 7.2 s of sort -n's 7.6 s first search.
type RunAccessLogger interface {
	// RunAccessLog reports whether translated code may run c so.
	RunAccessLog(c *CPU) bool
}

// LoggedAccess is one memory access of translated code: Size bytes at
// Addr (a 16- or 32-byte vector access is one entry), a write when Write.
type LoggedAccess struct {
	Addr uint64
	Info uint64 // size | accWrite
}

// accWrite marks a write in LoggedAccess.Info.
const accWrite = 1 << 8

// Size is the access's size in bytes.
func (a LoggedAccess) Size() int { return int(a.Info & 0xff) }

// Write reports whether the access wrote.
func (a LoggedAccess) Write() bool { return a.Info&accWrite != 0 }

// WriteBit is 1 for a write, 0 for a read (an index, without a branch).
func (a LoggedAccess) WriteBit() uint64 { return a.Info >> 8 & 1 }

// accLogSize is how many accesses translated code logs before it leaves
// to hand them over: 16 KiB, as CPU.jitLog.
const accLogSize = 1024

// accLog is the CPU's access log (CPU.acc).
type accLog struct {
	logger AccessLogger
	// tlb is Memory's read TLB, which translated code checks (the
	// interpreter's CPU.rtlb misses while an Observer sees every access).
	tlb *[tlbSize]tlbEntry
	n   uint64
	log [accLogSize]LoggedAccess
	// marks is the page lookup of an AccessMarker, masks accMasks
	// (accmark.go): translated code reads both.
	marks *MarkTable
	masks [6][64]uint64
}

// syncAccessLog turns access logging on for a Run whose observer
// implements AccessLogger and asks for it (syncJIT, after its own
// settings: it applies only where every access would otherwise go
// through the observer).
func (c *CPU) syncAccessLog() {
	c.acc.logger = nil
	if !jitEnabled || c.Pred != nil || c.Obs == nil {
		return
	}
	al, ok := c.Obs.(AccessLogger)
	if !ok {
		return
	}
	p := al.AccessLogCache(c)
	if p == nil {
		if rl, ok := al.(RunAccessLogger); ok && rl.RunAccessLog(c) {
			c.acc.logger = al
			c.acc.tlb = c.Mem.rtlb
			c.jitOK = true
			c.jitPred, c.jitFeeder = nil, nil
			c.jitMode = jitModeRunTrack
			c.syncAccessMarks(al)
		}
		return
	}
	c.acc.logger = al
	c.acc.tlb = c.Mem.rtlb
	c.jitOK = true
	c.jitPred = p
	c.jitMode = jitModeTrack
	c.jitFeeder, _ = c.Obs.(ReadFeeder)
	if _, ok := c.Obs.(ReadLogger); ok {
		// A recording: translated code logs the reads the cache
		// misses as well (jitModeRecord), and is fed none.
		c.jitMode = jitModeRecordTrack
		c.jitFeeder = nil
		c.syncAccessMarks(al)
	}
	c.jitSlots, c.jitSlotMask = p.Words()
}

// drainAccesses hands the logged accesses to the AccessLogger.
func (c *CPU) drainAccesses() {
	c.acc.logger.LoggedAccesses(c, c.acc.log[:c.acc.n])
	c.acc.n = 0
}
