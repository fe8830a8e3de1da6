package fleet

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
)

func squareFn(x int) int { return x * x }

func init() { register.Function1x1(squareFn) }

// TestPrismRuns: a pipeline runs on prism inside the test process.
func TestPrismRuns(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	sum := stats.Sum(s, beam.ParDo(s, squareFn, beam.Create(s, 1, 2, 3, 4)))
	passert.Equals(s, sum, 30)
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
}
