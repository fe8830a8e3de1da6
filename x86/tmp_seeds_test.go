package x86

import (
	"fmt"
	"testing"
)

func TestTmpSeeds(t *testing.T) {
	for seed := int64(10); seed < 16; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			tt := sseDiffTests()
			for i := range tt {
				if tt[i].n >= 100 {
					tt[i].n *= 4
				}
			}
			runDiff(t, seed, tt)
		})
	}
}
