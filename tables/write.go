package tables

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/parquet-go/parquet-go"
)

// WriteParquet writes rows as a Parquet file (zstd-compressed columns,
// one row group per 64 Ki rows). T is a struct; its fields' `parquet`
// tags name the columns.
func WriteParquet[T any](w io.Writer, rows []T) error {
	pw := parquet.NewGenericWriter[T](w, parquet.Compression(&parquet.Zstd))
	const group = 64 << 10
	for i := 0; i < len(rows); i += group {
		if _, err := pw.Write(rows[i:min(i+group, len(rows))]); err != nil {
			return err
		}
		if err := pw.Flush(); err != nil {
			return err
		}
	}
	return pw.Close()
}

// ReadParquet reads back a file WriteParquet wrote (tests, tools).
func ReadParquet[T any](r io.ReaderAt, size int64) ([]T, error) {
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, err
	}
	gr := parquet.NewGenericReader[T](f)
	defer gr.Close()
	out := make([]T, f.NumRows())
	n, err := gr.Read(out)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return out[:n], nil
}

// columns lists the struct's exported fields and their column names.
func columns(t reflect.Type) (names []string, idx []int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("parquet"); tag != "" {
			if n, _, _ := strings.Cut(tag, ","); n == "-" {
				continue
			} else if n != "" {
				name = n
			}
		}
		names = append(names, name)
		idx = append(idx, i)
	}
	return names, idx
}

// WriteText writes rows as an aligned text table with a header line.
// Integer columns whose name ends in "pc", "addr" or "address" (and
// fields tagged hex) print in hexadecimal.
func WriteText[T any](w io.Writer, rows []T) error {
	t := reflect.TypeFor[T]()
	names, idx := columns(t)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(names, "\t"))
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		cells := make([]string, len(idx))
		for j, fi := range idx {
			f := v.Field(fi)
			sf := t.Field(fi)
			hex := strings.Contains(sf.Tag.Get("table"), "hex")
			switch f.Kind() {
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				if hex {
					cells[j] = fmt.Sprintf("%#x", f.Uint())
				} else {
					cells[j] = fmt.Sprint(f.Uint())
				}
			case reflect.Slice:
				parts := make([]string, f.Len())
				for k := range parts {
					e := f.Index(k)
					if hex && e.CanUint() {
						parts[k] = fmt.Sprintf("%#x", e.Uint())
					} else {
						parts[k] = fmt.Sprint(e.Interface())
					}
				}
				cells[j] = strings.Join(parts, ",")
			default:
				cells[j] = fmt.Sprint(f.Interface())
			}
			if cells[j] == "" {
				cells[j] = "-"
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// WriteJSON writes rows as a JSON array of objects keyed by column name.
func WriteJSON[T any](w io.Writer, rows []T) error {
	t := reflect.TypeFor[T]()
	names, idx := columns(t)
	out := make([]map[string]any, len(rows))
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		m := make(map[string]any, len(idx))
		for j, fi := range idx {
			m[names[j]] = v.Field(fi).Interface()
		}
		out[i] = m
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
