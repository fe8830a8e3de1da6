//go:build !amd64

package x86

// Without the amd64 translator, no VEX instruction is translated.
var jitAVX2, jitFMA, jitBMI2 = false, false, false
