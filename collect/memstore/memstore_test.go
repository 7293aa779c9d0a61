package memstore_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// small is a general workload small enough for a quick check and dense
// enough to conflict: 6 sessions × 25 transactions × 8 operations on 30 keys.
func small(seed int64, dup float64) func(c *workload.Config) {
	return func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys, c.ValueSpace, c.Seed = 6, 25, 8, 30, dup, 10, seed
	}
}

func run(t *testing.T, seed int64, bugs memstore.Bug, iso collect.Isolation, w *workload.Workload) (*history.History, *collect.Summary) {
	t.Helper()
	h, sum := dbtest.Run(t, memstore.New(memstore.Options{Seed: seed, Bugs: bugs}), w, iso)
	return dbtest.RoundTrip(t, h), sum
}

func verdict(t *testing.T, h *history.History, level history.Level) check.Verdict {
	t.Helper()
	return dbtest.Verdict(t, h, level).Verdict
}

func TestSerializableAcceptedAtSER(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		for _, dup := range []float64{0, 0.5} {
			w := dbtest.Workload(t, "general", small(seed, dup))
			h, sum := run(t, seed, 0, collect.Serializable, w)
			require.Positive(t, sum.Committed)
			require.Positive(t, sum.Aborted, "the schedule interleaves: some transactions conflict")
			require.Equal(t, check.Satisfied, verdict(t, h, history.SER), "seed %d dup %g", seed, dup)
		}
	}
	// The baits cannot trip a serializable store either.
	for _, name := range []string{"write-skew", "lost-update", "blindw-rw"} {
		w := dbtest.Workload(t, name, func(c *workload.Config) { c.Txns = 20 })
		h, _ := run(t, 1, 0, collect.Serializable, w)
		require.Equal(t, check.Satisfied, verdict(t, h, history.SER), name)
	}
}

func TestSnapshotAcceptedAtSIButNotSER(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		w := dbtest.Workload(t, "general", small(seed, 0.5))
		h, _ := run(t, seed, 0, collect.Snapshot, w)
		require.Equal(t, check.Satisfied, verdict(t, h, history.SI), "seed %d", seed)
	}
	w := dbtest.Workload(t, "lost-update", nil)
	h, _ := run(t, 1, 0, collect.Snapshot, w)
	require.Equal(t, check.Satisfied, verdict(t, h, history.SI), "first committer wins stops lost updates")
	// Snapshot isolation allows write skew: the bait finds it.
	w = dbtest.Workload(t, "write-skew", nil)
	h, _ = run(t, 1, 0, collect.Snapshot, w)
	require.Equal(t, check.Satisfied, verdict(t, h, history.SI))
	require.Equal(t, check.Violated, verdict(t, h, history.SER))
	// repeatable-read means snapshot in the memory store.
	h2, _ := run(t, 1, 0, collect.RepeatableRead, w)
	require.Equal(t, check.Violated, verdict(t, h2, history.SER))
}

func TestLostUpdateBugRejectedAtSI(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		w := dbtest.Workload(t, "lost-update", func(c *workload.Config) { c.Seed = seed })
		h, sum := run(t, seed, memstore.LostUpdate, collect.Snapshot, w)
		require.Zero(t, sum.Aborted, "no write-conflict check, no aborts")
		require.Equal(t, check.Violated, verdict(t, h, history.SI), "seed %d", seed)
		// And on the general workload too.
		w = dbtest.Workload(t, "general", small(seed, 0))
		h, _ = run(t, seed, memstore.LostUpdate, collect.Snapshot, w)
		require.Equal(t, check.Violated, verdict(t, h, history.SI), "seed %d", seed)
	}
}

func TestReadCommitted(t *testing.T) {
	w := dbtest.Workload(t, "lost-update", nil)
	h, _ := run(t, 1, 0, collect.ReadCommitted, w)
	require.Equal(t, check.Violated, verdict(t, h, history.SI), "read committed loses updates")
	require.Equal(t, check.Satisfied, verdict(t, h, history.RC))
}

