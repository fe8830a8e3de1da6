// Package symbols turns machine state into source-level facts: function
// names, file:line, breakpoint addresses, backtraces, and the values of
// variables, for Linux x86-64 ELF programs written in C or Go.
//
// It works on ELF files (paths, or bytes embedded in a trace) loaded at
// given addresses ([Load] with one [Module] per mapped executable or shared
// library), a register set ([Regs]) and a function that reads memory
// ([MemReader]) and can say which bytes are unknown. It never obtains that
// state itself: the time-travel session (package ttd) hands it the
// registers and memory of a position in a recording, and a test hands it a
// core file written by gdb. Values it cannot read are shown as "<unknown>"
// or "<optimized out>"; it never invents them.
//
// The DWARF work is done by delve's pkg/dwarf packages (godwarf types, line
// tables, CFI, location expressions, location lists); this package indexes
// the modules, unwinds, evaluates and formats.
//
// It must never depend on emu, recorder, reader or the host process: it is
// also used to read traces that came from another machine.
package symbols
