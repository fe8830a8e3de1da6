package main

import (
	"flag"

	"ttd/emu"
)

// cpuFlag adds --cpu, the guest processor's level, to a command's flags
// (ttd run and ttd record): see emu.ResolveCPU.
func cpuFlag(fs *flag.FlagSet) *string {
	return fs.String("cpu", "", "the guest CPU: v1, v2 or v3 (x86-64 levels) or host (default: "+emu.DefaultCPU+")")
}
