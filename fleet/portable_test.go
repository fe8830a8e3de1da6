package fleet

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"ttd/third_party/prism"
)

// TestProbePortableRunner: the way to a Flink or Spark cluster is Beam's
// portable runner, which submits the job to a job server over the Job
// API and, with --environment_type LOOPBACK, runs the workers in this
// process. Here the job server is a separate prism job server on
// loopback (Flink's and Spark's need Java and Beam's job server images,
// which this machine cannot fetch); the probe's output must equal the
// local runner's byte for byte.
func TestProbePortableRunner(t *testing.T) {
	paths, _ := workTraces(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port}); err != nil {
		t.Fatal(err)
	}
	sc := Script{Src: `fn::work:entry { trace(arg0); @q[execname] = quantize(arg0); }
syscall::write:entry { @w[probefunc] = sum(arg2); }`}
	local, localErr, _, err := runProbe(t, sc, paths, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sc.Compile()
	if err != nil {
		t.Fatal(err)
	}
	bs := bindAll(t, p, paths)
	endpoint, env := *jobopts.Endpoint, *jobopts.EnvironmentType
	defer func() { *jobopts.Endpoint, *jobopts.EnvironmentType = endpoint, env }()
	*jobopts.Endpoint, *jobopts.EnvironmentType = fmt.Sprintf("127.0.0.1:%d", port), "LOOPBACK"
	o, _, err := RunProbe(ctx, ProbeRun{Script: sc, Program: p, Bound: bs, Tmp: t.TempDir(),
		Run: func(pl *beam.Pipeline) error { _, err := beam.Run(ctx, "universal", pl); return err }})
	if err != nil {
		t.Fatal(err)
	}
	got, gotErr := printed(o)
	if got != local || gotErr != localErr {
		t.Fatalf("portable runner's output differs from local:\n--- portable\n%s%s\n--- local\n%s%s", got, gotErr, local, localErr)
	}
}
