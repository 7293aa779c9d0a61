package cnf

import "testing"

func TestLit(t *testing.T) {
	for _, c := range []struct {
		l   Lit
		v   int32
		pos bool
	}{{1, 1, true}, {-1, 1, false}, {7, 7, true}, {-42, 42, false}} {
		if c.l.Var() != c.v || c.l.IsPos() != c.pos || c.l.Not() != -c.l || c.l.Not().Not() != c.l || c.l.Not().Var() != c.v {
			t.Errorf("%d: Var %d IsPos %v Not %d", c.l, c.l.Var(), c.l.IsPos(), c.l.Not())
		}
	}
}
