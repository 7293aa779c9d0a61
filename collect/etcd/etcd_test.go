package etcd_test

import (
	"context"
	"errors"
	"math"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/etcd"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

func small(t *testing.T, sessions, txns int) *workload.Workload {
	t.Helper()
	cfg, err := workload.Defaults("general")
	require.NoError(t, err)
	// Few keys, so that transactions conflict and the guards have work.
	cfg.Sessions, cfg.Txns, cfg.Ops, cfg.Keys, cfg.DupKeys = sessions, txns, 6, 40, 0
	w, err := workload.New("general", cfg)
	require.NoError(t, err)
	return w
}

func verdict(t *testing.T, h *history.History, level history.Level) check.Verdict {
	t.Helper()
	res, err := check.Check(context.Background(), h, level, check.Options{})
	require.NoError(t, err)
	return res.Verdict
}

// requireGone checks that the cluster left neither its directory nor a
// listener behind.
func requireGone(t *testing.T, dir string, endpoints []string) {
	t.Helper()
	_, err := os.Stat(dir)
	require.True(t, os.IsNotExist(err), "the data directory %s is removed: %v", dir, err)
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		require.NoError(t, err)
		l, err := net.Listen("tcp", u.Host)
		require.NoError(t, err, "the port of %s is free again", ep)
		l.Close()
	}
}

// lostAnswers drops the answer of every nth commit after the commit went
// through: the store committed, the client cannot know.
type lostAnswers struct {
	*etcd.Store
	n       int64
	commits atomic.Int64
	lost    atomic.Int64
}

func (s *lostAnswers) Connect(ctx context.Context) (collect.Conn, error) {
	c, err := s.Store.Connect(ctx)
	return lostConn{c, s}, err
}

type lostConn struct {
	collect.Conn
	s *lostAnswers
}

func (c lostConn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	tx, err := c.Conn.Begin(ctx, iso)
	return lostTx{tx, c.s}, err
}

type lostTx struct {
	collect.Tx
	s *lostAnswers
}

func (t lostTx) Commit(ctx context.Context) error {
	err := t.Tx.Commit(ctx)
	if err == nil && t.s.commits.Add(1)%t.s.n == 0 {
		t.s.lost.Add(1)
		return errors.New("connection reset by peer")
	}
	return err
}

// TestRestartUnderLoad is the CI run: the embedded cluster, a few hundred
// transactions at serializable while the leader restarts, checked. Every
// 25th commit's answer is lost on top of what the restart loses, so that
// the history surely holds in-doubt commits (which did commit).
func TestRestartUnderLoad(t *testing.T) {
	ctx := context.Background()
	es, err := etcd.Open(ctx, "etcd")
	require.NoError(t, err)
	st := &lostAnswers{Store: es, n: 25}
	dir, eps := es.Cluster().Dir(), es.Cluster().Endpoints()
	require.Len(t, eps, 3)
	require.Contains(t, st.Describe(), "(embedded, 3 members)")
	faults, err := collect.ParseFaults("restart:leader@20ms+300ms") // early: the run may take only ~250ms
	require.NoError(t, err)
	h, sum, err := collect.Run(ctx, st, small(t, 8, 40), collect.Options{Isolation: collect.Serializable, Faults: faults, Times: true})
	require.NoError(t, err)
	requireGone(t, dir, eps)

	require.Equal(t, 1, sum.Faults, sum.String())
	require.Len(t, sum.FaultLog, 2, sum.String())
	require.Contains(t, sum.FaultLog[0].String(), "start restart:leader@20ms+300ms: member ")
	require.Contains(t, sum.FaultLog[0].What, "(leader) stopped")
	require.Contains(t, sum.FaultLog[1].What, "(leader) back after")
	stats := h.Stats()
	require.Equal(t, 320, stats.Transactions)
	require.Positive(t, stats.Committed)
	require.Equal(t, sum.Unknown, stats.Unknown)
	require.Positive(t, st.lost.Load())
	require.GreaterOrEqual(t, sum.InDoubt, int(st.lost.Load()), "every lost answer is in doubt")
	require.Equal(t, sum.Unknown, sum.InDoubt)
	for _, tx := range h.Txns[1:] {
		require.Equal(t, history.SER, tx.Level)
		require.True(t, tx.Timed)
		if tx.Status == history.Unknown {
			require.Equal(t, int64(math.MaxInt64), tx.End, "an in-doubt commit is unknown and never completes")
		}
	}
	t.Logf("%s", sum)
	require.Equal(t, check.Satisfied, verdict(t, h, history.SER))
	require.Equal(t, check.Satisfied, verdict(t, h, history.StrictSER))
}

