package apps_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/apps"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// small builds a small run of the named application.
func small(t testing.TB, name string, sessions, txns int, seed int64, scale, mix string) *workload.Workload {
	t.Helper()
	c, err := apps.Defaults(name)
	require.NoError(t, err)
	c.Sessions, c.Txns, c.Seed = sessions, txns, seed
	w, err := apps.New(name, c, scale, mix)
	require.NoError(t, err)
	return w
}

// smallScale keeps TPC-C quick on the servers.
var smallScale = map[string]string{"tpcc": "warehouses=1,districts=2,customers=10,items=20,lines=6"}

func collectRun(t testing.TB, st collect.Store, w *workload.Workload, opt collect.Options) (*history.History, *collect.Summary) {
	t.Helper()
	h, sum, err := collect.Run(context.Background(), st, w, opt)
	require.NoError(t, err)
	require.Equal(t, sum.Planned, sum.Transactions)
	require.Equal(t, h.Stats().Operations, sum.Operations)
	t.Logf("%s", sum)
	return h, sum
}

func TestMemorySerializable(t *testing.T) {
	for _, name := range apps.Names {
		t.Run(name, func(t *testing.T) {
			for seed := int64(1); seed <= 2; seed++ {
				w := small(t, name, 6, 40, seed, "", "")
				h, sum := collectRun(t, memstore.New(memstore.Options{Seed: seed}), w, collect.Options{Isolation: collect.Serializable})
				require.Positive(t, sum.Committed)
				res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
				require.Equal(t, check.Satisfied, res.Verdict, "%s seed %d: %s", name, seed, dbtest.Describe(res))
			}
		})
	}
}

func TestPostgresSerializable(t *testing.T) {
	url, _, _ := dbtest.PostgresScratch(t)
	for _, name := range apps.Names {
		t.Run(name, func(t *testing.T) {
			st, err := postgres.Open(context.Background(), url)
			require.NoError(t, err)
			w := small(t, name, 6, 30, 1, smallScale[name], "")
			h, sum := collectRun(t, st, w, collect.Options{Isolation: collect.Serializable})
			require.Positive(t, sum.Committed)
			res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
			require.Equal(t, check.Satisfied, res.Verdict, "%s: %s", name, dbtest.Describe(res))
		})
	}
}

func TestMariaDBSerializable(t *testing.T) {
	url, _, _ := dbtest.MariaDBScratch(t)
	for _, name := range apps.Names {
		t.Run(name, func(t *testing.T) {
			st, err := mariadb.Open(context.Background(), url)
			require.NoError(t, err)
			w := small(t, name, 6, 30, 1, smallScale[name], "")
			h, sum := collectRun(t, st, w, collect.Options{Isolation: collect.Serializable})
			require.Positive(t, sum.Committed)
			res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
			require.Equal(t, check.Satisfied, res.Verdict, "%s: %s", name, dbtest.Describe(res))
		})
	}
}
