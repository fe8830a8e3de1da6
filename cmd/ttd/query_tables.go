package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"ttd/probe"
	"ttd/reader"
	"ttd/tables"
	"ttd/ttd"
)

const queryTablesUsage = "(--calls SYM | --memory ADDR:LEN [--access r|w|rw]) [--json | --format text|json|parquet] [-o FILE] [--jobs N] TRACE"

// isTableQuery reports whether "ttd query" is asked for a table
// (--calls, --memory) rather than the state at a position.
func isTableQuery(args []string) bool {
	for _, a := range args {
		n := strings.TrimLeft(a, "-")
		n, _, _ = strings.Cut(n, "=")
		if strings.HasPrefix(a, "-") && (n == "calls" || n == "memory") {
			return true
		}
	}
	return false
}

// queryTablesCmd implements "ttd query --calls" and "--memory": WinDbg
// TTD's Calls and Memory tables, as text, JSON or Parquet.
func queryTablesCmd(name string, args []string) int {
	fs := newFlags(name, queryTablesUsage)
	calls := fs.String("calls", "", "one row per call of the function SYM")
	memory := fs.String("memory", "", "one row per access to LEN bytes at ADDR (a number or a global's name)")
	access := fs.String("access", "rw", "with --memory: r (reads), w (writes) or rw")
	asJSON := fs.Bool("json", false, "print the rows as JSON (--format json)")
	format := fs.String("format", "text", "text, json or parquet")
	out := fs.String("o", "", "write to FILE (required for parquet)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "segments re-simulated at a time (--memory)")
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		n := strings.TrimLeft(a, "-")
		if !strings.Contains(n, "=") && n != "json" && i+1 < len(args) {
			if err := fs.Parse([]string{a, args[i+1]}); err != nil {
				return flagError(name, queryTablesUsage, err)
			}
			i++
			continue
		}
		if err := fs.Parse([]string{a}); err != nil {
			return flagError(name, queryTablesUsage, err)
		}
	}
	if len(rest) != 1 {
		return flagError(name, queryTablesUsage, errors.New("want exactly one trace"))
	}
	if (*calls == "") == (*memory == "") {
		return flagError(name, queryTablesUsage, errors.New("give --calls SYM or --memory ADDR:LEN"))
	}
	if *asJSON {
		*format = "json"
	}
	switch *format {
	case "text", "json":
	case "parquet":
		if *out == "" {
			return flagError(name, queryTablesUsage, errors.New("--format parquet needs -o FILE"))
		}
	default:
		return flagError(name, queryTablesUsage, fmt.Errorf("--format %q: text, json or parquet", *format))
	}
	read, write := strings.Contains(*access, "r"), strings.Contains(*access, "w")
	if strings.Trim(*access, "rw") != "" || !read && !write {
		return flagError(name, queryTablesUsage, fmt.Errorf("--access %q: r, w or rw", *access))
	}
	path := rest[0]
	tr, err := reader.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	defer tr.Close()
	sy, symErr := probe.LoadSymbols(tr)
	if symErr != nil {
		fmt.Fprintf(os.Stderr, "ttd: some symbols are missing: %v\n", firstLine(symErr))
	}
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	var werr error
	if *calls != "" {
		rows, err := tables.Calls(tr, sy, *calls)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: --calls: %v\n", err)
			if errors.Is(err, tables.ErrNoFunction) {
				return 2
			}
			return 1
		}
		werr = writeRows(w, *format, rows)
	} else {
		a, l, ok := strings.Cut(*memory, ":")
		n, err := strconv.ParseUint(l, 0, 64)
		if !ok || err != nil || n == 0 || n > 1<<30 {
			return flagError(name, queryTablesUsage, fmt.Errorf("--memory %q: give ADDR:LEN", *memory))
		}
		var symz ttd.Symbolizer
		if sy != nil {
			symz = sy
		}
		addr, err := ttd.ResolveAddr(symz, a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: --memory: %v\n", err)
			return 2
		}
		rows, err := tables.Memory(tr, addr, n, read, write, *jobs)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd query: --memory: %v\n", err)
			return 1
		}
		werr = writeRows(w, *format, rows)
	}
	if werr != nil {
		fmt.Fprintf(os.Stderr, "ttd query: %v\n", werr)
		return 1
	}
	return 0
}

func writeRows[T any](w *os.File, format string, rows []T) error {
	switch format {
	case "json":
		return tables.WriteJSON(w, rows)
	case "parquet":
		return tables.WriteParquet(w, rows)
	}
	return tables.WriteText(w, rows)
}
