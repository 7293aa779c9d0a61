package etcd_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/etcd"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// TestPredicate: the predicate workload on a one-member cluster at the
// STM's Serializable and RepeatableReads satisfies SER (dbtest.Predicate
// asserts it at serializable; RepeatableReads declares SER, and validates
// every key a range read read, present or not).
func TestPredicate(t *testing.T) {
	open := func() collect.Store {
		st, err := etcd.Open(context.Background(), "etcd?members=1")
		require.NoError(t, err)
		return st
	}
	edit := func(c *workload.Config) { c.Sessions, c.Txns, c.Keys = 4, 25, 8 }
	dbtest.Predicate(t, open, collect.Serializable, edit)
	_, v := dbtest.Predicate(t, open, collect.RepeatableRead, edit)
	require.Equal(t, check.Satisfied, v)
}

// TestAppend: the append workload on a one-member cluster satisfies SER
// at the STM's Serializable and SI at SerializableSnapshot (an append is
// a read and a longer put, guarded at commit).
func TestAppend(t *testing.T) {
	open := func() collect.Store {
		st, err := etcd.Open(context.Background(), "etcd?members=1")
		require.NoError(t, err)
		return st
	}
	h := dbtest.Append(t, open, collect.Serializable)
	res := dbtest.Verdict(t, h, history.SER)
	require.Equal(t, check.Satisfied, res.Verdict, dbtest.Describe(res))
	h = dbtest.Append(t, open, collect.Snapshot)
	res = dbtest.Verdict(t, h, history.SI)
	require.Equal(t, check.Satisfied, res.Verdict, dbtest.Describe(res))
}
