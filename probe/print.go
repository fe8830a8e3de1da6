package probe

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Printing aggregations in DTrace's layout: a keyed aggregation is one
// "key  value" row per key, sorted by value; quantize and lquantize print
// DTrace's "value  ---- Distribution ---- count" table.

func formatKeys(keys []Value) string {
	var b strings.Builder
	for _, k := range keys {
		switch k.K {
		case KInt:
			fmt.Fprintf(&b, " %16d", k.I)
		case KStack:
			b.WriteString(k.S + "\n")
		default:
			fmt.Fprintf(&b, "  %-50s", k.S)
		}
	}
	return b.String()
}

// printAgg writes an aggregation's table as DTrace does at the end or for
// printa(@a).
func printAgg(w io.Writer, d *aggDecl, t AggTable) {
	es := d.sorted(t)
	if len(es) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, e := range es {
		switch d.Fn {
		case "quantize", "lquantize":
			if len(e.Keys) > 0 {
				fmt.Fprintln(w, formatKeys(e.Keys))
			}
			printDist(w, d, &e.State)
		case "stddev", "avg", "count", "sum", "min", "max":
			fmt.Fprintf(w, "%s %16d\n", formatKeys(e.Keys), d.value(&e.State))
		}
	}
}

// printDist writes a quantization: the rows from one bucket below the
// lowest non-empty one to one above the highest.
func printDist(w io.Writer, d *aggDecl, s *AggState) {
	fmt.Fprintf(w, "%16s %41s %-9s\n", "value", "------------- Distribution -------------", "count")
	var bs []int
	var total int64
	for b, n := range s.Buckets {
		if n != 0 {
			bs = append(bs, b)
			total += n
		}
	}
	if len(bs) == 0 {
		return
	}
	sort.Ints(bs)
	lo, hi := bs[0]-1, bs[len(bs)-1]+1
	minB, maxB := -64, 64
	if d.Fn == "lquantize" {
		minB, maxB = 0, int((d.High-d.Low)/d.Step)+1
	}
	lo, hi = max(lo, minB), min(hi, maxB)
	for b := lo; b <= hi; b++ {
		n := s.Buckets[b]
		bar := 0
		if total > 0 {
			bar = int(math.Round(40 * float64(n) / float64(total)))
		}
		label := ""
		if d.Fn == "quantize" {
			label = fmt.Sprint(quantizeLow(b))
		} else {
			switch {
			case b == 0:
				label = fmt.Sprintf("< %d", d.Low)
			case b == maxB:
				label = fmt.Sprintf(">= %d", d.High)
			default:
				label = fmt.Sprint(d.Low + int64(b-1)*d.Step)
			}
		}
		fmt.Fprintf(w, "%16s |%-40s %-9d\n", label, strings.Repeat("@", bar), n)
	}
}

// printaFmt writes printa(fmt, @a): the format once per key, with the
// keys as its first conversions and %@ the value.
func printaFmt(w io.Writer, d *aggDecl, t AggTable, f string, sy symbolizer) {
	cs, _ := parseFormat(f)
	for _, e := range d.sorted(t) {
		if d.Fn == "quantize" || d.Fn == "lquantize" {
			hasAgg := false
			for _, c := range cs {
				hasAgg = hasAgg || c.agg
			}
			fmt.Fprint(w, sprintf(cs, e.Keys, &Value{}, sy))
			if hasAgg {
				printDist(w, d, &e.State)
			}
			continue
		}
		v := intVal(d.value(&e.State))
		fmt.Fprint(w, sprintf(cs, e.Keys, &v, sy))
	}
}
