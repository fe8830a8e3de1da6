package calls

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"ttd/reader"
	"ttd/x86"
)

// BenchmarkCalls compares the call-tree analysis with a plain replay of
// the same trace on one core (the target: at most 1.5x, in parallel over
// intervals). TTD_CALLS_TRACE names a trace to use (e.g. gzip -9 of 8
// MiB, about 1e9 instructions, from go run ./bench/cmd/travel);
// otherwise it records the corpus's tiny_vm (1.3e8 instructions) with a
// checkpoint every 10M instructions.
//
//	go test ./calls -run XXX -bench Calls -benchtime 1x
func BenchmarkCalls(b *testing.B) {
	path, tr, sym, cps := benchTrace(b)
	b.Logf("%s: %d instructions, %d intervals, %d CPUs", path, tr.End(), len(cps), runtime.GOMAXPROCS(0))
	b.Run("replay-1core", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r, err := tr.NewReplayAt(cps[0])
			if err != nil {
				b.Fatal(err)
			}
			if err := r.RunTo(tr.End()); err != nil && err != reader.ErrEnd {
				b.Fatal(err)
			}
			r.Close()
		}
		b.ReportMetric(float64(tr.End())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minstr/s")
	})
	for _, w := range []int{1, 0} {
		name := "calls-1worker"
		if w == 0 {
			name = "calls-allcpus"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Analyze(tr, sym, Options{Workers: w}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tr.End())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minstr/s")
		})
	}
}

// benchTrace opens the benchmarks' trace: TTD_CALLS_TRACE, or tiny_vm
// recorded with a checkpoint every 10M instructions.
func benchTrace(b *testing.B) (string, *reader.Trace, Symbolizer, []reader.Checkpoint) {
	path := os.Getenv("TTD_CALLS_TRACE")
	if path == "" {
		exe := buildC(b, "../testdata/corpus/tiny_vm.c", "-O2")
		path = record(b, exe, 10_000_000)
	}
	tr, sym := open(b, path)
	cps, err := tr.Checkpoints()
	if err != nil {
		b.Fatal(err)
	}
	return path, tr, sym, cps
}

// BenchmarkStepRecords measures what following a logged record costs in
// Go alone (segment.step, without the replay that makes the records):
// it keeps the first stepRecords records of a trace's first interval
// (TTD_CALLS_TRACE, or tiny_vm as in BenchmarkCalls) and follows them
// again, batch by batch, in a new segment each time. The metric is
// ns/record.
//
// Each batch is copied into one reused buffer before it is followed, as
// drainSteps hands a batch over right after translated code logged it,
// and the copies' CPU, measured alone, is taken away: following kept
// batches where they lie (97 MB on sqlite3) measured their cache
// misses, which a replay's batch (at most 40 KB, written just before)
// does not have.
//
// TTD_CALLS_INTERVAL=k takes interval k instead of the first (a
// program's start-up is seldom what its calls cost later).
//
//	TTD_CALLS_TRACE=/tmp/c9/g.ttd go test ./calls -run XXX -bench StepRecords -count 5
func BenchmarkStepRecords(b *testing.B) {
	path, tr, sym, cps := benchTrace(b)
	if k, err := strconv.Atoi(os.Getenv("TTD_CALLS_INTERVAL")); err == nil && k > 0 && k < len(cps) {
		cps = cps[k:]
	}
	// Keep the records, as the replay hands them over.
	var batches [][]x86.HookStep
	kept, most := 0, 0
	s := newSegment(sym)
	s.flows = map[flowKey]*FlowStat{}
	r, err := tr.NewReplayAt(cps[0])
	if err != nil {
		b.Fatal(err)
	}
	tids, cpus := r.Threads()
	for i, tid := range tids {
		s.setKey(tid, cps[0].Position)
		s.thread(tid, cpus[i], true, cps[0].Position)
	}
	r.Hook = s.instruction
	r.HookInsts, r.HookGate = s.callsAndRets, s.gate
	s.useLog(r)
	r.HookSteps = func(r *reader.Replay, c *x86.CPU, steps []x86.HookStep) {
		if kept < stepRecords {
			batches = append(batches, append([]x86.HookStep(nil), steps...))
			kept += len(steps)
			most = max(most, len(steps))
		}
		s.logged(r, c, steps)
	}
	end := tr.End()
	if len(cps) > 1 {
		end = cps[1].Position
	}
	if err := r.RunTo(end); err != nil && err != reader.ErrEnd {
		b.Fatal(err)
	}
	r.Close()
	if kept == 0 {
		b.Fatal("no record logged")
	}
	b.Logf("%s: %d records in %d batches", path, kept, len(batches))
	buf := make([]x86.HookStep, most)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		s := newSegment(sym)
		s.flows = map[flowKey]*FlowStat{}
		s.setKey(tids[0], cps[0].Position)
		st := s.thread(tids[0], nil, true, cps[0].Position)
		for _, steps := range batches {
			s.follow(st, buf[:copy(buf, steps)], 0)
		}
	}
	cpu1 := cpuTime()
	// The copies alone, to take away.
	for i := 0; i < b.N; i++ {
		for _, steps := range batches {
			copy(buf, steps)
		}
	}
	copies := cpuTime() - cpu1
	b.ReportMetric(float64(cpu1-cpu0-copies)/float64(b.N)/float64(kept), "cpu-ns/record")
}

// cpuTime is the process's CPU time (user and system) in nanoseconds:
// the machine is shared, and wall time counts the others' work too.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// stepRecords is how many records BenchmarkStepRecords keeps.
const stepRecords = 2_000_000