// TestPartitionUnderLoad: a short workload at serializable while the
// leader is cut off from its peers and, meanwhile, every message between
// members is delayed; the history must stay serializable, and the log
// says when each fault started and ended, in time order.
func TestPartitionUnderLoad(t *testing.T) {
	ctx := context.Background()
	st, err := etcd.Open(ctx, "etcd")
	require.NoError(t, err)
	faults, err := collect.ParseFaults("partition:leader@20ms+1500ms,delay:20ms~10ms@40ms+1s")
	require.NoError(t, err)
	h, sum, err := collect.Run(ctx, st, small(t, 8, 40), collect.Options{Isolation: collect.Serializable, Faults: faults, Times: true})
	require.NoError(t, err)
	t.Logf("%s", sum)
	require.Equal(t, 2, sum.Faults, sum.String())
	require.Len(t, sum.FaultLog, 4, sum.String())
	for i, e := range sum.FaultLog {
		if i > 0 {
			require.GreaterOrEqual(t, e.At, sum.FaultLog[i-1].At, "the log is in time order")
		}
	}
	require.Equal(t, "start", sum.FaultLog[0].Event)
	require.Contains(t, sum.FaultLog[0].What, "(leader) cut off from its peers")
	require.Contains(t, sum.String(), "start delay:20ms~10ms@40ms+1s: messages between members delayed by 20ms~10ms")
	require.Contains(t, sum.String(), "end partition:leader@20ms+1.5s: member ")
	stats := h.Stats()
	require.Equal(t, 320, stats.Transactions)
	require.Positive(t, stats.Committed)
	require.Equal(t, sum.Unknown, stats.Unknown)
	require.Equal(t, "partition:leader@20ms+1.5s,delay:20ms~10ms@40ms+1s", h.Meta["faults"])
	require.Equal(t, check.Satisfied, verdict(t, h, history.SER))
	t.Logf("strict-ser: %s", verdict(t, h, history.StrictSER))
}

// TestLevels runs each STM level briefly and checks what it guarantees
// whatever the interleaving: the three validating levels serializability;
// ReadCommitted read committed, but only on one member — its reads go to
// any member, and one that lags can show a transaction an older version
// than it saw before (docs/etcd.md).
func TestLevels(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three clusters")
	}
	for iso, level := range map[collect.Isolation]history.Level{
		collect.Snapshot:       history.SER,
		collect.RepeatableRead: history.SER,
		collect.ReadCommitted:  history.RC,
	} {
		t.Run(iso.String(), func(t *testing.T) {
			db := "etcd?members=3"
			if iso == collect.ReadCommitted {
				db = "etcd?members=1"
			}
			st, err := etcd.Open(context.Background(), db)
			require.NoError(t, err)
			h, sum, err := collect.Run(context.Background(), st, small(t, 4, 25), collect.Options{Isolation: iso})
			require.NoError(t, err)
			require.Equal(t, 100, sum.Transactions)
			require.Positive(t, sum.Committed)
			require.Equal(t, level, h.Txns[1].Level)
			require.Equal(t, check.Satisfied, verdict(t, h, level))
		})
	}
}

