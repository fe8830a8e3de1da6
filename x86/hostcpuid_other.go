//go:build !amd64

package x86

// HostXSaveFeatures: no host XSAVE extensions off amd64.
func HostXSaveFeatures() Features { return 0 }
