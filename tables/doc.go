// Package tables turns a recording into rows, as WinDbg TTD's Calls and
// Memory tables do, and writes rows of any struct type as a text table,
// JSON or Parquet (readable by DuckDB, pandas and Spark).
//
//   - Calls re-simulates the trace and gives one CallRow per call of a
//     function: thread, entry and return positions, arguments, return
//     value, caller.
//   - Memory gives one MemoryRow per access to a range of memory:
//     position, thread, pc, read or write, address, size, value.
//   - WriteParquet, WriteText and WriteJSON write a []T for any struct
//     type T whose fields are integers, strings or booleans; the
//     column names come from `parquet:"name"` tags (text and JSON use
//     the same names). Other analyses (the syscall exporter) reuse them
//     for their own rows.
//
// Package tables depends on reader and symbols; never on emu, the
// recorder or the command line.
package tables
