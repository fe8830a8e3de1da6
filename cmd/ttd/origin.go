package main

import (
	"encoding/hex"
	"fmt"

	"ttd/ttd"
)

// originJSON is one link of `ttd query --origin`'s chain.
type originJSON struct {
	Kind        string `json:"kind"`
	Position    uint64 `json:"position"`
	Thread      int    `json:"thread,omitempty"`
	PC          string `json:"pc,omitempty"`
	Function    string `json:"function,omitempty"`
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	Instruction string `json:"instruction,omitempty"`
	Into        string `json:"into"`
	From        string `json:"from,omitempty"`
	Value       string `json:"value,omitempty"` // hex, little-endian bytes
}

// origin prints where the value of EXPR (ADDR[:SIZE] or a variable) at
// position at came from (ttd.Session.Origin).
func (q *queryOut) origin(arg string, at uint64) error {
	q.Query = "origin"
	q.wait()
	addr, size, err := q.parseRange(arg, 8)
	if err != nil {
		return err
	}
	chain, err := q.s.Origin(addr, size, at)
	if err != nil {
		return err
	}
	q.printf("origin of %s (%d bytes) at position %d:\n", q.addrName(addr, arg), size, at)
	for i, l := range chain {
		oj := originJSON{Kind: l.Kind.String(), Position: l.Position, Thread: l.Tid, Instruction: l.Disasm,
			Into: l.Into, From: l.From, Value: hex.EncodeToString(l.Value)}
		if l.PC != 0 {
			oj.PC = fmt.Sprintf("%#x", l.PC)
			oj.Function, oj.File, oj.Line = q.where(l.PC)
		}
		q.Origin = append(q.Origin, oj)
		switch l.Kind {
		case ttd.OriginUnseen:
			q.printf("  #%-2d %s: no instruction of the recording wrote it (the program's image, or before the recording)\n", i, l.Into)
			continue
		case ttd.OriginLimit:
			q.printf("  #%-2d … (cut after %d links)\n", i, ttd.MaxOriginLinks)
			continue
		}
		from := l.From
		switch l.Kind {
		case ttd.OriginComputed:
			from = "computed here"
		case ttd.OriginSyscall:
			from = "the kernel (syscall)"
		case ttd.OriginSignal:
			from = "a signal delivery"
		}
		q.printf("  #%-2d position %d, thread %d: %s %s ← %s", i, l.Position, l.Tid, l.Kind, l.Into, from)
		if len(l.Value) > 0 {
			q.printf("  (value %s)", hex.EncodeToString(l.Value))
		}
		q.printf("\n      %s\n", q.pcText(l.PC))
		if l.Disasm != "" {
			q.printf("      %s\n", l.Disasm)
		}
	}
	return nil
}
