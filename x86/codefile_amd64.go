package x86

import "encoding/binary"

// appendHostID appends what the host's cpuid says of the instructions
// translations may use: the feature bits of leaves 1, 7 and 0x80000001
// (not leaf 1's EBX, which holds the APIC id of the core that asked).
func appendHostID(b []byte) []byte {
	_, _, c1, d1 := hostCPUID(1, 0)
	_, b7, c7, d7 := hostCPUID(7, 0)
	_, _, ce, de := hostCPUID(0x80000001, 0)
	for _, v := range []uint32{c1, d1, b7, c7, d7, ce, de} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}
