package memstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

func TestPredicateSerializable(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		open := func() collect.Store { return memstore.New(memstore.Options{Seed: seed}) }
		edit := func(c *workload.Config) { c.Sessions, c.Txns, c.Keys, c.Seed = 6, 30, 8, seed }
		dbtest.Predicate(t, open, collect.Serializable, edit)
		h, _ := dbtest.Predicate(t, open, collect.Snapshot, edit)
		require.Equal(t, check.Satisfied, dbtest.Verdict(t, h, history.SI).Verdict, "seed %d at SI", seed)
	}
}

// TestPredicateSnapshotShowsPhantomSkew: snapshot isolation lets two
// transactions whose range reads miss each other's insert commit both (G2
// through predicates), which the range reads show: some seed's history
// violates SER.
func TestPredicateSnapshotShowsPhantomSkew(t *testing.T) {
	violated := false
	for seed := int64(1); seed <= 8 && !violated; seed++ {
		open := func() collect.Store { return memstore.New(memstore.Options{Seed: seed}) }
		_, v := dbtest.Predicate(t, open, collect.Snapshot, func(c *workload.Config) {
			c.Sessions, c.Txns, c.Keys, c.Seed = 8, 40, 6, seed
		})
		violated = v == check.Violated
	}
	require.True(t, violated, "snapshot isolation shows a write skew on some seed")
}

// noRows is a store without rows.
type noRows struct{ collect.Store }

func TestPredicateRefusedWithoutRows(t *testing.T) {
	w := dbtest.Workload(t, "predicate", nil)
	_, _, err := collect.Run(context.Background(), noRows{memstore.New(memstore.Options{})}, w, collect.Options{})
	var nr *collect.NoRowsError
	require.ErrorAs(t, err, &nr)
	require.EqualError(t, err, "the memory store cannot run the predicate workload: it has no rows (inserts, deletes and range reads)")
}
