package fleet

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"ttd/probe"
	"ttd/reader"
	"ttd/tables"
)

// TestTablesAgree: the Beam query's rows are ttd query's (package
// tables, which re-simulates each recording sequentially), column for
// column, and the Parquet dataset holds them all with the trace column.
func TestTablesAgree(t *testing.T) {
	paths, _ := workTraces(t)
	dir := filepath.Join(t.TempDir(), "calls")
	p, s := beam.NewPipelineWithRoot()
	calls, err := Open(s, Options{}, paths...).Calls(s, "work")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteParquet(s, dir, calls); err != nil {
		t.Fatal(err)
	}
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	if len(files) == 0 {
		t.Fatal("no Parquet file written")
	}
	var got []CallRow
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tables.ReadParquet[CallRow](bytesReaderAt(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got = append(got, rows...)
	}
	sort.Slice(got, func(i, j int) bool {
		return got[i].Trace < got[j].Trace || got[i].Trace == got[j].Trace && got[i].EntryPos < got[j].EntryPos
	})
	var want []CallRow
	for _, path := range paths {
		tr, err := reader.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sy, err := probe.LoadSymbols(tr)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tables.Calls(tr, sy, "work")
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			want = append(want, CallRow{Trace: path, Function: r.Function, Process: r.Thread, Thread: r.Thread,
				EntryPos: r.EntryPos, ReturnPos: r.ReturnPos, Returned: r.Returned, Args: r.Args, RetVal: r.RetVal})
		}
	}
	sort.Slice(want, func(i, j int) bool {
		return want[i].Trace < want[j].Trace || want[i].Trace == want[j].Trace && want[i].EntryPos < want[j].EntryPos
	})
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("Beam rows:\n%+v\nttd query's:\n%+v", got, want)
	}
}
