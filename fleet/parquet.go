package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"ttd/tables"
)

// The Parquet datasets: ttd query's tables (package tables: CallRow,
// MemoryRow) with the recording's name as their first column, written
// by the workers as one file per bundle in a directory, which DuckDB
// ("SELECT ... FROM 'DIR/*.parquet'"), pandas and Spark read as one
// dataset.

// CallRow is tables.CallRow with the recording (trace) and process.
// ReturnPos is the position just after the return, as tables gives it
// (Call.Return + 1).
type CallRow struct {
	Trace     string   `parquet:"trace"`
	Function  string   `parquet:"function"`
	Process   int64    `parquet:"process"`
	Thread    int64    `parquet:"thread"`
	EntryPos  uint64   `parquet:"entry_pos"`
	ReturnPos uint64   `parquet:"return_pos"`
	Returned  bool     `parquet:"returned"`
	Args      []uint64 `parquet:"args,list"`
	RetVal    uint64   `parquet:"retval"`
}

// MemoryRow is tables.MemoryRow with the recording and process.
type MemoryRow struct {
	Trace    string `parquet:"trace"`
	Process  int64  `parquet:"process"`
	Position uint64 `parquet:"position"`
	Thread   int64  `parquet:"thread"`
	PC       uint64 `parquet:"pc"`
	Access   string `parquet:"access"`
	Source   string `parquet:"source"`
	Address  uint64 `parquet:"address"`
	Size     int32  `parquet:"size"`
	Value    uint64 `parquet:"value"`
}

// SyscallRow is a Syscall as a table row.
type SyscallRow struct {
	Trace    string   `parquet:"trace"`
	Process  int64    `parquet:"process"`
	Thread   int64    `parquet:"thread"`
	Position uint64   `parquet:"position"`
	Name     string   `parquet:"name"`
	Nr       int32    `parquet:"nr"`
	Args     []uint64 `parquet:"args,list"`
	Ret      int64    `parquet:"ret"`
	Errno    int32    `parquet:"errno"`
}

// Row turns a Call into its table row.
func (c Call) Row() CallRow {
	r := CallRow{Trace: c.Trace, Function: c.Func, Process: int64(c.Pid), Thread: int64(c.Tid), EntryPos: c.Entry,
		Returned: c.Returned, Args: c.Args, RetVal: c.Retval}
	if c.Returned {
		r.ReturnPos = c.Return + 1
	}
	return r
}

// Row turns an Access into its table row.
func (a Access) Row() MemoryRow {
	acc := "r"
	if a.Write {
		acc = "w"
	}
	return MemoryRow{Trace: a.Trace, Process: int64(a.Pid), Position: a.Pos, Thread: int64(a.Tid), PC: a.PC, Access: acc,
		Source: a.Source, Address: a.Addr, Size: int32(a.Size), Value: a.Value}
}

// Row turns a Syscall into its table row.
func (s Syscall) Row() SyscallRow {
	return SyscallRow{Trace: s.Trace, Process: int64(s.Pid), Thread: int64(s.Tid), Position: s.Pos, Name: s.Name,
		Nr: int32(s.Nr), Args: s.Args, Ret: s.Ret, Errno: int32(s.Errno)}
}

func init() {
	register.DoFn2x1[context.Context, Call, error](&parquetCallsFn{})
	register.DoFn2x1[context.Context, Access, error](&parquetMemoryFn{})
	register.DoFn2x1[context.Context, Syscall, error](&parquetSyscallsFn{})
}

// WriteParquet writes calls (Call), accesses (Access) or syscalls
// (Syscall) as a Parquet dataset in dir (a directory, or a URL of a
// Beam filesystem): files part-*.parquet, one per bundle.
func WriteParquet(s beam.Scope, dir string, rows beam.PCollection) error {
	s = s.Scope("fleet.WriteParquet")
	switch t := rows.Type().Type(); t {
	case reflect.TypeOf(Call{}):
		beam.ParDo0(s, &parquetCallsFn{Dir: dir}, rows)
	case reflect.TypeOf(Access{}):
		beam.ParDo0(s, &parquetMemoryFn{Dir: dir}, rows)
	case reflect.TypeOf(Syscall{}):
		beam.ParDo0(s, &parquetSyscallsFn{Dir: dir}, rows)
	default:
		return fmt.Errorf("fleet: WriteParquet: rows of %v (want Call, Access or Syscall)", t)
	}
	return nil
}

// parquetBundle buffers a bundle's rows and writes them as one file.
type parquetBundle[T any] struct {
	rows []T
}

func (b *parquetBundle[T]) flush(ctx context.Context, dir string) error {
	if len(b.rows) == 0 {
		return nil
	}
	var id [8]byte
	rand.Read(id[:])
	name := "part-" + hex.EncodeToString(id[:]) + ".parquet"
	var err error
	if hasScheme(dir) {
		err = writeURL(ctx, strings.TrimSuffix(dir, "/")+"/"+name, b.rows)
	} else {
		err = writeLocal(filepath.Join(dir, name), b.rows)
	}
	b.rows = b.rows[:0]
	return err
}

func writeLocal[T any](path string, rows []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tables.WriteParquet(f, rows); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

func writeURL[T any](ctx context.Context, url string, rows []T) error {
	fs, err := filesystem.New(ctx, url)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, url)
	if err != nil {
		return err
	}
	if err := tables.WriteParquet(w, rows); err != nil {
		w.Close()
		return fmt.Errorf("%s: %w", url, err)
	}
	return w.Close()
}

type parquetCallsFn struct {
	Dir string
	b   parquetBundle[CallRow]
}

func (f *parquetCallsFn) ProcessElement(_ context.Context, c Call) error {
	f.b.rows = append(f.b.rows, c.Row())
	return nil
}

func (f *parquetCallsFn) FinishBundle(ctx context.Context) error { return f.b.flush(ctx, f.Dir) }

type parquetMemoryFn struct {
	Dir string
	b   parquetBundle[MemoryRow]
}

func (f *parquetMemoryFn) ProcessElement(_ context.Context, a Access) error {
	f.b.rows = append(f.b.rows, a.Row())
	return nil
}

func (f *parquetMemoryFn) FinishBundle(ctx context.Context) error { return f.b.flush(ctx, f.Dir) }

type parquetSyscallsFn struct {
	Dir string
	b   parquetBundle[SyscallRow]
}

func (f *parquetSyscallsFn) ProcessElement(_ context.Context, sc Syscall) error {
	f.b.rows = append(f.b.rows, sc.Row())
	return nil
}

func (f *parquetSyscallsFn) FinishBundle(ctx context.Context) error { return f.b.flush(ctx, f.Dir) }
