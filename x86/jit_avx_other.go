//go:build !amd64

package x86

// Without the amd64 translator, no VEX instruction is translated.
var jitAVX2, jitFMA, jitBMI2, jitAES, jitPCLMUL, jitVAES, jitVPCLMUL = false, false, false, false, false, false, false
