package mariadb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// TestMixedLevelsRecorded collects a mixed history (4 sessions × 30
// transactions on 10 keys) with every level InnoDB runs: each transaction
// carries the level its seed drew (none for rr and ru), through a JSONL
// round trip.
func TestMixedLevelsRecorded(t *testing.T) {
	m := dbtest.Mix(t, "ser=0.3,rc=0.3,rr=0.25,ru=0.15")
	w := dbtest.Workload(t, "general", func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys, c.Seed = 4, 30, 6, 10, 0, 11
	})
	h, sum := dbtest.RunMix(t, open(t), w, m)
	t.Logf("%s", sum)
	require.Contains(t, h.Meta["db"], "MariaDB")
	for _, l := range sum.ByLevel {
		require.Positive(t, l.Transactions, "level %s drawn", l.Level)
	}
	committed := dbtest.Committed(h)
	require.Positive(t, committed[history.SER])
	require.Positive(t, committed[history.RC])
	require.Positive(t, committed[history.LevelNone])
}

// TestMixedLevelsOnOneConnection shows, by what one transaction sees of
// another, that InnoDB runs each transaction of one connection at its mix
// level's own, however the levels follow each other (InnoDB's table of
// transactions is no witness: information_schema caches it for 100ms).
// And the levels InnoDB has none for are refused by name.
func TestMixedLevelsOnOneConnection(t *testing.T) {
	ctx := context.Background()
	// B's writes must not wait for A's locks: a wait fails at once.
	st, err := mariadb.Open(ctx, dbtest.MariaDBURL(t)+"?innodb_lock_wait_timeout=0")
	require.NoError(t, err)
	defer st.Teardown(ctx, false)
	require.NoError(t, st.Setup(ctx, 1))
	a, err := st.Connect(ctx)
	require.NoError(t, err)
	defer a.Close()
	b, err := st.Connect(ctx)
	require.NoError(t, err)
	defer b.Close()
	val := int64(0)
	// probe runs A at iso: A reads the key, B writes it, A reads it again
	// before and after B commits. SERIALIZABLE's read locks B's write
	// out; READ UNCOMMITTED sees B's write before its commit, READ
	// COMMITTED after, REPEATABLE READ never.
	probe := func(iso collect.Isolation) string {
		ta, err := a.Begin(ctx, iso)
		require.NoError(t, err)
		defer func() { require.NoError(t, ta.Abort(ctx)) }()
		first, _, err := ta.Read(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, val, first)
		tb, err := b.Begin(ctx, collect.ReadCommitted)
		require.NoError(t, err)
		if err := tb.Write(ctx, 1, val+1); err != nil {
			reason, ok := collect.IsAborted(err)
			require.True(t, ok, "%v", err)
			require.Contains(t, reason, "1205")
			require.NoError(t, tb.Abort(ctx))
			return "SERIALIZABLE"
		}
		during, _, err := ta.Read(ctx, 1)
		require.NoError(t, err)
		require.NoError(t, tb.Commit(ctx))
		val++
		after, _, err := ta.Read(ctx, 1)
		require.NoError(t, err)
		switch {
		case during == val:
			return "READ UNCOMMITTED"
		case after == val:
			return "READ COMMITTED"
		}
		return "REPEATABLE READ"
	}
	want := map[string]string{"ser": "SERIALIZABLE", "rc": "READ COMMITTED", "rr": "REPEATABLE READ", "ru": "READ UNCOMMITTED"}
	for _, name := range []string{"ser", "rc", "rr", "rr", "ru", "ser", "ru", "rc", "ser", "rr"} {
		require.Equal(t, want[name], probe(dbtest.Mix(t, name).Entries[0].Iso), name)
	}
	for _, name := range []string{"si", "psi", "pc", "cc", "ra"} {
		_, _, err = collect.Run(ctx, open(t), dbtest.Workload(t, "lost-update", nil), collect.Options{Mix: dbtest.Mix(t, "ser,"+name)})
		require.ErrorContains(t, err, "mix level "+name+" runs at the store's snapshot level, the weakest meant to give it: mariadb: no snapshot isolation level")
	}
}
