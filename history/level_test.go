package history

import "testing"

// The levels form MixIso's partial order: a chain up to CC, PC and PSI
// side by side, then SI, SER and strict SER.
func TestLevelOrder(t *testing.T) {
	chain := []Level{RC, RA, CC, SI, SER, StrictSER}
	for i, l := range chain {
		for j, w := range chain {
			if got := l.AtLeast(w); got != (i >= j) {
				t.Errorf("%s.AtLeast(%s) = %v", l, w, got)
			}
		}
	}
	for _, mid := range []Level{PC, PSI} {
		for _, w := range []Level{RC, RA, CC, mid} {
			if !mid.AtLeast(w) {
				t.Errorf("%s.AtLeast(%s) = false", mid, w)
			}
		}
		for _, l := range []Level{SI, SER, StrictSER} {
			if !l.AtLeast(mid) || mid.AtLeast(l) {
				t.Errorf("%s and %s misordered", l, mid)
			}
		}
	}
	if PC.AtLeast(PSI) || PSI.AtLeast(PC) {
		t.Error("PC and PSI are incomparable")
	}
	if LevelNone.AtLeast(RC) || !LevelNone.AtLeast(LevelNone) || RC.AtLeast(LevelNone) {
		t.Error("LevelNone implies only itself")
	}
	// RR: strict-ser ⊆ SER ⊆ RR ⊆ RC, incomparable with RA through SI.
	for _, l := range []Level{SER, StrictSER} {
		if !l.AtLeast(RR) || RR.AtLeast(l) {
			t.Errorf("%s and rr misordered", l)
		}
	}
	if !RR.AtLeast(RC) || RC.AtLeast(RR) {
		t.Error("rr and rc misordered")
	}
	for _, l := range []Level{RA, CC, PC, PSI, SI} {
		if l.AtLeast(RR) || RR.AtLeast(l) {
			t.Errorf("rr and %s related", l)
		}
	}
	for l := RC; l <= RR; l++ {
		if Mixed.AtLeast(l) || l.AtLeast(Mixed) {
			t.Errorf("mixed and %s related", l)
		}
	}
	if !Mixed.AtLeast(Mixed) {
		t.Error("mixed implies itself")
	}
	// Lost update: PSI forbids it (no conflict), PC does not.
	lu := mustClass(LostUpdate)
	if !lu.ForbiddenAt(PSI) || lu.ForbiddenAt(PC) || !lu.ForbiddenAt(SI) || lu.ForbiddenAt(CC) {
		t.Error("lost update misplaced")
	}
}
