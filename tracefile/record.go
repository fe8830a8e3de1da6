package tracefile

import "strconv"

// Kind says which of a Record's fields is valid.
type Kind uint8

// Record kinds.
const (
	KindInvalid     Kind = iota
	KindMemRead          // Record.MemRead
	KindKeyFrame         // Record.KeyFrame
	KindThreadStart      // Record.ThreadStart
	KindThreadExit       // Record.ThreadExit
	KindCodeBytes        // Record.CodeBytes
	KindSyscall          // Record.Syscall
	KindNonDet           // Record.NonDet
	KindSignal           // Record.Signal
	KindMmap             // Record.Mmap
	KindMunmap           // Record.Munmap
	KindMprotect         // Record.Mprotect
	KindModule           // Record.Module
	KindCheckpoint       // Record.Checkpoint
	KindExit             // Record.Exit
	KindOpaque           // Record.Opaque
	// KindUnknown is a record of a newer minor version: Opaque.Tag holds
	// its tag byte and Opaque.Bytes its body. Readers may skip it.
	KindUnknown
	numKinds
)

var kindNames = [...]string{
	KindInvalid:     "Invalid",
	KindMemRead:     "MemRead",
	KindKeyFrame:    "KeyFrame",
	KindThreadStart: "ThreadStart",
	KindThreadExit:  "ThreadExit",
	KindCodeBytes:   "CodeBytes",
	KindSyscall:     "Syscall",
	KindNonDet:      "NonDet",
	KindSignal:      "Signal",
	KindMmap:        "Mmap",
	KindMunmap:      "Munmap",
	KindMprotect:    "Mprotect",
	KindModule:      "Module",
	KindCheckpoint:  "Checkpoint",
	KindExit:        "Exit",
	KindOpaque:      "Opaque",
	KindUnknown:     "Unknown",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// KeyFrameKind says why a key frame was written. It is a 4-bit value: the
// format stores any value 0..15; the constants are the recorder's.
type KeyFrameKind uint8

// Key-frame kinds.
const (
	KeyFrameSyscall      KeyFrameKind = 1 // a syscall instruction
	KeyFrameLocked       KeyFrameKind = 2 // a lock-prefixed or implicitly locked instruction
	KeyFrameFence        KeyFrameKind = 3 // mfence, lfence, sfence and other serialising instructions
	KeyFrameThreadSwitch KeyFrameKind = 4 // the scheduler switched to Tid
	KeyFrameSignal       KeyFrameKind = 5 // a signal delivery
	KeyFrameThreadStart  KeyFrameKind = 6
	KeyFrameThreadExit   KeyFrameKind = 7
	KeyFrameCheckpoint   KeyFrameKind = 8
	// MaxKeyFrameKind is the largest value a key frame's kind can take.
	MaxKeyFrameKind KeyFrameKind = 15
)

var keyFrameNames = [...]string{"0", "Syscall", "Locked", "Fence", "ThreadSwitch", "Signal", "ThreadStart", "ThreadExit", "Checkpoint"}

func (k KeyFrameKind) String() string {
	if int(k) < len(keyFrameNames) && k != 0 {
		return keyFrameNames[k]
	}
	return "KeyFrameKind(" + strconv.Itoa(int(k)) + ")"
}

// NonDetKind says which non-deterministic instruction a NonDet record is
// for. The format stores any byte; the constants are the recorder's.
type NonDetKind uint8

// Non-deterministic instruction kinds.
const (
	NonDetRDTSC  NonDetKind = 1 // Values: edx:eax as one value
	NonDetRDTSCP NonDetKind = 2 // Values: tsc, ecx
	NonDetCPUID  NonDetKind = 3 // Values: eax, ebx, ecx, edx
	NonDetRDRAND NonDetKind = 4
	NonDetRDSEED NonDetKind = 5
	NonDetXGETBV NonDetKind = 6
	NonDetRDPID  NonDetKind = 7
	// NonDetOther is any other instruction whose result the host decides
	// (rcpps and rsqrtps, whose approximations differ between CPUs).
	NonDetOther NonDetKind = 8
)

// ExitKind says how the recorded process ended.
type ExitKind uint8

// Exit kinds.
const (
	ExitExited  ExitKind = 1 // exit_group or the last thread's exit; Code is the status
	ExitKilled  ExitKind = 2 // a signal's default action killed it; Signo
	ExitCrashed ExitKind = 3 // a fault killed it; Signo and FaultAddr
	ExitStopped ExitKind = 4 // the recording was stopped before the program ended
)

func (k ExitKind) String() string {
	switch k {
	case ExitExited:
		return "exited"
	case ExitKilled:
		return "killed"
	case ExitCrashed:
		return "crashed"
	case ExitStopped:
		return "stopped"
	}
	return "ExitKind(" + strconv.Itoa(int(k)) + ")"
}

// MemRead is a memory read the thread's prediction cache did not predict.
// It belongs to the current thread: the Tid of the last KeyFrame or
// Checkpoint.CurrentTid before it.
type MemRead struct {
	// ReadDelta is the number of the thread's reads since its previous
	// logged read (or since the last Checkpoint, or its start): the
	// reader counts reads to know which read this is.
	ReadDelta uint64
	// Value holds the Size bytes read, little-endian; higher bytes are 0.
	Value uint64
	// Size is 1..8.
	Size uint8
}

// KeyFrame orders the threads' streams: a point of the global sequence.
type KeyFrame struct {
	Kind KeyFrameKind
	Tid  int
	// Seq is the global key-frame sequence number.
	Seq uint64
	// Position is the number of instructions retired by all threads
	// before this point.
	Position uint64
}

// ThreadStart records a new thread (the first thread too, with ParentTid 0).
type ThreadStart struct {
	Tid, ParentTid int
}

// ThreadExit records the end of a thread.
type ThreadExit struct {
	Tid    int
	Status int
}

// CodeBytes are guest code bytes at Addr, recorded once per version of a
// page or block.
type CodeBytes struct {
	Addr  uint64
	Bytes []byte
}

// MemRange is guest memory written by the kernel or by signal delivery.
type MemRange struct {
	Addr  uint64
	Bytes []byte
}

// Span is Len bytes of guest memory at Addr.
type Span struct {
	Addr, Len uint64
}

// Syscall is a completed system call: its result and the guest memory the
// kernel wrote, in order. Predicted is memory it also wrote but the
// record leaves out, because the recorder's prediction cache held those
// bytes (the reader takes them from its own); it overlaps no Writes.
type Syscall struct {
	Tid       int
	Nr        int
	Args      [6]uint64
	Result    int64
	Writes    []MemRange
	Predicted []Span
}

// NonDet holds the results of a non-deterministic instruction.
type NonDet struct {
	Tid    int
	Kind   NonDetKind
	Values []uint64
}

// Signal is a signal delivery: the signal frame written to guest memory
// and, as an opaque blob, the thread's registers after delivery.
type Signal struct {
	Tid       int
	Signo     int
	Code      int // si_code
	Addr      uint64
	FrameAddr uint64
	Writes    []MemRange
	Regs      []byte
	Predicted []Span // as in Syscall
}

// Mmap is a new mapping; Path is empty for anonymous memory.
type Mmap struct {
	Addr, Len   uint64
	Prot, Flags int
	Offset      uint64
	FileLen     uint64 // bytes of the mapping backed by the file
	Path        []byte
	// Object names the shared memory the mapping shows, 0 for a private
	// mapping; Offset is then the offset of Addr in it (shared.go).
	Object uint64
}

// Munmap removes mappings.
type Munmap struct {
	Addr, Len uint64
}

// Mprotect changes the protection of mappings.
type Mprotect struct {
	Addr, Len uint64
	Prot      int
}

// Module is a loaded executable or library; Embedded optionally holds
// the file itself (ttd record --embed-binaries).
type Module struct {
	Path     []byte
	BuildID  []byte
	LoadAddr uint64
	Size     uint64
	Embedded []byte
}

// ThreadState is one thread's state in a Checkpoint.
type ThreadState struct {
	Tid int
	// ICount is the number of instructions the thread has retired.
	ICount uint64
	// Regs is the recorder's opaque register blob.
	Regs []byte
}

// Checkpoint is a point re-simulation can start from: every thread's
// registers. It also resets every thread's prediction cache to zeros and
// its read count to zero.
type Checkpoint struct {
	Position   uint64
	Seq        uint64
	CurrentTid int
	Threads    []ThreadState
}

// Exit is how the recorded process ended.
type Exit struct {
	Kind      ExitKind
	Code      int // exit status, for ExitExited
	Signo     int
	FaultAddr uint64
	Position  uint64 // the position after the last instruction
}

// Opaque is an extension record: Tag is the producer's, Bytes free.
type Opaque struct {
	Tag   uint64
	Bytes []byte
}

// Record is one decoded record: Kind says which field holds it. A
// RecordIter reuses one Record: its slices alias the iterator's buffers
// and the fields of other kinds keep stale values, so a Record is valid
// only until the next call to Next.
type Record struct {
	Kind Kind
	// Off is the record's offset in its chunk's decompressed payload.
	Off int64

	MemRead     MemRead
	KeyFrame    KeyFrame
	ThreadStart ThreadStart
	ThreadExit  ThreadExit
	CodeBytes   CodeBytes
	Syscall     Syscall
	NonDet      NonDet
	Signal      Signal
	Mmap        Mmap
	Munmap      Munmap
	Mprotect    Mprotect
	Module      Module
	Checkpoint  Checkpoint
	Exit        Exit
	Opaque      Opaque
}
