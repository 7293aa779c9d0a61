package mariadb_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// TestDroppedTableStops: someone drops the run's table; the run stops at
// once and says why, instead of recording an empty aborted transaction
// (and a reconnection) per attempt until the end.
func TestDroppedTableStops(t *testing.T) {
	url, db, probe := dbtest.MariaDBScratch(t)
	st, err := mariadb.Open(context.Background(), url)
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
					_, err := probe.Exec("DROP TABLE " + db + ".`" + st.Table() + "`")
					dropped <- err
				}()
			})
		}
	}}
	w := dbtest.Workload(t, "general", func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys = 4, 5000, 6, 100, 0
	})
	start := time.Now()
	h, sum, err := collect.Run(context.Background(), st, w, opt)
	t.Logf("%s", sum)
	require.NoError(t, <-dropped)
	require.ErrorIs(t, err, collect.ErrStopped)
	require.ErrorContains(t, err, "run stopped: table "+st.Table()+" no longer exists (1146)")
	require.Less(t, time.Since(start), 15*time.Second)
	require.Less(t, sum.Transactions, sum.Planned/2)
	require.LessOrEqual(t, sum.Reasons["aborted: table "+st.Table()+" no longer exists (1146)"], 4, "one per session at most")
	require.Zero(t, sum.Reconnects)
	require.Equal(t, sum.Transactions, h.Stats().Transactions)
	require.Empty(t, dbtest.MariaDBTables(t, probe, db))
}

// killBeforeCommit kills the session's connection, from another one, just
// before the third COMMIT is sent: the client sees COMMIT fail with a
// connection error and cannot know whether it took effect.
type killBeforeCommit struct {
	*mariadb.Store
	probe   *sql.DB
	db      string
	commits atomic.Int64
	killed  atomic.Int64 // the connection killed
}

func (k *killBeforeCommit) Connect(ctx context.Context) (collect.Conn, error) {
	c, err := k.Store.Connect(ctx)
	return &killConn{Conn: c, k: k}, err
}

type killConn struct {
	collect.Conn
	k *killBeforeCommit
}

func (c *killConn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	tx, err := c.Conn.Begin(ctx, iso)
	return &killTx{Tx: tx, k: c.k}, err
}

type killTx struct {
	collect.Tx
	k *killBeforeCommit
}

func (t *killTx) Commit(ctx context.Context) error {
	if t.k.commits.Add(1) == 3 {
		// The run's only session is the only connection to the scratch
		// database.
		var id int64
		if err := t.k.probe.QueryRowContext(ctx, "SELECT id FROM information_schema.processlist WHERE db = ?", t.k.db).Scan(&id); err != nil {
			return err
		}
		if _, err := t.k.probe.ExecContext(ctx, "KILL CONNECTION ?", id); err != nil {
			return err
		}
		t.k.killed.Store(id)
		for range 100 {
			var n int
			if err := t.k.probe.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.processlist WHERE id = ?", id).Scan(&n); err != nil || n == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return t.Tx.Commit(ctx)
}

// TestKilledCommitIsUnknown: a session's connection is killed as it
// commits; the transaction is unknown, not aborted, and the session goes
// on over a new connection.
func TestKilledCommitIsUnknown(t *testing.T) {
	url, db, probe := dbtest.MariaDBScratch(t)
	st, err := mariadb.Open(context.Background(), url)
	require.NoError(t, err)
	k := &killBeforeCommit{Store: st, probe: probe, db: db}
	w := dbtest.Workload(t, "lost-update", func(c *workload.Config) { c.Sessions, c.Txns = 1, 5 })
	h, sum, err := collect.Run(context.Background(), k, w, collect.Options{})
	t.Logf("%s", sum)
	require.NoError(t, err)
	require.Positive(t, k.killed.Load())
	require.Equal(t, 5, sum.Transactions)
	require.Equal(t, 1, sum.Unknown)
	require.Zero(t, sum.Aborted)
	require.Equal(t, 1, sum.Reconnects)
	for r := range sum.Reasons {
		require.True(t, strings.HasPrefix(r, "unknown: commit: "), r)
	}
	require.Equal(t, history.Unknown, h.Txns[3].Status, "the third transaction")
	require.Empty(t, dbtest.MariaDBTables(t, probe, db))
}
