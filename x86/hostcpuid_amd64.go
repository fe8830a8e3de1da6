package x86

// hostCPUID runs the host's cpuid instruction.
func hostCPUID(leaf, sub uint32) (a, b, c, d uint32)

// HostXSaveFeatures are the host's XSAVEOPT and XSAVEC (which
// golang.org/x/sys/cpu does not report), when it has XSAVE enabled.
func HostXSaveFeatures() Features {
	if max, _, _, _ := hostCPUID(0, 0); max < 0xd {
		return 0
	}
	if _, _, c, _ := hostCPUID(1, 0); c&(1<<27) == 0 { // OSXSAVE
		return 0
	}
	a, _, _, _ := hostCPUID(0xd, 1)
	var f Features
	if a&1 != 0 {
		f |= FeatXSAVEOPT
	}
	if a&2 != 0 {
		f |= FeatXSAVEC
	}
	return f
}
