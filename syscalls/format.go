package syscalls

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"ttd/internal/linux"
	"ttd/tracefile"
)

// Formats lists the export formats.
var Formats = []string{"strace", "jsonl", "csv", "parquet"}

// NewSink returns a Sink writing format to w (Flush it, or Close for
// parquet, at the end: End does).
func NewSink(format string, w io.Writer) (Sink, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	switch format {
	case "strace":
		return &straceSink{w: bw}, nil
	case "jsonl":
		return &jsonSink{w: bw}, nil
	case "csv":
		s := &csvSink{w: bw}
		_, err := bw.WriteString("pos,pid,tid,nr,name,args,ret,errno,buffers\n")
		return s, err
	case "parquet":
		return newParquetSink(w)
	}
	return nil, fmt.Errorf("syscalls: unknown format %q (want one of strace, jsonl, csv, parquet)", format)
}

// straceSink prints the lines strace -f -x prints.
type straceSink struct {
	w     *bufio.Writer
	line  []byte
	first int  // the first tid seen
	many  bool // another thread appeared: lines get a "[pid N] " prefix
	// children are the processes the tree started: their ends are the
	// Process records' (ThreadExit leaves their main threads alone).
	children map[int]bool
}

func (s *straceSink) Call(c *Call) error {
	if c.VDSO {
		return nil
	}
	if s.first == 0 {
		s.first = c.Tid
	} else if c.Tid != s.first {
		s.many = true
	}
	b := s.line[:0]
	if s.many {
		b = append(b, "[pid "...)
		b = strconv.AppendInt(b, int64(c.Tid), 10)
		b = append(b, "] "...)
	}
	if c.Resumed {
		b = append(b, "<... "...)
		b = append(b, c.Name...)
		b = append(b, " resumed>"...)
		b = append(b, c.Text[c.Split:]...)
	} else {
		b = append(b, c.Text...)
	}
	if len(b) < 40 {
		for len(b) < 40 {
			b = append(b, ' ')
		}
		b = append(b, "= "...)
	} else {
		b = append(b, " = "...)
	}
	b = append(b, c.RetText...)
	b = append(b, '\n')
	s.line = b
	_, err := s.w.Write(b)
	return err
}

// Unfinished prints the entry of a call a thread blocked in:
// "read(3,  <unfinished ...>".
func (s *straceSink) Unfinished(c *Call) error {
	s.many = true // another thread is printing
	b := append(s.line[:0], "[pid "...)
	b = strconv.AppendInt(b, int64(c.Tid), 10)
	b = append(b, "] "...)
	b = append(b, c.Text[:c.Split]...)
	b = append(b, " <unfinished ...>\n"...)
	s.line = b
	_, err := s.w.Write(b)
	return err
}

// Signal prints a delivery as strace does: "--- SIGUSR1 {...} ---".
func (s *straceSink) Signal(sig *Signal) error {
	b := s.line[:0]
	if s.many {
		b = append(b, "[pid "...)
		b = strconv.AppendInt(b, int64(sig.Tid), 10)
		b = append(b, "] "...)
	}
	b = append(b, "--- "...)
	b = append(b, linux.SignalName(sig.Rec.Signo)...)
	b = append(b, ' ')
	b = append(b, sig.Text...)
	b = append(b, " ---\n"...)
	s.line = b
	_, err := s.w.Write(b)
	return err
}

// ThreadExit prints "[pid N] +++ exited with S +++" for a thread other
// than the first (whose end End prints), as strace -f does.
func (s *straceSink) ThreadExit(pos uint64, pid, tid, status int) error {
	if tid == s.first || s.first == 0 || s.children[tid] {
		return nil
	}
	_, err := fmt.Fprintf(s.w, "[pid %d] +++ exited with %d +++\n", tid, status)
	return err
}

func (s *straceSink) End(e *tracefile.Exit) error {
	if e != nil {
		switch e.Kind {
		case tracefile.ExitExited:
			fmt.Fprintf(s.w, "+++ exited with %d +++\n", e.Code)
		case tracefile.ExitKilled, tracefile.ExitCrashed:
			fmt.Fprintf(s.w, "+++ killed by %s +++\n", linux.SignalName(e.Signo))
		}
	}
	return s.w.Flush()
}

// jsonSink writes one JSON object per call.
type jsonSink struct {
	w    *bufio.Writer
	line []byte
	// recorded: the tree's processes are re-simulated (treeSink).
	recorded bool
}

