package emu

import (
	"testing"

	"golang.org/x/sys/cpu"

	"ttd/x86"
)

// TestCPUIDLevels: each level's CPUID reports exactly its extensions:
// AES-NI, PCLMULQDQ, XSAVEOPT and XSAVEC belong to no x86-64 level, so
// only "host" reports them, and only when the host has them.
func TestCPUIDLevels(t *testing.T) {
	const aes, pclmul = 1 << 25, 1 << 1
	for _, lv := range []string{"v1", "v2", "v3"} {
		f, err := ResolveCPU(lv)
		if err != nil {
			t.Fatal(err)
		}
		e := newCPUEnv(f)
		_, _, c, _ := e.CPUID(1, 0)
		if c&(aes|pclmul) != 0 {
			t.Errorf("--cpu %s: CPUID.1:ECX %#x reports AES-NI or PCLMULQDQ", lv, c)
		}
		if a, _, _, _ := e.CPUID(0xd, 1); a != 0 {
			t.Errorf("--cpu %s: CPUID.(0DH,1):EAX %#x reports XSAVEOPT or XSAVEC", lv, a)
		}
		if f.Name() != lv {
			t.Errorf("--cpu %s is named %q in a trace", lv, f.Name())
		}
	}
	f, err := ResolveCPU("host")
	if err != nil {
		t.Fatal(err)
	}
	e := newCPUEnv(f)
	_, _, c, _ := e.CPUID(1, 0)
	if got, want := c&aes != 0, cpu.X86.HasAES; got != want {
		t.Errorf("--cpu host: CPUID reports AES-NI %v, the host has it %v", got, want)
	}
	if got, want := c&pclmul != 0, cpu.X86.HasPCLMULQDQ; got != want {
		t.Errorf("--cpu host: CPUID reports PCLMULQDQ %v, the host has it %v", got, want)
	}
	a, b, _, _ := e.CPUID(0xd, 1)
	h := x86.HostXSaveFeatures()
	if got, want := a&3, uint32(0); h.Has(x86.FeatXSAVEOPT) && f.Has(x86.FeatXSAVE) {
		want |= 1
		if h.Has(x86.FeatXSAVEC) {
			want |= 2
		}
		if got != want {
			t.Errorf("--cpu host: CPUID.(0DH,1):EAX %#x, want %#x", got, want)
		}
	}
	if a&2 != 0 && b != 832 && b != 576 {
		t.Errorf("--cpu host: compacted XSAVE size %d", b)
	}
	// The trace's name of the level reads back as the same CPU.
	g, err := x86.ParseLevel(f.Name())
	if err != nil || g != f {
		t.Errorf("ParseLevel(%q) = %v, %v; want %v", f.Name(), g, err, f)
	}
	if _, err := x86.ParseLevel("v3+avx512f"); err == nil {
		t.Error("ParseLevel accepted an extension ttd does not know")
	}
}
