// Package calls computes a recording's call tree exactly, by
// re-simulation: every call and ret instruction every thread executed,
// aggregated by call path (the chain of calls from the thread's first
// function, call sites distinguished), with the number of calls, the
// instructions spent in each path (self, and total with its callees) and
// the first position the path was entered at. It also compares two
// recordings' call trees (Diff: the root-cause algorithm of the
// self-propelled instrumentation paper).
//
// Segments. A trace is re-simulated in segments that start at
// checkpoints (one in all for one worker, two per worker otherwise:
// segmentStarts), in parallel (reader.Parallel), each on its own, with
// no knowledge of the call stack at its checkpoint. A segment keeps, per thread, a stack of
// the frames it saw pushed, and below it a chain of "base" frames: the
// frames that were open at the checkpoint, known only by their depth
// below the top (a ret on an empty stack pops the next base frame). Its
// results hang below those base frames. Once every segment is done,
// Analyze stitches them in order: it knows each thread's real stack at
// the checkpoint (the previous segment's end), so base frame b is the
// real stack's b-th frame from the top, and the segment's open frames at
// its end are pushed on what is left after its base pops. The result is
// exactly what one sequential pass would give.
//
// Frames. A call pushes a frame whose function is not known yet (an
// indirect call, a PLT stub); the first call or ret the thread executes
// inside it names it by the function whose entry it reaches first (the
// callee's first instruction, after a PLT stub's jmp), else by the
// symbol containing its first call or ret. A lazy-binding trampoline
// (_dl_runtime_resolve_*) shows as a frame of its own with _dl_fixup
// below it until it jumps to the function called, whose frame it then
// becomes. A ret pops every frame whose return-address slot is at or
// below the stack pointer, and a call every frame whose slot is at or
// below the new return address's, so longjmp, siglongjmp, C++ unwinding
// and thread cancellation, which leave frames without a ret, keep the
// stack right. A signal delivery pushes a frame named "[signal N]" that
// the handler's ret pops.
//
// Stitching mirrors one pass exactly (TestStitchingMatchesOnePass): a
// segment records, per base level, the stack pointers of the rets and
// calls that may have ended frames open at the checkpoint, the first
// function entry a base frame reached (the callee of a PLT stub the
// previous segment stopped in, or a trampoline's target), and keeps the
// instructions of a call it could not name yet for the next segment.
//
// Speed: the hook sees only the calls and rets, and the first
// instruction of a block at a function's entry (callsAndRets, through
// reader.Replay.HookInsts) and, through a HookGate, the instructions run
// while watch looks for a frame's function (the callee's first
// instructions, a PLT stub, a trampoline). Those blocks run translated
// too: the translation leaves for Go before each hooked instruction and
// takes up again after the Hook call (x86's hook exits, x86/filter.go);
// every other block runs translated, chained to the next. The reference
// of the tests (analyzeSequential) hooks every instruction, so
// TestStitchingMatchesOnePass checks the filter too. Measured with
// bench/cmd/hookbench (CPU time, one core, against a plain replay, the
// machine shared and busy): gzip -9 of 1 MiB 2.6x (3.35x with hooked
// blocks interpreted, 13.2x before filtering); the rest is the
// instructions run interpreted while a callee's function is looked for
// (up to lookLimit of them when the callee has no symbol, as in a
// stripped library) and the Hook calls themselves.
//
// Names. Load reads the modules' ELF symbols only: function entries are
// all the hooks need. The call paths and call sites of the result are
// named from the DWARF of the compile units they fall in (dwarfNamer,
// symbols.Table.UnitFuncForPC), the same names all the DWARF gives
// (TestNamesFromDWARF) without indexing all of libc's debug file.
//
// Process trees (process.go). Tree reads the processes of a recording
// from its control records: which thread belongs to which process, who
// forked whom and where, and the program images each ran (an exec starts
// one; the modules of each come from its Mmap records, as the recorder
// writes a Module record only for a file's first mapping in the tree).
// Each image's functions are named with its own symbols. A forked
// process's first thread starts on a copy of its parent's stack: the
// segment treats it as a thread whose frames were open at a checkpoint,
// and stitching gives it the parent's real frames at the fork, so its
// tree continues the parent's call path (those frames have no calls of
// their own in it). An exec ends the thread's tree and starts another
// (Thread.Exec). ByProcess puts one node per process above its threads'
// merged trees, named by programs and fork order, never by pid, so that
// Diff matches the processes of two recordings.
//
// calls depends on reader, symbols, tracefile and x86; it must never
// depend on emu, the recorder, ttd's session or cmd.
package calls