func TestInjectedBugsAreFound(t *testing.T) {
	t.Run("fractured-reads", func(t *testing.T) {
		w := dbtest.Workload(t, "general", small(1, 0))
		h, _ := run(t, 1, memstore.FracturedReads, collect.Snapshot, w)
		require.Equal(t, check.Violated, verdict(t, h, history.SI))
		require.Equal(t, check.Violated, verdict(t, h, history.RA))
	})
	t.Run("aborted-reads", func(t *testing.T) {
		w := dbtest.Workload(t, "lost-update", func(c *workload.Config) { c.RollbackRate = 0.2 })
		h, sum := run(t, 1, memstore.AbortedReads, collect.Snapshot, w)
		require.Positive(t, sum.ClientRollbacks)
		res := dbtest.Verdict(t, h, history.SER)
		require.Equal(t, check.Violated, res.Verdict)
		require.Equal(t, "aborted-read", res.Anomalies[0].Type)
	})
	t.Run("stale-reads", func(t *testing.T) {
		for _, iso := range []collect.Isolation{collect.Snapshot, collect.Serializable} {
			w := dbtest.Workload(t, "general", small(1, 0))
			h, _ := run(t, 1, memstore.StaleReads, iso, w)
			require.Equal(t, check.Violated, verdict(t, h, history.SI), "%s", iso)
		}
	})
}

// TestDuplicateValueTwins runs each configuration twice with one seed: once
// with repeated values on half the keys and once with unique values. The
// scheduler never looks at values, so the two runs are one execution that
// differs only in what was written; the checkers must judge them alike.
// (A satisfying unique history always projects to a satisfying duplicate
// one; the converse can fail in principle, when ambiguity hides every
// violating cycle, but not on these runs, where violations are many.)
func TestDuplicateValueTwins(t *testing.T) {
	type config struct {
		bugs memstore.Bug
		iso  collect.Isolation
	}
	configs := []config{
		{0, collect.Serializable},
		{0, collect.Snapshot},
		{memstore.LostUpdate, collect.Snapshot},
		{memstore.FracturedReads, collect.Snapshot},
		{0, collect.ReadCommitted},
	}
	for _, cfg := range configs {
		for seed := int64(1); seed <= 6; seed++ {
			name := fmt.Sprintf("%s/%s/seed%d", cfg.iso, cfg.bugs, seed)
			t.Run(name, func(t *testing.T) {
				dupW := dbtest.Workload(t, "general", small(seed, 0.5))
				uniW := dbtest.Workload(t, "general", small(seed, 0))
				dup, _ := run(t, seed, cfg.bugs, cfg.iso, dupW)
				uni, _ := run(t, seed, cfg.bugs, cfg.iso, uniW)
				requireTwins(t, dupW, dup, uni)
				st := dup.Stats()
				require.Positive(t, st.MultiWriterReads, "the duplicate history has ambiguous reads")
				require.Zero(t, uni.Stats().MultiWriterReads)
				for _, lv := range []history.Level{history.SER, history.SI} {
					u, d := verdict(t, uni, lv), verdict(t, dup, lv)
					require.Equal(t, u, d, "%s: unique %s, duplicate %s", lv, u, d)
				}
			})
		}
	}
}

// requireTwins checks that dup and uni differ only in the values of keys
// whose values repeat.
func requireTwins(t *testing.T, w *workload.Workload, dup, uni *history.History) {
	t.Helper()
	require.Equal(t, len(uni.Txns), len(dup.Txns))
	for i := range uni.Txns {
		a, b := &dup.Txns[i], &uni.Txns[i]
		require.Equal(t, b.Status, a.Status, "txn %d", i)
		require.Equal(t, uni.SessionOf(history.TxnID(i)), dup.SessionOf(history.TxnID(i)))
		require.Equal(t, len(b.Ops), len(a.Ops))
		for j := range a.Ops {
			x, y := a.Ops[j], b.Ops[j]
			require.Equal(t, y.Kind, x.Kind)
			k := dup.Key(x.Key)
			require.Equal(t, uni.Key(y.Key), k)
			if !w.DupKey(k) {
				require.Equal(t, uni.Value(y.Key, y.Value), dup.Value(x.Key, x.Value))
			}
		}
	}
}

