package stores

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/apps"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// TestRWRegisterEverywhere: Jepsen's rw-register runs on every store —
// the memory store, PostgreSQL, MariaDB and an embedded etcd — and its
// history satisfies SER at serializable. Keys retire quickly, so that
// several generations of keys are used.
func TestRWRegisterEverywhere(t *testing.T) {
	pg, _, _ := dbtest.PostgresScratch(t)
	my, _, _ := dbtest.MariaDBScratch(t)
	dbs := []string{"memory", pg, my}
	if WithEtcd {
		dbs = append(dbs, "etcd?members=1")
	}
	for _, db := range dbs {
		st, err := Open(context.Background(), db, Options{Seed: 2})
		require.NoError(t, err)
		t.Run(st.Name(), func(t *testing.T) {
			w := dbtest.Workload(t, "rw-register", func(c *workload.Config) { c.Sessions, c.Txns, c.Keys, c.MaxList = 6, 30, 4, 8 })
			require.Greater(t, w.Keys(), int64(4), "keys retire")
			h, sum := dbtest.Run(t, st, w, collect.Serializable)
			require.Positive(t, sum.Committed)
			reads, writes := 0, 0
			for _, tx := range h.Txns[1:] {
				for _, op := range tx.Ops {
					switch op.Kind {
					case history.OpRead:
						reads++
					case history.OpWrite:
						writes++
					default:
						t.Fatalf("a %s in an rw-register history", op.Kind)
					}
				}
			}
			require.Positive(t, reads)
			require.Positive(t, writes)
			res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
			require.Equal(t, check.Satisfied, res.Verdict, dbtest.Describe(res))
		})
	}
}

// TestRWRegisterLostUpdate: at snapshot isolation without its write
// conflicts, the memory store loses rw-register's writes, and the history
// says so on some seed.
func TestRWRegisterLostUpdate(t *testing.T) {
	found := false
	for seed := int64(1); seed <= 5 && !found; seed++ {
		w := dbtest.Workload(t, "rw-register", func(c *workload.Config) { c.Sessions, c.Txns, c.Keys, c.Seed = 8, 40, 3, seed })
		h, _ := dbtest.Run(t, memstore.New(memstore.Options{Seed: seed, Bugs: memstore.LostUpdate}), w, collect.Snapshot)
		found = dbtest.Verdict(t, h, history.SI).Verdict == check.Violated
	}
	require.True(t, found)
}

// TestAppsOnEtcd: the application workloads run over etcd's keys as over
// the memory store's (TPC-C aside: its new-orders exceed etcd's 128
// operations per transaction), and check at SER.
func TestAppsOnEtcd(t *testing.T) {
	if !WithEtcd {
		t.Skip("built without etcd")
	}
	for _, name := range []string{"smallbank", "twitter", "rubis"} {
		st, err := Open(context.Background(), "etcd?members=1", Options{})
		require.NoError(t, err)
		c, err := apps.Defaults(name)
		require.NoError(t, err)
		c.Sessions, c.Txns = 4, 25
		w, err := apps.New(name, c, "", "")
		require.NoError(t, err)
		h, sum := dbtest.Run(t, st, w, collect.Serializable)
		require.Positive(t, sum.Committed, name)
		require.Zero(t, sum.Unknown, name)
		res := dbtest.Verdict(t, h, history.SER)
		require.Equal(t, check.Satisfied, res.Verdict, "%s: %s", name, dbtest.Describe(res))
	}
}
