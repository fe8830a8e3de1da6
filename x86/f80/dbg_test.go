package f80

import "testing"

func TestDbg(t *testing.T) {
	y := F80{1, 0}
	x := One.Neg()
	r, e := Patan(y, x, 0)
	t.Logf("%s %x", hex80(r), e)
	tt := toBig(y)
	t.Log(tt.Prec(), nudge(tt, -1).Prec(), tt.MantExp(nil))
}
