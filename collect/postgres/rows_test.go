package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// smallPredicate is a predicate workload small enough for a quick check
// and dense enough to conflict.
func smallPredicate(c *workload.Config) { c.Sessions, c.Txns, c.Keys = 6, 25, 8 }

// TestPredicate: the predicate workload at SERIALIZABLE satisfies SER
// (dbtest.Predicate asserts it). At REPEATABLE READ the history is
// decided, but need not satisfy SI: PostgreSQL detects write conflicts
// per row version, not per key, so a transaction may insert a key whose
// row a concurrent transaction deleted after its snapshot (a lost update
// over the key), and then read both rows of that key (docs/predicates.md).
func TestPredicate(t *testing.T) {
	store := func() collect.Store { return open(t) }
	dbtest.Predicate(t, store, collect.Serializable, smallPredicate)
	h, _ := dbtest.Predicate(t, store, collect.RepeatableRead, smallPredicate)
	res := dbtest.Verdict(t, h, history.SI)
	require.NotEqual(t, check.Unknown, res.Verdict)
	t.Logf("repeatable read: SI %s", dbtest.Describe(res))
}
