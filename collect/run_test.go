package collect_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// faulty wraps the memory store and injects failures: hook is asked before
// (and, for "commit-reply", after) each call and returns the error to
// report, or nil.
type faulty struct {
	*memstore.Store
	hook     func(stage string) error
	connects atomic.Int64
	// failConnectsAfter, when positive, makes every connect after that
	// many fail.
	failConnectsAfter int64
	setupErr          error
	teardowns         atomic.Int64
}

func (f *faulty) Teardown(ctx context.Context, keep bool) error {
	f.teardowns.Add(1)
	return f.Store.Teardown(ctx, keep)
}

func (f *faulty) Setup(ctx context.Context, keys int64) error {
	if f.setupErr != nil {
		return f.setupErr
	}
	return f.Store.Setup(ctx, keys)
}

func (f *faulty) Connect(ctx context.Context) (collect.Conn, error) {
	if n := f.connects.Add(1); f.failConnectsAfter > 0 && n > f.failConnectsAfter {
		return nil, errors.New("connection refused")
	}
	c, err := f.Store.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &faultyConn{Conn: c, f: f}, nil
}

type faultyConn struct {
	collect.Conn
	f *faulty
}

func (c *faultyConn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	if err := c.f.hook("begin"); err != nil {
		return nil, err
	}
	t, err := c.Conn.Begin(ctx, iso)
	if err != nil {
		return nil, err
	}
	return &faultyTx{Tx: t, f: c.f}, nil
}

type faultyTx struct {
	collect.Tx
	f *faulty
}

func (t *faultyTx) Read(ctx context.Context, key int64) (int64, bool, error) {
	if err := t.f.hook("read"); err != nil {
		return 0, false, err
	}
	return t.Tx.Read(ctx, key)
}

func (t *faultyTx) Commit(ctx context.Context) error {
	if err := t.f.hook("commit"); err != nil {
		_ = t.Tx.Abort(ctx)
		return err
	}
	if err := t.Tx.Commit(ctx); err != nil {
		return err
	}
	// The commit happened; its reply may still be lost.
	return t.f.hook("commit-reply")
}

// every returns a hook failing every n-th call of one stage with err, and
// a counter of the failures.
func every(stage string, n int64, err error) (func(string) error, *atomic.Int64) {
	var calls, fails atomic.Int64
	return func(s string) error {
		if s != stage {
			return nil
		}
		if calls.Add(1)%n == 0 {
			fails.Add(1)
			return err
		}
		return nil
	}, &fails
}

func general(t *testing.T, edit func(c *workload.Config)) *workload.Workload {
	return dbtest.Workload(t, "general", func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys = 5, 30, 6, 25, 0
		if edit != nil {
			edit(c)
		}
	})
}

func TestLostCommitRepliesAreUnknown(t *testing.T) {
	hook, fails := every("commit-reply", 7, errors.New("connection reset by peer"))
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: hook}
	w := general(t, nil)
	h, sum := dbtest.Run(t, st, w, collect.Serializable)
	require.Positive(t, fails.Load())
	require.Equal(t, int(fails.Load()), sum.Unknown)
	require.Equal(t, int(fails.Load()), sum.Reconnects)
	// A session continues under a fresh id after an unknown outcome (a
	// fresh id that gets no transaction is not in the history).
	require.Greater(t, sum.Sessions, 5)
	require.LessOrEqual(t, sum.Sessions, 5+sum.Unknown)
	require.Equal(t, sum.Unknown, sum.Reasons["unknown: commit: connection reset by peer"])
	// Each unknown transaction ends its session.
	for _, s := range h.Sessions {
		for i, tx := range s.Txns {
			if h.Txns[tx].Status == history.Unknown {
				require.Equal(t, len(s.Txns)-1, i)
			}
		}
	}
	// These unknown transactions did commit; the history is serializable.
	h = dbtest.RoundTrip(t, h)
	require.Equal(t, check.Satisfied, dbtest.Verdict(t, h, history.SER).Verdict)
}

func TestRefusedCommitsAreAborted(t *testing.T) {
	hook, fails := every("commit", 4, collect.Aborted("serialization failure (40001)", errors.New("could not serialize")))
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: hook}
	_, sum := dbtest.Run(t, st, general(t, nil), collect.Snapshot)
	require.Positive(t, fails.Load())
	require.Equal(t, int(fails.Load()), sum.Reasons["aborted: serialization failure (40001)"])
	require.Zero(t, sum.Unknown)
	require.Zero(t, sum.Reconnects, "a refused commit leaves the connection usable")
	require.Equal(t, 5, sum.Sessions)
}

func TestFailedOperationsAbort(t *testing.T) {
	hook, fails := every("read", 10, errors.New("i/o timeout"))
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: hook}
	h, sum := dbtest.Run(t, st, general(t, nil), collect.Serializable)
	require.Positive(t, fails.Load())
	require.Equal(t, int(fails.Load()), sum.FailedOps)
	require.Equal(t, int(fails.Load()), sum.Reconnects)
	require.Equal(t, int(fails.Load()), sum.Reasons["aborted: operation: i/o timeout"])
	require.Zero(t, sum.Unknown)
	require.Equal(t, check.Satisfied, dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER).Verdict)

	hook, fails = every("begin", 9, errors.New("server closed the connection"))
	st = &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: hook}
	h, sum = dbtest.Run(t, st, general(t, nil), collect.Serializable)
	require.Equal(t, int(fails.Load()), sum.Reasons["aborted: begin: server closed the connection"])
	empty := 0
	for _, tx := range h.Txns[1:] {
		if len(tx.Ops) == 0 {
			require.Equal(t, history.Aborted, tx.Status)
			empty++
		}
	}
	require.Equal(t, int(fails.Load()), empty, "a transaction that could not begin is kept, empty and aborted")
}

