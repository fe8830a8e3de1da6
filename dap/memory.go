package dap

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/google/go-dap"
)

// maxReadMemory bounds one readMemory request.
const maxReadMemory = 1 << 20

// onReadMemoryRequest reads memory as it is at the current position. The
// recording does not know every byte: DAP can only say "the next N bytes
// are unreadable" after the readable ones, so the response holds the
// known bytes up to the first unknown one and counts the unknown run that
// follows; the client asks again past it. Unknown bytes are never made up.
func (s *Server) onReadMemoryRequest(r *dap.ReadMemoryRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	base, err := parseAddr(r.Arguments.MemoryReference)
	if err != nil {
		s.sendError(&r.Request, ErrCodeMemory, "readMemory: %v", err)
		return
	}
	addr := base + uint64(int64(r.Arguments.Offset))
	n := min(max(r.Arguments.Count, 0), maxReadMemory)
	buf := make([]byte, n)
	known, err := t.ReadThreadMemory(s.shownThread(t), addr, buf)
	body := dap.ReadMemoryResponseBody{Address: fmt.Sprintf("%#x", addr)}
	if err != nil {
		// Unmapped: all of it is unreadable.
		body.UnreadableBytes = n
		s.send(&dap.ReadMemoryResponse{Response: *newResponse(&r.Request), Body: body})
		return
	}
	good := n
	if known != nil {
		for i, k := range known {
			if !k {
				good = i
				break
			}
		}
	}
	bad := 0
	for i := good; i < n && known != nil && !known[i]; i++ {
		bad++
	}
	body.Data = base64.StdEncoding.EncodeToString(buf[:good])
	body.UnreadableBytes = bad
	s.send(&dap.ReadMemoryResponse{Response: *newResponse(&r.Request), Body: body})
}

// maxDisassemble bounds one disassemble request.
const maxDisassemble = 4096

// onDisassembleRequest decodes instructions around an address. A negative
// instructionOffset asks for instructions before it: x86 cannot be
// decoded backward, so decoding starts at the function's entry (or a
// guess before the address) and keeps the instructions that end exactly
// at the address.
func (s *Server) onDisassembleRequest(r *dap.DisassembleRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	base, err := parseAddr(r.Arguments.MemoryReference)
	if err != nil {
		s.sendError(&r.Request, ErrCodeDisassemble, "disassemble: %v", err)
		return
	}
	addr := base + uint64(int64(r.Arguments.Offset))
	id := s.shownThread(t)
	count := min(max(r.Arguments.InstructionCount, 0), maxDisassemble)
	var insts []dap.DisassembledInstruction
	if off := r.Arguments.InstructionOffset; off < 0 {
		before := s.instructionsBefore(t, id, addr, -off)
		insts = append(insts, before...)
		count -= len(before)
	} else {
		for i := 0; i < off; i++ {
			_, n := t.Disassemble(id, addr)
			addr += uint64(max(n, 1))
		}
	}
	for ; count > 0; count-- {
		in, n := s.disasmOne(t, id, addr)
		insts = append(insts, in)
		addr += uint64(max(n, 1))
	}
	s.send(&dap.DisassembleResponse{Response: *newResponse(&r.Request), Body: dap.DisassembleResponseBody{Instructions: insts}})
}

// disasmOne decodes the instruction at addr for the client.
func (s *Server) disasmOne(t Target, id int, addr uint64) (dap.DisassembledInstruction, int) {
	text, n := t.Disassemble(id, addr)
	in := dap.DisassembledInstruction{Address: fmt.Sprintf("%#x", addr)}
	if n == 0 {
		in.Instruction = "?? (unknown)"
		return in, 0
	}
	in.Instruction = text
	b := make([]byte, n)
	if known, err := t.ReadThreadMemory(id, addr, b); err == nil && allKnown(known) {
		in.InstructionBytes = hex.EncodeToString(b)
	}
	if l := t.Locate(addr); l.OK {
		if l.Func != "" {
			in.Symbol = l.Func
			if addr != l.Entry {
				in.Symbol = fmt.Sprintf("%s+%d", l.Func, addr-l.Entry)
			}
		}
		if l.File != "" && l.Line > 0 {
			in.Location = &dap.Source{Name: baseName(l.File), Path: l.File}
			in.Line = l.Line
		}
	}
	return in, n
}

// instructionsBefore returns up to k instructions that end at addr,
// padded at the front with placeholders when fewer can be found.
func (s *Server) instructionsBefore(t Target, id int, addr uint64, k int) []dap.DisassembledInstruction {
	var starts []uint64
	try := func(from uint64) bool {
		starts = starts[:0]
		a := from
		for a < addr {
			_, n := t.Disassemble(id, a)
			if n == 0 {
				return false
			}
			starts = append(starts, a)
			a += uint64(n)
		}
		return a == addr
	}
	ok := false
	if l := t.Locate(addr); l.OK && l.Entry != 0 && l.Entry < addr && addr-l.Entry < 1<<16 {
		ok = try(l.Entry)
	}
	for back := uint64(16 * k); !ok && back+16 > uint64(16*k) && back > 0 && back <= addr; back-- {
		ok = try(addr - back)
	}
	if !ok {
		starts = nil
	}
	if len(starts) > k {
		starts = starts[len(starts)-k:]
	}
	var out []dap.DisassembledInstruction
	for i := len(starts); i < k; i++ {
		pad := addr - uint64(k-i)
		if len(starts) > 0 {
			pad = starts[0] - uint64(k-i)
		}
		out = append(out, dap.DisassembledInstruction{Address: fmt.Sprintf("%#x", pad), Instruction: "??"})
	}
	for _, a := range starts {
		in, _ := s.disasmOne(t, id, a)
		out = append(out, in)
	}
	return out
}

func allKnown(k []bool) bool {
	for _, b := range k {
		if !b {
			return false
		}
	}
	return true
}

// shownThread is the thread whose process's memory readMemory and
// disassemble show (the processes of a tree have their own address
// spaces): the one whose stack the client last asked for, else the one
// of the last stop.
func (s *Server) shownThread(t Target) int {
	s.mu.Lock()
	id := s.viewTid
	s.mu.Unlock()
	if id == 0 {
		id = t.CurrentThread()
	}
	return id
}