func (s *jsonSink) Call(c *Call) error {
	b := append(s.line[:0], `{"pos":`...)
	b = strconv.AppendUint(b, c.Pos, 10)
	if c.Entry != c.Pos {
		b = append(b, `,"entry":`...)
		b = strconv.AppendUint(b, c.Entry, 10)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(c.Pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(c.Tid), 10)
	b = append(b, `,"nr":`...)
	b = strconv.AppendInt(b, int64(c.Nr), 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, []byte(c.Name))
	b = append(b, `,"args":[`...)
	for i, a := range c.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"`...)
		b = append(b, a.Type.String()...)
		b = append(b, `","raw":`...)
		b = strconv.AppendUint(b, a.Value, 10)
		switch a.Type {
		case ArgInt, ArgFd:
			b = append(b, `,"value":`...)
			if _, err := strconv.ParseInt(a.Text, 10, 64); err == nil {
				b = append(b, a.Text...)
			} else {
				b = strconv.AppendInt(b, int64(int32(a.Value)), 10)
			}
		case ArgString:
			if a.Data != nil {
				b = append(b, `,"value":`...)
				b = appendJSONString(b, a.Data)
			}
		}
		b = append(b, `,"text":`...)
		b = appendJSONString(b, []byte(a.Text))
		b = append(b, '}')
	}
	b = append(b, `],"ret":`...)
	if c.NoReturn {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, c.Ret, 10)
	}
	b = append(b, `,"errno":`...)
	if e := c.Errno(); e != 0 {
		b = appendJSONString(b, []byte(e.Name()))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"buffers":[`...)
	for i, x := range c.Buffers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"arg":`...)
		b = strconv.AppendInt(b, int64(x.Arg), 10)
		if x.Out {
			b = append(b, `,"dir":"out"`...)
		} else {
			b = append(b, `,"dir":"in"`...)
		}
		b = append(b, `,"addr":`...)
		b = strconv.AppendUint(b, x.Addr, 10)
		b = append(b, `,"len":`...)
		b = strconv.AppendInt(b, int64(len(x.Data)), 10)
		if x.Missing > 0 {
			b = append(b, `,"missing":`...)
			b = strconv.AppendInt(b, int64(x.Missing), 10)
		}
		b = append(b, `,"base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, x.Data)
		b = append(b, `"}`...)
	}
	b = append(b, "]}\n"...)
	s.line = b
	_, err := s.w.Write(b)
	return err
}

func (s *jsonSink) End(e *tracefile.Exit) error {
	if e != nil {
		fmt.Fprintf(s.w, `{"exit":%q,"code":%d,"signal":%q,"pos":%d}`+"\n", e.Kind.String(), e.Code, sigName(e.Signo), e.Position)
	}
	return s.w.Flush()
}

func sigName(s int) string {
	if s == 0 {
		return ""
	}
	return linux.SignalName(s)
}

// appendJSONString appends s as a JSON string; bytes that are not UTF-8
// become \u00XX of the byte (so the text stays readable; buffers carry
// the exact bytes).
func appendJSONString(b, s []byte) []byte {
	b = append(b, '"')
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		c := s[0]
		switch {
		case r == utf8.RuneError && n <= 1:
			b = append(b, `\u00`...)
			b = append(b, hexDigits[c>>4], hexDigits[c&15])
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, s[:n]...)
		}
		s = s[n:]
	}
	return append(b, '"')
}

// csvSink writes one row per call (RFC 4180): pos, pid, tid, nr, name,
// args (strace's text), ret, errno, buffers (space-separated
// "in1:HEX" / "out1:HEX", the argument's index).
type csvSink struct {
	w    *bufio.Writer
	line []byte
}

func (s *csvSink) Call(c *Call) error {
	b := strconv.AppendUint(s.line[:0], c.Pos, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(c.Pid), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(c.Tid), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(c.Nr), 10)
	b = append(b, ',')
	b = append(b, c.Name...)
	b = append(b, ',')
	args := c.Text[len(c.Name)+1 : len(c.Text)-1]
	b = appendCSV(b, args)
	b = append(b, ',')
	if !c.NoReturn {
		b = strconv.AppendInt(b, c.Ret, 10)
	}
	b = append(b, ',')
	if e := c.Errno(); e != 0 {
		b = append(b, e.Name()...)
	}
	b = append(b, ',')
	for i, x := range c.Buffers {
		if i > 0 {
			b = append(b, ' ')
		}
		if x.Out {
			b = append(b, "out"...)
		} else {
			b = append(b, "in"...)
		}
		b = strconv.AppendInt(b, int64(x.Arg), 10)
		b = append(b, ':')
		b = hex.AppendEncode(b, x.Data)
	}
	b = append(b, '\n')
	s.line = b
	_, err := s.w.Write(b)
	return err
}

func appendCSV(b, f []byte) []byte {
	b = append(b, '"')
	for _, c := range f {
		if c == '"' {
			b = append(b, '"')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

func (s *csvSink) End(e *tracefile.Exit) error { return s.w.Flush() }

// SharedWrite writes a shared mapping's write-back as its own line:
// {"pos":…,"pid":…,"tid":…,"shared_write":{"why":"munmap","addr":…,
// "fd":…,"offset":…,"len":…,"missing":…,"base64":…}}; bytes the
// recording does not know are zeros in base64 and counted in missing.
func (s *jsonSink) SharedWrite(w *SharedWrite) error {
	b := append(s.line[:0], `{"pos":`...)
	b = strconv.AppendUint(b, w.Pos, 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(w.Pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(w.Tid), 10)
	b = append(b, `,"shared_write":{"why":"`...)
	b = append(b, w.Why...)
	b = append(b, `","addr":`...)
	b = strconv.AppendUint(b, w.Addr, 10)
	b = append(b, `,"fd":`...)
	b = strconv.AppendInt(b, int64(w.Fd), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, w.Off, 10)
	b = append(b, `,"len":`...)
	b = strconv.AppendInt(b, int64(len(w.Data)), 10)
	miss := 0
	for _, k := range w.Known {
		if !k {
			miss++
		}
	}
	b = append(b, `,"missing":`...)
	b = strconv.AppendInt(b, int64(miss), 10)
	b = append(b, `,"base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, w.Data)
	b = append(b, "\"}}\n"...)
	s.line = b
	_, err := s.w.Write(b)
	return err
}