// TestExistingCluster targets a running cluster by its endpoints: the run
// deletes its keys afterwards and refuses faults.
func TestExistingCluster(t *testing.T) {
	ctx := context.Background()
	c, err := etcd.StartCluster(ctx, 1)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	db := "etcd://" + strings.Join(c.Endpoints(), ",")
	st, err := etcd.Open(ctx, strings.ReplaceAll(db, "http://", ""))
	require.NoError(t, err)
	require.Nil(t, st.Cluster())
	require.ErrorContains(t, st.CheckFault(collect.Fault{Kind: "restart", Target: "leader"}), "faults need the embedded cluster")
	h, sum, err := collect.Run(ctx, st, small(t, 3, 20), collect.Options{})
	require.NoError(t, err)
	require.Equal(t, 60, sum.Transactions)
	require.Equal(t, check.Satisfied, verdict(t, h, history.SER))

	cl, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cl.Close()
	resp, err := cl.Get(ctx, "hyperiso/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	require.Zero(t, resp.Count, "teardown deletes the run's keys")
}

// TestCommitAnswerLost: a commit whose answer never comes is not an abort,
// so the recorder makes it unknown.
func TestCommitAnswerLost(t *testing.T) {
	ctx := context.Background()
	st, err := etcd.Open(ctx, "etcd?members=1")
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Teardown(ctx, false)) }()
	require.NoError(t, st.Setup(ctx, 3))
	conn, err := st.Connect(ctx)
	require.NoError(t, err)
	tx, err := conn.Begin(ctx, collect.Serializable)
	require.NoError(t, err)
	v, found, err := tx.Read(ctx, 1)
	require.NoError(t, err)
	require.True(t, found)
	require.Zero(t, v)
	require.NoError(t, tx.Write(ctx, 2, 7))
	gone, cancel := context.WithCancel(ctx)
	cancel()
	err = tx.Commit(gone)
	require.Error(t, err)
	_, aborted := collect.IsAborted(err)
	require.False(t, aborted, "a lost answer is no abort: %v", err)
	require.Contains(t, err.Error(), "commit answer lost")

	// A changed read set is a definite abort.
	t1, err := conn.Begin(ctx, collect.Serializable)
	require.NoError(t, err)
	_, _, err = t1.Read(ctx, 3)
	require.NoError(t, err)
	t2, err := conn.Begin(ctx, collect.ReadCommitted)
	require.NoError(t, err)
	require.NoError(t, t2.Write(ctx, 3, 9))
	require.NoError(t, t2.Commit(ctx))
	require.NoError(t, t1.Write(ctx, 1, 8))
	reason, aborted := collect.IsAborted(t1.Commit(ctx))
	require.True(t, aborted)
	require.Contains(t, reason, "commit guard failed")
}

func TestOpenAndFaultErrors(t *testing.T) {
	ctx := context.Background()
	for db, msg := range map[string]string{
		"etcd?members=0":   "members=0: want a number from 1 to 9",
		"etcd?members=x":   "members=x",
		"etcd?size=3":      `unknown parameter "size"`,
		"etcd://":          "no endpoint",
		"etcd://, ,":       "no endpoint",
		"etcdx":            "unknown database",
		"etcd?members=%zz": "invalid URL escape",
	} {
		_, err := etcd.Open(ctx, db)
		require.ErrorContains(t, err, msg, db)
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := etcd.Open(sctx, "etcd://127.0.0.1:1")
	require.ErrorContains(t, err, "no endpoint of http://127.0.0.1:1 answers")

	st, err := etcd.Open(ctx, "etcd?members=1")
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Teardown(ctx, false)) }()
	for f, msg := range map[collect.Fault]string{
		{Kind: "kill-conns"}:                "fault kill-conns not supported",
		{Kind: "restart", Target: "2"}:      "member 2 does not exist (the cluster has 1)",
		{Kind: "pause", Target: "follower"}: "a one-member cluster has no follower",
		{Kind: "drop"}:                      "fault drop not supported (want restart, kill, pause, partition or delay)",
		{Kind: "partition", Target: "3"}:    "member 3 does not exist",
	} {
		require.ErrorContains(t, st.CheckFault(f), msg)
	}
	require.NoError(t, st.CheckFault(collect.Fault{Kind: "kill", Target: "1"}))
}

// TestSeededEverywhere: after Setup every member serves the initial
// values, so no read, whichever member serves it, sees a key before T⊥.
func TestSeededEverywhere(t *testing.T) {
	ctx := context.Background()
	st, err := etcd.Open(ctx, "etcd")
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Teardown(ctx, false)) }()
	require.NoError(t, st.Setup(ctx, 500))
	prefix := strings.TrimPrefix(st.Table(), "keys ")
	for _, ep := range st.Cluster().Endpoints() {
		cl, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, Logger: zap.NewNop()})
		require.NoError(t, err)
		resp, err := cl.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithSerializable())
		cl.Close()
		require.NoError(t, err)
		require.Equal(t, int64(500), resp.Count, "member %s holds every seeded key", ep)
	}
}
