package symbols_test

import (
	"fmt"

	"ttd/symbols"
)

// Example shows the path from a stopped position to what a debugger
// shows: load the modules where they were mapped, unwind from the
// registers, and read each frame's variables. mem would be the recording's
// memory at that position.
func Example() {
	tab, err := symbols.Load([]symbols.Module{
		{Path: "/usr/local/bin/prog", LoadAddr: 0x555555554000},
		{Path: "/lib/x86_64-linux-gnu/libc.so.6", LoadAddr: 0x7ffff7dcd000},
	})
	if err != nil {
		fmt.Println(err) // the modules that did load are still usable
	}
	var regs symbols.Regs // from the CPU state: RAX…R15 in x86 order, then RIP
	mem := func(addr uint64, buf []byte) (known []bool, err error) {
		return make([]bool, len(buf)), nil // nothing known: every value shows <unknown>
	}
	for _, f := range tab.Unwind(regs, mem, 50) {
		fmt.Println(f.String())
		args, locals, err := tab.Scopes(&f, mem)
		if err != nil {
			continue // no DWARF for this function
		}
		for _, v := range append(args, locals...) {
			fmt.Printf("  %s %s = %s\n", v.Type, v.Name, v.Value)
			for _, c := range v.Children() { // fields, elements, entries…
				fmt.Printf("    %s = %s\n", c.Name, c.Value)
			}
		}
	}
	if v, err := tab.EvalExpr("g_table[2]", nil, mem); err == nil {
		fmt.Println(v.Value)
	}
	if pcs, line := tab.BreakpointLine("prog.c", 42); pcs != nil {
		fmt.Printf("breakpoint at line %d: %#x\n", line, pcs)
	}
}
