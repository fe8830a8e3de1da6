// Package fleet runs analyses over many recordings as Apache Beam
// pipelines (github.com/apache/beam/sdks/v2, the Go SDK): locally on
// Beam's prism runner, which runs inside the process, and on Flink,
// Spark or Dataflow through Beam's portable runners, with the same code.
// It is Fay's idea (seeds/fay.txt) applied to traces: a recording is a
// dataset, re-simulated one checkpoint interval at a time in parallel,
// and partial results merge on the way.
//
// The pipeline has three steps, each a Beam transform:
//
//   - listing: the trace names a user gives (paths, globs, URLs of a
//     filesystem Beam's Go SDK knows, such as gs://) become one element
//     per recording (Recordings);
//   - splitting: each recording becomes its checkpoint segments
//     (Segment), reshuffled so that workers share them;
//   - re-simulation: each segment is re-simulated on its own with
//     package reader, with only the probes the query asked for armed.
//
// Queries are written in Go, as FayLINQ's are in .NET: Recordings.Calls,
// Syscalls and Memory give typed PCollections (Call, Syscall, Access)
// whose rows carry the trace, the position, the pid and the tid, and the
// user composes them with any Beam transform. The filters given to those
// methods are pushed down into re-simulation: only the named functions'
// code is hooked, only the named syscalls reported, only the named
// ranges watched.
//
// Probe scripts (package probe) run on Beam too (RunProbe): each segment
// is evaluated by a worker to a probe.Partial, and the partials merge in
// a CombineFn (ProbeCombineFn) by probe's merge law, before and after the
// shuffle; the state scripts carry from segment to segment is composed
// in segment order at ExtractOutput. Scripts whose clauses read state an
// earlier segment wrote, or that call exit(), take the per-segment plan:
// the partials come back and probe.Program.RunWith fixes them up and
// folds them in order. Either way the output is the local runner's.
//
// Rows are independent of segment boundaries: every event belongs to
// exactly one segment (the one whose interval holds its position; an
// event at a checkpoint's position belongs to the segment before it), and
// a call's entry and return, which may fall in different segments, are
// paired after re-simulation by a GroupByKey on (trace, tid, stack
// pointer) (PairCalls).
//
// fleet depends on reader, symbols and ttd (syscall names), never on emu,
// the recorder or the command line. Importing it links Beam, its gRPC and
// protobuf code (tens of MiB); cmd/ttd therefore never imports it: the
// Beam commands live in cmd/ttd-fleet.
package fleet
