package syscalls

import (
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"ttd/tracefile"
)

// The Parquet table: one row per syscall or shared-mapping write-back,
// columns as SCHEMA.md documents them. Row groups hold rowGroupRows
// rows, so the writer's memory stays bounded whatever the trace length.

const rowGroupRows = 16384

type parquetRow struct {
	Kind     string          `parquet:"kind,dict"`
	Pos      int64           `parquet:"pos"`
	Entry    int64           `parquet:"entry"`
	Pid      int32           `parquet:"pid"`
	Tid      int32           `parquet:"tid"`
	Nr       int32           `parquet:"nr"`
	Name     string          `parquet:"name,dict"`
	Args     []parquetArg    `parquet:"args,list"`
	Ret      int64           `parquet:"ret"`
	Returned bool            `parquet:"returned"`
	Errno    string          `parquet:"errno,dict"`
	Strace   string          `parquet:"strace,zstd"`
	Buffers  []parquetBuffer `parquet:"buffers,list"`
}

type parquetArg struct {
	Type string `parquet:"type,dict"`
	Raw  int64  `parquet:"raw"`
	Text string `parquet:"text"`
}

type parquetBuffer struct {
	Arg     int32  `parquet:"arg"`
	Out     bool   `parquet:"out"`
	Addr    int64  `parquet:"addr"`
	Data    []byte `parquet:"data,zstd"`
	Missing int32  `parquet:"missing"`
}

type parquetSink struct {
	w    *parquet.GenericWriter[parquetRow]
	row  [1]parquetRow
	rows int
}

func newParquetSink(w io.Writer) (Sink, error) {
	return &parquetSink{w: parquet.NewGenericWriter[parquetRow](w, parquet.MaxRowsPerRowGroup(rowGroupRows))}, nil
}

func (s *parquetSink) write() error {
	if _, err := s.w.Write(s.row[:]); err != nil {
		return err
	}
	s.rows++
	if s.rows%rowGroupRows == 0 {
		return s.w.Flush()
	}
	return nil
}

func (s *parquetSink) Call(c *Call) error {
	r := &s.row[0]
	args, bufs := r.Args[:0], r.Buffers[:0]
	*r = parquetRow{Kind: "syscall", Pos: int64(c.Pos), Entry: int64(c.Entry), Pid: int32(c.Pid), Tid: int32(c.Tid), Nr: int32(c.Nr), Name: c.Name,
		Ret: c.Ret, Returned: !c.NoReturn, Strace: string(c.Text) + " = " + string(c.RetText)}
	if e := c.Errno(); e != 0 {
		r.Errno = e.Name()
	}
	for _, a := range c.Args {
		args = append(args, parquetArg{Type: a.Type.String(), Raw: int64(a.Value), Text: a.Text})
	}
	for _, b := range c.Buffers {
		bufs = append(bufs, parquetBuffer{Arg: int32(b.Arg), Out: b.Out, Addr: int64(b.Addr), Data: b.Data, Missing: int32(b.Missing)})
	}
	r.Args, r.Buffers = args, bufs
	return s.write()
}

// SharedWrite writes a shared mapping's write-back as a row of kind
// "shared_write": args are the descriptor and the file offset, the
// buffer the bytes (unknown ones zero and counted in missing).
func (s *parquetSink) SharedWrite(w *SharedWrite) error {
	r := &s.row[0]
	args, bufs := r.Args[:0], r.Buffers[:0]
	*r = parquetRow{Kind: "shared_write", Pos: int64(w.Pos), Entry: int64(w.Pos), Pid: int32(w.Pid), Tid: int32(w.Tid), Nr: -1, Name: w.Why}
	args = append(args, parquetArg{Type: ArgFd.String(), Raw: int64(w.Fd), Text: strconv.Itoa(w.Fd)},
		parquetArg{Type: ArgUint.String(), Raw: int64(w.Off), Text: strconv.FormatUint(w.Off, 10)})
	miss := 0
	for _, k := range w.Known {
		if !k {
			miss++
		}
	}
	bufs = append(bufs, parquetBuffer{Arg: -1, Addr: int64(w.Addr), Data: w.Data, Missing: int32(miss)})
	r.Args, r.Buffers = args, bufs
	return s.write()
}

func (s *parquetSink) End(e *tracefile.Exit) error { return s.w.Close() }