func TestSessionThatCannotReconnectStops(t *testing.T) {
	hook, _ := every("read", 25, errors.New("broken pipe"))
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: hook, failConnectsAfter: 5}
	h, sum, err := collect.Run(context.Background(), st, general(t, nil), collect.Options{Reconnects: 2})
	require.ErrorContains(t, err, "cannot reconnect after 2 attempts")
	require.NotNil(t, h, "what was recorded is returned")
	require.Less(t, sum.Transactions, sum.Planned)
	require.Equal(t, sum.Transactions, h.Stats().Transactions)
}

func TestCancelStopsAndSays(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	opt := collect.Options{Progress: func() {
		if n.Add(1) == 40 {
			cancel()
		}
	}}
	h, sum, err := collect.Run(ctx, memstore.New(memstore.Options{}), general(t, nil), opt)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, sum.Transactions, sum.Planned)
	require.Contains(t, sum.Stopped, "stopped after")
	require.Contains(t, sum.String(), "stopped after")
	require.Equal(t, sum.Transactions, h.Stats().Transactions)
}

func TestRunRefusesEarly(t *testing.T) {
	st := &faulty{Store: memstore.New(memstore.Options{}), setupErr: errors.New("permission denied")}
	_, _, err := collect.Run(context.Background(), st, general(t, nil), collect.Options{})
	require.ErrorContains(t, err, "permission denied")
	require.Equal(t, int64(1), st.teardowns.Load(), "a failed setup is torn down too")
	_, _, err = collect.Run(context.Background(), memstore.New(memstore.Options{}), general(t, nil), collect.Options{Isolation: collect.Isolation(42)})
	require.ErrorContains(t, err, "unsupported isolation")
	st = &faulty{Store: memstore.New(memstore.Options{}), hook: func(string) error { return nil }, failConnectsAfter: 2}
	_, _, err = collect.Run(context.Background(), st, general(t, nil), collect.Options{})
	require.ErrorContains(t, err, "opening session 3 of 5")
	require.Equal(t, int64(1), st.teardowns.Load())
}

func TestHistoryAndSummary(t *testing.T) {
	var progress atomic.Int64
	w := general(t, func(c *workload.Config) { c.RollbackRate = 0.1 })
	h, sum, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 2}), w,
		collect.Options{Isolation: collect.Snapshot, Progress: func() { progress.Add(1) }, Meta: map[string]string{"note": "x"}, Source: "run.jsonl"})
	require.NoError(t, err)
	require.Equal(t, int64(sum.Planned), progress.Load())
	require.Equal(t, 150, sum.Transactions)
	require.Equal(t, sum.Transactions, sum.Committed+sum.Aborted+sum.Unknown)
	require.Positive(t, sum.ClientRollbacks)
	require.Equal(t, sum.ClientRollbacks, sum.Reasons["aborted: client rollback"])
	require.Equal(t, "run.jsonl", h.Source)
	require.Equal(t, map[string]string{
		"collector": "hyperiso collect", "store": "memory", "db": "memory", "isolation": "snapshot",
		"workload": "general", "params": w.Describe(), "note": "x",
	}, h.Meta)
	require.Equal(t, history.InitImplicit, h.InitKind)
	for _, op := range h.Txns[history.InitTxn].Ops {
		require.Zero(t, h.Value(op.Key, op.Value), "keys are seeded with 0")
	}
	// Sessions in order, transaction ids 1, 2, … in that order.
	id := int64(1)
	for i, s := range h.Sessions {
		require.Equal(t, int64(i+1), s.ID)
		for _, tx := range s.Txns {
			require.Equal(t, id, h.Txns[tx].ID)
			id++
		}
	}
	out := sum.String()
	for _, want := range []string{"memory at snapshot, workload general", "150 transactions in 5 sessions", "ops/s", "client rollback"} {
		require.Contains(t, out, want)
	}
	require.Positive(t, sum.OpsPerSec())
	require.Positive(t, sum.TxnsPerSec())
}

func TestIsolationNames(t *testing.T) {
	for in, want := range map[string]collect.Isolation{
		"serializable": collect.Serializable, "SER": collect.Serializable,
		"repeatable-read": collect.RepeatableRead, "REPEATABLE READ": collect.RepeatableRead, "rr": collect.RepeatableRead,
		"snapshot": collect.Snapshot, "si": collect.Snapshot,
		"read-committed": collect.ReadCommitted, "read_committed": collect.ReadCommitted, "rc": collect.ReadCommitted,
		"read-uncommitted": collect.ReadUncommitted, "READ UNCOMMITTED": collect.ReadUncommitted, "ru": collect.ReadUncommitted,
	} {
		got, err := collect.ParseIsolation(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
		back, err := collect.ParseIsolation(got.String())
		require.NoError(t, err)
		require.Equal(t, got, back)
	}
	_, err := collect.ParseIsolation("chaos")
	require.ErrorContains(t, err, "unknown isolation level")
	require.Equal(t, "Isolation(9)", collect.Isolation(9).String())

	inner := errors.New("40001")
	err = fmt.Errorf("commit: %w", collect.Aborted("serialization failure", inner))
	reason, ok := collect.IsAborted(err)
	require.True(t, ok)
	require.Equal(t, "serialization failure", reason)
	require.ErrorIs(t, err, inner)
	require.Equal(t, "commit: aborted: serialization failure: 40001", err.Error())
	_, ok = collect.IsAborted(errors.New("eof"))
	require.False(t, ok)
	require.True(t, strings.HasPrefix(collect.TableName(), "hyperiso_"))
	require.NotEqual(t, collect.TableName(), collect.TableName())
}
