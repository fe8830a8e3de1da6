//go:build !amd64

package x86

// hostFPFlags: elsewhere the host's flags mean nothing to the guest, so the
// fast paths that rely on them are off.
const hostFPFlags = false

func takeHostFPFlags() uint32 { return 0 }
