package collect_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// from returns a hook failing every call of stage, from the n-th on, with
// the error err(i) (i counts the failures from 0).
func from(stage string, n int64, err func(i int64) error) func(string) error {
	var calls, fails atomic.Int64
	return func(s string) error {
		if s != stage || calls.Add(1) < n {
			return nil
		}
		return err(fails.Add(1) - 1)
	}
}

// requireConsistent checks that the summary counts what the history holds.
func requireConsistent(t *testing.T, h *history.History, sum *collect.Summary) {
	t.Helper()
	st := h.Stats()
	require.Equal(t, sum.Transactions, st.Transactions)
	require.Equal(t, sum.Committed, st.Committed)
	require.Equal(t, sum.Aborted, st.Aborted)
	require.Equal(t, sum.Unknown, st.Unknown)
}

// TestFatalErrorStops: a store that lost its table says so once; the run
// stops there instead of recording an aborted transaction per attempt.
func TestFatalErrorStops(t *testing.T) {
	gone := func(int64) error {
		return collect.Fatal("table t no longer exists (42P01)", errors.New(`relation "t" does not exist`))
	}
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: from("read", 40, gone)}
	w := general(t, func(c *workload.Config) { c.Txns = 1000 })
	h, sum, err := collect.Run(context.Background(), st, w, collect.Options{})
	require.ErrorIs(t, err, collect.ErrStopped)
	require.ErrorContains(t, err, "run stopped: table t no longer exists (42P01)")
	require.Contains(t, sum.Stopped, "table t no longer exists")
	require.Less(t, sum.Transactions, 100)
	require.Positive(t, sum.Reasons["aborted: table t no longer exists (42P01)"])
	require.LessOrEqual(t, sum.Reasons["aborted: table t no longer exists (42P01)"], 5, "one per session at most")
	require.Zero(t, sum.Reconnects, "the store answered: the connection is fine")
	requireConsistent(t, h, sum)
	require.Equal(t, int64(1), st.teardowns.Load())
}

// TestSameErrorStreakStops: when every transaction fails the same way the
// run stops, naming the error; messages that differ only by numbers (a
// key, a port) are the same error.
func TestSameErrorStreakStops(t *testing.T) {
	for name, fail := range map[string]func(i int64) error{
		"plain error": func(i int64) error { return fmt.Errorf("key %d is not in table t_%d", i%25, i%3) },
		"abort":       func(int64) error { return collect.Aborted("error 25006", errors.New("read-only transaction")) },
	} {
		st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: from("begin", 20, fail)}
		w := general(t, func(c *workload.Config) { c.Txns = 1000 })
		h, sum, err := collect.Run(context.Background(), st, w, collect.Options{FailStreak: 50})
		require.ErrorIs(t, err, collect.ErrStopped, name)
		require.ErrorContains(t, err, "the last 50 transactions all failed with the same error", name)
		require.Less(t, sum.Transactions, 100, name)
		requireConsistent(t, h, sum)
	}
}

// TestConflictsNeverStop: concurrency-control aborts are the store doing
// its job, however many in a row; so are client rollbacks.
func TestConflictsNeverStop(t *testing.T) {
	refuse := func(int64) error {
		return collect.Conflict("serialization failure (40001)", errors.New("could not serialize"))
	}
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: from("commit", 1, refuse)}
	w := general(t, func(c *workload.Config) { c.RollbackRate = 0.3 })
	h, sum, err := collect.Run(context.Background(), st, w, collect.Options{FailStreak: 5})
	require.NoError(t, err)
	require.Equal(t, sum.Planned, sum.Transactions)
	require.Zero(t, sum.Committed)
	requireConsistent(t, h, sum)
}

// TestStreakNeedsEveryTransaction: errors among successes are no streak.
// One session, so that transactions finish in the order they begin: with
// several, failed begins (immediate) can finish three in a row while the
// successes between them are still running, which is a streak.
func TestStreakNeedsEveryTransaction(t *testing.T) {
	hook, fails := every("begin", 3, errors.New("i/o timeout"))
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 3}), hook: hook}
	w := general(t, func(c *workload.Config) { c.Sessions, c.Txns = 1, 60 })
	_, sum, err := collect.Run(context.Background(), st, w, collect.Options{FailStreak: 3})
	require.NoError(t, err)
	require.Equal(t, sum.Planned, sum.Transactions)
	require.Positive(t, fails.Load())
}

// ctxTx makes the memory store's transactions answer a cancelled context
// with its error, as the drivers do.
type ctxStore struct{ *memstore.Store }

func (s ctxStore) Connect(ctx context.Context) (collect.Conn, error) {
	c, err := s.Store.Connect(ctx)
	return ctxConn{c}, err
}

type ctxConn struct{ collect.Conn }

func (c ctxConn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx, err := c.Conn.Begin(ctx, iso)
	return ctxTx{tx}, err
}

type ctxTx struct{ collect.Tx }

func (t ctxTx) Read(ctx context.Context, key int64) (int64, bool, error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	return t.Tx.Read(ctx, key)
}

func (t ctxTx) Write(ctx context.Context, key, val int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return t.Tx.Write(ctx, key, val)
}

func (t ctxTx) Commit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		_ = t.Tx.Abort(context.Background())
		return err
	}
	return t.Tx.Commit(ctx)
}

// TestInFlightWhenStoppedAreUnknown: the transactions a stop interrupts
// are unknown, never guessed aborted from the error the cancellation
// caused.
func TestInFlightWhenStoppedAreUnknown(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted by SIGTERM")
	var n atomic.Int64
	opt := collect.Options{Progress: func() {
		if n.Add(1) == 40 {
			cancel(stop)
		}
	}}
	w := general(t, func(c *workload.Config) { c.Sessions, c.Txns = 8, 100 })
	h, sum, err := collect.Run(ctx, ctxStore{memstore.New(memstore.Options{Seed: 4})}, w, opt)
	require.ErrorIs(t, err, stop)
	require.Contains(t, sum.Stopped, "interrupted by SIGTERM")
	require.Positive(t, sum.Unknown)
	require.Equal(t, sum.Unknown, sum.Reasons["unknown: in flight when the run stopped"]+sum.Reasons["unknown: commit in flight when the run stopped"])
	for r := range sum.Reasons {
		require.NotContains(t, r, "context canceled", "no outcome guessed from the cancellation")
	}
	requireConsistent(t, h, sum)
}

func TestTeardownErrorIsTyped(t *testing.T) {
	st := &failingTeardown{memstore.New(memstore.Options{})}
	h, sum, err := collect.Run(context.Background(), st, general(t, nil), collect.Options{})
	var te *collect.TeardownError
	require.ErrorAs(t, err, &te)
	require.Equal(t, "tearing down memory: connection lost", te.Error())
	require.NotErrorIs(t, err, collect.ErrStopped)
	require.Equal(t, sum.Planned, h.Stats().Transactions, "the history is whole")
}

type failingTeardown struct{ *memstore.Store }

func (f *failingTeardown) Teardown(ctx context.Context, keep bool) error {
	_ = f.Store.Teardown(ctx, keep)
	return errors.New("connection lost")
}
