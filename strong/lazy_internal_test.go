package strong

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// pigeons adds to b the clauses of n+1 pigeons in n holes (unsatisfiable,
// and hard for CDCL): variable p*n+h+1 says pigeon p sits in hole h.
func pigeons(b *giniBackend, n int) {
	v := func(p, h int) cnf.Lit { return cnf.Lit(p*n + h + 1) }
	for p := 0; p <= n; p++ {
		var c []cnf.Lit
		for h := range n {
			c = append(c, v(p, h))
		}
		b.addClause(c)
	}
	for h := range n {
		for p := 0; p <= n; p++ {
			for q := p + 1; q <= n; q++ {
				b.addClause([]cnf.Lit{-v(p, h), -v(q, h)})
			}
		}
	}
}

// A solve that runs past its first 50 ms poll still answers, and one that
// outlives its context returns the context's error (it used to wait
// forever on gini's stopped solve after the first poll).
func TestGiniSolveLongSearch(t *testing.T) {
	small := newGini(6 * 7)
	pigeons(small, 6)
	sat, err := small.solve(context.Background())
	require.NoError(t, err)
	require.False(t, sat)

	hard := newGini(14 * 15)
	pigeons(hard, 14)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := hard.solve(ctx); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(10 * time.Second):
		t.Fatal("solve did not return after its context ended")
	}
}
