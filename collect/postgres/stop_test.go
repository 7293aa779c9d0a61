package postgres_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// TestDroppedTableStops: someone drops the run's table; the run stops at
// once and says why, instead of recording an empty aborted transaction per
// attempt until the end.
func TestDroppedTableStops(t *testing.T) {
	url, schema, probe := dbtest.PostgresScratch(t)
	st, err := postgres.Open(context.Background(), url)
	require.NoError(t, err)
	var n atomic.Int64
	var drop sync.Once
	dropped := make(chan error, 1)
	opt := collect.Options{Progress: func() {
		if n.Add(1) >= 50 {
			drop.Do(func() {
				// Not from the session: DROP waits for the open
				// transactions on the table.
				go func() {
					_, err := probe.Exec(context.Background(), "DROP TABLE "+pgx.Identifier{schema, st.Table()}.Sanitize())
					dropped <- err
				}()
			})
		}
	}}
	w := dbtest.Workload(t, "general", func(c *workload.Config) { general(5, 0)(c); c.Sessions, c.Txns = 4, 5000 })
	start := time.Now()
	h, sum, err := collect.Run(context.Background(), st, w, opt)
	t.Logf("%s", sum)
	require.NoError(t, <-dropped)
	require.ErrorIs(t, err, collect.ErrStopped)
	require.ErrorContains(t, err, "run stopped: table "+st.Table()+" no longer exists (42P01)")
	require.Less(t, time.Since(start), 15*time.Second)
	require.Less(t, sum.Transactions, sum.Planned/2)
	require.LessOrEqual(t, sum.Reasons["aborted: table "+st.Table()+" no longer exists (42P01)"], 4, "one per session at most")
	require.Equal(t, sum.Transactions, h.Stats().Transactions)
	require.Empty(t, dbtest.PostgresTables(t, probe, schema))
}

// TestKilledCommitIsUnknown: a session's connection is terminated while its
// COMMIT runs; the transaction may or may not have committed, so it is
// unknown, and the session goes on over a new connection.
func TestKilledCommitIsUnknown(t *testing.T) {
	url, schema, probe := dbtest.PostgresScratch(t)
	st, err := postgres.Open(context.Background(), url)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan int, 1)
	go func() {
		// Commits take a second (slowCommits): catch one running.
		for ctx.Err() == nil {
			var pid int
			err := probe.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
				WHERE application_name = $1 AND state = 'active' AND query ILIKE 'commit%'`, schema).Scan(&pid)
			if err == nil {
				_, err = probe.Exec(ctx, "SELECT pg_terminate_backend($1)", pid)
				if err == nil {
					killed <- pid
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	w := dbtest.Workload(t, "lost-update", func(c *workload.Config) { c.Sessions, c.Txns = 1, 3 })
	h, sum, err := collect.Run(context.Background(), slowCommits{st, url}, w, collect.Options{})
	t.Logf("%s", sum)
	require.NoError(t, err)
	select {
	case <-killed:
	default:
		t.Fatal("no COMMIT was caught running")
	}
	require.Equal(t, 3, sum.Transactions)
	require.Equal(t, 1, sum.Unknown)
	require.Zero(t, sum.Aborted)
	require.Equal(t, 1, sum.Reconnects)
	for r := range sum.Reasons {
		require.True(t, strings.HasPrefix(r, "unknown: commit: ") && strings.Contains(r, "57P01"), r)
	}
	require.Equal(t, 1, h.Stats().Unknown)
	for _, tx := range h.Txns[1:] {
		require.NotEqual(t, history.Aborted, tx.Status)
	}
}

// TestLostControlConnection: the connection that set the table up dies
// during the run; the table is still dropped, and the run, whose history
// is whole, reports no error.
func TestLostControlConnection(t *testing.T) {
	url, schema, probe := dbtest.PostgresScratch(t)
	st, err := postgres.Open(context.Background(), url)
	require.NoError(t, err)
	var n atomic.Int64
	killed := make(chan error, 1)
	opt := collect.Options{Progress: func() {
		if n.Add(1) == 20 {
			// The control connection's last statement was ANALYZE.
			_, err := probe.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE application_name = $1 AND query LIKE 'ANALYZE %'`, schema)
			killed <- err
		}
	}}
	w := dbtest.Workload(t, "general", general(6, 0))
	h, sum, err := collect.Run(context.Background(), st, w, opt)
	require.NoError(t, <-killed)
	require.NoError(t, err)
	require.Equal(t, sum.Planned, h.Stats().Transactions)
	require.Empty(t, dbtest.PostgresTables(t, probe, schema), "the table is dropped")
}
