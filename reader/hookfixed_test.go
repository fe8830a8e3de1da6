package reader

import (
	"testing"

	"ttd/x86"
)

// TestHookFixedAsksOnce: with HookFixed, a block's verdict is asked once
// however many RunTo calls the replay makes (the code cache keeps it);
// without, each RunTo may change the filters and the verdicts are asked
// again.
func TestHookFixedAsksOnce(t *testing.T) {
	path := recordLoop(t, 20000, "3000")
	for _, fixed := range []bool{false, true} {
		tr, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cps, err := tr.Checkpoints()
		if err != nil {
			t.Fatal(err)
		}
		if len(cps) < 4 {
			t.Fatalf("%d checkpoints, want several", len(cps))
		}
		r, err := tr.NewReplayAt(cps[0])
		if err != nil {
			t.Fatal(err)
		}
		asked := map[*x86.Block]int{}
		r.Hook = func(*Replay, *x86.CPU, *x86.Inst) {}
		r.HookInsts = func(b *x86.Block) uint64 { asked[b]++; return 0 }
		r.HookFixed = fixed
		for _, cp := range cps[1:] {
			if err := r.RunTo(cp.Position); err == ErrEnd {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		again := 0
		for _, n := range asked {
			again += n - 1
		}
		t.Logf("HookFixed %v: %d blocks, asked again %d times", fixed, len(asked), again)
		if fixed && again != 0 || !fixed && again == 0 {
			t.Errorf("HookFixed %v: %d blocks, asked again %d times", fixed, len(asked), again)
		}
		r.Close()
		tr.Close()
	}
}
