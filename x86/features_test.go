package x86

import (
	"errors"
	"testing"
)

// TestFeatureGate checks that a CPU of a lower level raises #UD for the
// instructions of the extensions it lacks, names the extension, and runs
// lzcnt and tzcnt as the bsr and bsf they decode as without them, while
// the instructions of its own level run.
func TestFeatureGate(t *testing.T) {
	diffTools(t)
	asms := []string{"pshufb %xmm2, %xmm1", "roundsd $4, %xmm2, %xmm1", "crc32b %al, %ecx", "popcnt %rax, %rcx",
		"lock cmpxchg16b (%rsi)", "lahf", "lzcnt %rax, %rcx", "tzcnt %rax, %rcx", "movbe (%rsi), %eax", "paddb %xmm2, %xmm1"}
	codes := assemble(t, t.TempDir(), asms)
	for _, tc := range []struct {
		feat Features
		ill  []bool // by asms
	}{
		{LevelV1, []bool{true, true, true, true, true, true, false, false, true, false}},
		{LevelV2, []bool{false, false, false, false, false, false, false, false, true, false}},
	} {
		for i, code := range codes {
			e := newDiffEmu()
			e.cc.Features = tc.feat
			var in diffState
			in.R[RSI] = diffMemAddr
			in.R[RAX] = 0 // lzcnt/tzcnt of 0: 64 here, rcx unchanged for bsr/bsf
			in.R[RCX] = 7
			in.MXCSR = mxDefault
			res := e.run(code, &in, false)
			if got := res.Sig == sigILL; got != tc.ill[i] {
				t.Errorf("%s at %s: SIGILL %v, want %v (%+v)", asms[i], tc.feat.Level(), got, tc.ill[i], res.Err)
			}
			if tc.ill[i] {
				c := NewCPU(e.mem, e.cc)
				c.RIP = diffInstAddr
				ex := c.Run(1)
				var mf *MissingFeatureError
				if !errors.As(ex.Err, &mf) || mf.Need == 0 {
					t.Errorf("%s at %s: exit %v does not name the missing extension", asms[i], tc.feat.Level(), ex.Err)
				}
			}
			if i == 6 || i == 7 { // lzcnt, tzcnt
				want := uint64(64)
				if tc.feat == LevelV1 || i == 7 && !tc.feat.Has(FeatBMI1) {
					want = 7 // bsr, bsf of 0 leave the destination
				}
				if i == 6 && !tc.feat.Has(FeatLZCNT) {
					want = 7
				}
				if res.S.R[RCX] != want {
					t.Errorf("%s at %s: rcx %d, want %d", asms[i], tc.feat.Level(), res.S.R[RCX], want)
				}
			}
		}
	}
}
