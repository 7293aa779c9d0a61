package cdcl

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

var errBudget = errors.New("over the test budget")

// budget is an Options.Fit that allows limit bytes in all and records what
// it was asked about.
type budget struct {
	limit, used int64
	refused     string
}

func (b *budget) fit(need int64, what string) error {
	if b.used+need > b.limit {
		b.refused = what
		return errBudget
	}
	b.used += need
	return nil
}

// TestFitOriginalClauses: a clause database the budget refuses stops the
// solver (AddClause false, Solve Unknown, Err the budget's error) before it
// allocates, instead of growing unchecked.
func TestFitOriginalClauses(t *testing.T) {
	cls := php(9, 8)
	b := &budget{limit: 4 << 10}
	s := New(9*8, Options{Fit: b.fit})
	added := true
	for _, c := range cls {
		if added = s.AddClause(c); !added {
			break
		}
	}
	require.False(t, added, "the clauses fit 4 KiB?")
	require.ErrorIs(t, s.Err(), errBudget)
	require.Contains(t, b.refused, "clause database")
	require.Equal(t, Unknown, s.Solve(context.Background()))
	require.LessOrEqual(t, 4*cap(s.arena), 4<<10)

	// Grow asks once for the whole CNF.
	b = &budget{limit: 1 << 30}
	s = New(9*8, Options{Fit: b.fit})
	lits := 0
	for _, c := range cls {
		lits += len(c)
	}
	require.True(t, s.Grow(len(cls), lits))
	words := cap(s.arena)
	for _, c := range cls {
		require.True(t, s.AddClause(c))
	}
	require.Equal(t, words, cap(s.arena), "the arena grew after Grow")
	require.False(t, New(1, Options{Fit: (&budget{}).fit}).Grow(10, 20))
}

// TestFitLearntClauses: learnt clauses ask the budget too; a refusal ends
// the search with Unknown and Err, not an unbounded arena.
func TestFitLearntClauses(t *testing.T) {
	cls := php(11, 10)
	lits := 0
	for _, c := range cls {
		lits += len(c)
	}
	b := &budget{limit: 1 << 30}
	s := New(11*10, Options{Fit: b.fit})
	require.True(t, s.Grow(len(cls), lits))
	for _, c := range cls {
		require.True(t, s.AddClause(c))
	}
	b.limit = b.used + 64<<10 // room for a few learnt clauses only
	require.Equal(t, Unknown, s.Solve(context.Background()))
	require.ErrorIs(t, s.Err(), errBudget)
	require.True(t, strings.Contains(b.refused, "learnt"), b.refused)
	require.LessOrEqual(t, 4*int64(cap(s.arena)), b.limit)
	require.False(t, s.AddClause([]cnf.Lit{1, 2}))
	require.Equal(t, Unknown, s.Solve(context.Background()))
}

// clockOnly is a context that is done by its Err alone: its Done channel
// never closes (a deadline passed whose timer has not yet run).
type clockOnly struct{ context.Context }

func (clockOnly) Done() <-chan struct{} { return make(chan struct{}) }
func (clockOnly) Err() error            { return context.DeadlineExceeded }

// TestSolveSeesErr: Solve stops when ctx.Err says the context is done, even
// before Done is closed.
func TestSolveSeesErr(t *testing.T) {
	s := newWith(12*11, php(12, 11), Options{ConflictLimit: 5000})
	require.Equal(t, Unknown, s.Solve(clockOnly{context.Background()}))
	require.Zero(t, s.Stats().Conflicts, "the search went on past a done context")
}
