package fleet

import (
	"context"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
)

func squareFn(x int) int { return x * x }

func init() { register.Function1x1(squareFn) }

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(m.Run())
}

func TestPrismTrivial(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.Create(s, 1, 2, 3, 4)
	sum := stats.Sum(s, beam.ParDo(s, squareFn, in))
	passert.Equals(s, sum, 30)
	if _, err := prism.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}