func TestSameSeedSameHistory(t *testing.T) {
	w := dbtest.Workload(t, "general", small(7, 0.5))
	var out [2]bytes.Buffer
	for i := range out {
		h, _, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 7}), w, collect.Options{Isolation: collect.Snapshot})
		require.NoError(t, err)
		require.NoError(t, jsonl.Write(&out[i], h))
	}
	require.Equal(t, out[0].String(), out[1].String())
	h, _, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 8}), w, collect.Options{Isolation: collect.Snapshot})
	require.NoError(t, err)
	var other bytes.Buffer
	require.NoError(t, jsonl.Write(&other, h))
	require.NotEqual(t, out[0].String(), other.String(), "the seed drives the schedule")
}

func TestBugsAndLevels(t *testing.T) {
	b, err := memstore.ParseBugs("lost-update, stale-reads")
	require.NoError(t, err)
	require.Equal(t, memstore.LostUpdate|memstore.StaleReads, b)
	require.Equal(t, "lost-update,stale-reads", b.String())
	b, err = memstore.ParseBugs("")
	require.NoError(t, err)
	require.Equal(t, "none", b.String())
	_, err = memstore.ParseBugs("torn-writes")
	require.ErrorContains(t, err, "unknown bug")
	require.Len(t, memstore.BugNames(), 4)

	s := memstore.New(memstore.Options{Bugs: memstore.FracturedReads})
	require.Equal(t, "memory", s.Name())
	require.Equal(t, "memory (bugs: fractured-reads)", s.Describe())
	for _, iso := range []collect.Isolation{collect.Serializable, collect.Snapshot, collect.RepeatableRead, collect.ReadCommitted} {
		require.NoError(t, s.Supports(iso))
	}
	require.Error(t, s.Supports(collect.Isolation(99)))
}

func TestStoreBasics(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.Options{})
	require.NoError(t, s.Setup(ctx, 3))
	c, err := s.Connect(ctx)
	require.NoError(t, err)
	defer c.Close()
	tx, err := c.Begin(ctx, collect.Snapshot)
	require.NoError(t, err)
	v, ok, err := tx.Read(ctx, 2)
	require.NoError(t, err)
	require.True(t, ok)
	require.Zero(t, v)
	_, ok, err = tx.Read(ctx, 9)
	require.NoError(t, err)
	require.False(t, ok, "an unseeded key has no value")
	require.NoError(t, tx.Write(ctx, 2, 5))
	v, _, _ = tx.Read(ctx, 2)
	require.Equal(t, int64(5), v, "own write")
	require.NoError(t, tx.Commit(ctx))
	require.Error(t, tx.Commit(ctx), "a transaction ends once")

	// First committer wins.
	t1, _ := c.Begin(ctx, collect.Snapshot)
	t2, _ := c.Begin(ctx, collect.Snapshot)
	require.NoError(t, t1.Write(ctx, 1, 10))
	require.NoError(t, t2.Write(ctx, 1, 20))
	require.NoError(t, t1.Commit(ctx))
	reason, ok := collect.IsAborted(t2.Commit(ctx))
	require.True(t, ok)
	require.Contains(t, reason, "first committer wins")

	// Serializable validates reads of update transactions.
	t3, _ := c.Begin(ctx, collect.Serializable)
	t4, _ := c.Begin(ctx, collect.Serializable)
	_, _, _ = t3.Read(ctx, 3)
	require.NoError(t, t3.Write(ctx, 2, 30))
	require.NoError(t, t4.Write(ctx, 3, 40))
	require.NoError(t, t4.Commit(ctx))
	_, ok = collect.IsAborted(t3.Commit(ctx))
	require.True(t, ok)
	require.NoError(t, s.Teardown(ctx, false))
}
