package symbols

import (
	"encoding/binary"
	"testing"
)

// TestLineTableZeroLineRange: a .debug_line unit whose header says
// line_range 0 is refused at load. delve's state machine divides by it, so
// keeping it panicked in PCToLine, FunctionBreakpoint and every other
// query (TestCorruptFiles found it with a random corruption).
func TestLineTableZeroLineRange(t *testing.T) {
	unit := func(lineRange byte) []byte {
		// DWARF 4 header: version, header_length, min_inst_length,
		// max_ops_per_inst, default_is_stmt, line_base, line_range,
		// opcode_base, 12 standard opcode lengths, no directories, one
		// file; then DW_LNS_const_add_pc and an end of sequence.
		hdr := []byte{1, 1, 1, 0xfb, lineRange, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 'a', '.', 'c', 0, 0, 0, 0, 0}
		prog := []byte{0x08, 0x00, 1, 0x01}
		body := binary.LittleEndian.AppendUint16(nil, 4)
		body = binary.LittleEndian.AppendUint32(body, uint32(len(hdr)))
		body = append(append(body, hdr...), prog...)
		return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	if li := parseLines("/", unit(14), nil, 0); li == nil {
		t.Fatal("a well-formed unit was refused: the test's header is wrong")
	}
	if li := parseLines("/", unit(0), nil, 0); li != nil {
		t.Fatal("a unit with line_range 0 was kept: queries on it divide by zero")
	}
}
