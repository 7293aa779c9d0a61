package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// TestMixedLevelsRecorded collects a mixed history (4 sessions × 30
// transactions on 10 keys) with every level PostgreSQL runs: each
// transaction carries the level its seed drew, through a JSONL round trip.
func TestMixedLevelsRecorded(t *testing.T) {
	m := dbtest.Mix(t, "ser=0.3,si=0.2,cc=0.15,rc=0.2,rr=0.15")
	w := dbtest.Workload(t, "general", func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys, c.Seed = 4, 30, 6, 10, 0, 11
	})
	h, sum := dbtest.RunMix(t, open(t), w, m)
	t.Logf("%s", sum)
	require.Contains(t, h.Meta["db"], "PostgreSQL")
	for _, l := range sum.ByLevel {
		require.Positive(t, l.Transactions, "level %s drawn", l.Level)
	}
	committed := dbtest.Committed(h)
	require.Positive(t, committed[history.SER]+committed[history.SI]+committed[history.CC]+committed[history.RC])
}

// conflicts wraps a store and counts the serialization failures (40001)
// of the transactions begun at each level.
type conflicts struct {
	*postgres.Store
	mu sync.Mutex
	n  map[collect.Isolation]int
}

func (s *conflicts) Connect(ctx context.Context) (collect.Conn, error) {
	c, err := s.Store.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conflictsConn{Conn: c, s: s}, nil
}

type conflictsConn struct {
	collect.Conn
	s *conflicts
}

func (c *conflictsConn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	t, err := c.Conn.Begin(ctx, iso)
	if err != nil {
		return nil, err
	}
	return &conflictsTx{Tx: t, s: c.s, iso: iso}, nil
}

type conflictsTx struct {
	collect.Tx
	s   *conflicts
	iso collect.Isolation
}

func (t *conflictsTx) note(err error) error {
	if r, ok := collect.IsAborted(err); ok && strings.Contains(r, "40001") {
		t.s.mu.Lock()
		t.s.n[t.iso]++
		t.s.mu.Unlock()
	}
	return err
}

func (t *conflictsTx) Read(ctx context.Context, key int64) (int64, bool, error) {
	v, ok, err := t.Tx.Read(ctx, key)
	return v, ok, t.note(err)
}

func (t *conflictsTx) Write(ctx context.Context, key, val int64) error {
	return t.note(t.Tx.Write(ctx, key, val))
}

func (t *conflictsTx) Commit(ctx context.Context) error { return t.note(t.Tx.Commit(ctx)) }

// TestMixedLevelsApplied shows that PostgreSQL runs each transaction at
// the level drawn for it, not one level for all: under the lost-update
// bait, its REPEATABLE READ transactions (si) are refused with
// serialization failures, its READ COMMITTED ones (rc) never are, since
// READ COMMITTED re-reads the row an UPDATE waited for.
func TestMixedLevelsApplied(t *testing.T) {
	m := dbtest.Mix(t, "si=0.5,rc=0.5")
	w := dbtest.Workload(t, "lost-update", func(c *workload.Config) { c.Sessions, c.Txns, c.Seed = 8, 30, 3 })
	st := &conflicts{Store: open(t), n: map[collect.Isolation]int{}}
	h, sum := dbtest.RunMix(t, st, w, m)
	t.Logf("%s", sum)
	require.Zero(t, st.n[collect.ReadCommitted], "no READ COMMITTED transaction fails to serialize")
	require.Positive(t, st.n[collect.Snapshot], "REPEATABLE READ transactions lose the race")
	for _, tx := range h.Txns[1:] {
		if tx.Level == history.RC {
			require.Equal(t, history.Committed, tx.Status, "T%d at rc", tx.ID)
		}
	}
}

// TestMixedLevelsOnOneConnection asks the server, inside each transaction
// of one connection, which level it runs: each mix level's own, however
// the levels follow each other.
func TestMixedLevelsOnOneConnection(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Teardown(ctx, false)
	require.NoError(t, st.Setup(ctx, 3))
	c, err := st.Connect(ctx)
	require.NoError(t, err)
	defer c.Close()
	want := map[string]string{"ser": "serializable", "si": "repeatable read", "pc": "repeatable read", "rc": "read committed", "rr": "repeatable read"}
	for _, name := range []string{"ser", "rc", "si", "si", "rr", "ser", "pc", "rc", "ser"} {
		e := dbtest.Mix(t, name).Entries[0]
		tx, err := c.Begin(ctx, e.Iso)
		require.NoError(t, err)
		_, _, err = tx.Read(ctx, 1)
		require.NoError(t, err)
		got, err := postgres.TxIsolation(ctx, tx)
		require.NoError(t, err)
		require.Equal(t, want[name], got, name)
		require.NoError(t, tx.Abort(ctx))
	}
	_, _, err = collect.Run(ctx, open(t), dbtest.Workload(t, "lost-update", nil), collect.Options{Mix: dbtest.Mix(t, "ser,ru")})
	require.ErrorContains(t, err, "mix level ru: postgres: READ UNCOMMITTED runs as READ COMMITTED in PostgreSQL")
}
