package cdcl

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// phaseLog is a theory that accepts everything and records the order in
// which the solver decides variables (it asks Phase once per decision).
type phaseLog struct{ order []int32 }

func (p *phaseLog) Assign(cnf.Lit) []cnf.Lit   { return nil }
func (p *phaseLog) Unassign(cnf.Lit)           {}
func (p *phaseLog) Phase(v int32) (bool, bool) { p.order = append(p.order, v); return true, true }

// SetActivity orders the decisions before any conflict: on formulas
// without clauses the solver decides the variables exactly by decreasing
// activity, whatever order the activities were set in and whatever they
// were before.
func TestSetActivityOrdersDecisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for range 500 {
		n := 1 + rng.IntN(60)
		th := &phaseLog{}
		s := New(n, Options{Theory: th})
		want := make([]int32, n) // want[i]: the variable decided i-th
		for i, p := range rng.Perm(n) {
			want[p] = int32(i + 1)
		}
		for v := range n { // a first setting, raised and lowered below
			s.SetActivity(int32(v+1), 1e-3*rng.Float64())
		}
		for _, i := range rng.Perm(n) {
			s.SetActivity(want[i], 1e-3*(1-float64(i)/float64(n)))
		}
		require.Equal(t, Sat, s.Solve(context.Background()))
		require.Equal(t, want, th.order)
	}
}
