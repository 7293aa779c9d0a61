// Package etcd is the etcd store of hyperiso collect: an etcd cluster —
// three members started inside the process (the default), or an existing
// one — used through the etcd client's software transactional memory
// (client/v3/concurrency) at each of its isolation levels. It also
// injects faults into the embedded cluster: members stopped, killed and
// restarted, members cut off from their peers.
//
// One collect transaction is one attempt of the STM: the STM's own retry
// after a failed commit guard is refused, and the attempt recorded as
// aborted, since a retry would re-run reads the history already holds.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/history"
)

// DefaultMembers is the size of the embedded cluster.
const DefaultMembers = 3

// Store is an etcd cluster. It implements collect.Store, collect.Leveler,
// collect.RowStore (rows.go) and, for the embedded cluster,
// collect.Faulter.
type Store struct {
	cluster   *Cluster // nil for an existing cluster
	endpoints []string
	client    *clientv3.Client
	prefix    string
	version   string
	kept      string // what Teardown left, for Table
}

var quietGRPC sync.Once

// Open returns the store db names: "etcd" (an embedded cluster of
// DefaultMembers members), "etcd?members=N", or "etcd://host:port,…" for
// an existing cluster.
func Open(ctx context.Context, db string) (*Store, error) {
	// gRPC logs connection churn to standard error, which faults make
	// plentiful; the run's summary says what matters.
	quietGRPC.Do(func() { grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard)) })
	s := &Store{prefix: "hyperiso/" + strings.TrimPrefix(collect.TableName(), "hyperiso_") + "/"}
	switch rest, ok := strings.CutPrefix(db, "etcd://"); {
	case ok:
		for _, h := range strings.Split(rest, ",") {
			if h = strings.TrimSpace(h); h == "" {
				continue
			}
			if !strings.Contains(h, "://") {
				h = "http://" + h
			}
			if _, err := url.Parse(h); err != nil {
				return nil, fmt.Errorf("etcd: endpoint %q: %w", h, err)
			}
			s.endpoints = append(s.endpoints, h)
		}
		if len(s.endpoints) == 0 {
			return nil, fmt.Errorf("etcd: no endpoint in %q: want etcd://host:port,host:port,…", db)
		}
	default:
		n, err := members(db)
		if err != nil {
			return nil, err
		}
		if s.cluster, err = StartCluster(ctx, n); err != nil {
			return nil, err
		}
		s.endpoints = s.cluster.Endpoints()
	}
	if err := s.connect(ctx); err != nil {
		if s.cluster != nil {
			err = errors.Join(err, s.cluster.Close())
		}
		return nil, err
	}
	return s, nil
}

// members parses "etcd" or "etcd?members=N".
func members(db string) (int, error) {
	name, query, _ := strings.Cut(db, "?")
	if name != "etcd" {
		return 0, fmt.Errorf("etcd: unknown database %q: want etcd, etcd?members=N or etcd://host:port,…", db)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return 0, fmt.Errorf("etcd: %q: %w", db, err)
	}
	n := DefaultMembers
	for k, v := range q {
		if k != "members" {
			return 0, fmt.Errorf("etcd: unknown parameter %q in %q (want members)", k, db)
		}
		if n, err = strconv.Atoi(v[len(v)-1]); err != nil || n < 1 || n > 9 {
			return 0, fmt.Errorf("etcd: members=%s: want a number from 1 to 9", v[len(v)-1])
		}
	}
	return n, nil
}

func (s *Store) connect(ctx context.Context) error {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   s.endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		Context:     context.Background(),
	})
	if err != nil {
		return fmt.Errorf("etcd: connecting to %s: %w", strings.Join(s.endpoints, ","), err)
	}
	var last error
	for _, ep := range s.endpoints {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := c.Status(sctx, ep)
		cancel()
		if err == nil {
			s.version = st.Version
			s.client = c
			return nil
		}
		last = err
	}
	c.Close()
	return fmt.Errorf("etcd: no endpoint of %s answers: %w", strings.Join(s.endpoints, ","), last)
}

// Sweep implements collect.Sweeper: the data directories of embedded
// clusters whose process is gone (SweepDirs). An existing cluster's keys
// are left alone.
func (s *Store) Sweep(ctx context.Context, remove bool) ([]collect.Leftover, error) {
	if s.cluster == nil {
		return nil, nil
	}
	return SweepDirs(remove)
}

// Name implements collect.Store.
func (s *Store) Name() string { return "etcd" }

// Describe implements collect.Store.
func (s *Store) Describe() string {
	if s.cluster != nil {
		return fmt.Sprintf("etcd %s (embedded, %d members)", s.version, s.cluster.Size())
	}
	return fmt.Sprintf("etcd %s at %s", s.version, strings.Join(s.endpoints, ","))
}

// Cluster returns the embedded cluster, nil for an existing one.
func (s *Store) Cluster() *Cluster { return s.cluster }

// Table says where the run's keys are (with --keep-table).
func (s *Store) Table() string {
	if s.kept != "" {
		return s.kept
	}
	return "keys " + s.prefix
}

// level maps collect's levels to the STM's.
func level(iso collect.Isolation) (concurrency.Isolation, error) {
	switch iso {
	case collect.Serializable:
		return concurrency.Serializable, nil
	case collect.Snapshot:
		return concurrency.SerializableSnapshot, nil
	case collect.RepeatableRead:
		return concurrency.RepeatableReads, nil
	case collect.ReadCommitted:
		return concurrency.ReadCommitted, nil
	}
	return 0, fmt.Errorf("etcd: unsupported isolation %s", iso)
}

// Supports implements collect.Store: every level, snapshot being the
// STM's SerializableSnapshot.
func (s *Store) Supports(iso collect.Isolation) error {
	_, err := level(iso)
	return err
}

// Level implements collect.Leveler. The STM's RepeatableReads validates
// every key read at commit, as its serializable levels do: on a
// key-value history without predicates, repeatable read (Adya's PL-2.99)
// forbids what serializability forbids, so it declares SER. A range read
// reads every key of its range through the STM (rows.go), absent ones
// included, so it is validated too: no phantom either.
func (s *Store) Level(iso collect.Isolation) history.Level {
	if iso == collect.ReadCommitted {
		return history.RC
	}
	return history.SER
}

func (s *Store) key(k int64) string { return s.prefix + strconv.FormatInt(k, 10) }

// setupBatch stays under etcd's default limit of 128 operations per Txn.
const setupBatch = 100

// Setup implements collect.Store: keys 1…keys under the run's prefix hold
// 0, on every member. Reads may be served by any member, and one that had
// not applied the seeding yet would show a key before its initial value,
// which no history can explain.
func (s *Store) Setup(ctx context.Context, keys int64) error {
	var rev int64
	for k := int64(1); k <= keys; k += setupBatch {
		var ops []clientv3.Op
		for j := k; j < k+setupBatch && j <= keys; j++ {
			ops = append(ops, clientv3.OpPut(s.key(j), "0"))
		}
		resp, err := s.client.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return fmt.Errorf("etcd: seeding keys %s…: %w", s.key(k), err)
		}
		rev = resp.Header.Revision
	}
	return s.applied(ctx, rev)
}

// appliedWait bounds the wait for every member to apply the seeding.
const appliedWait = 30 * time.Second

// applied waits until every endpoint's member has applied revision rev.
func (s *Store) applied(ctx context.Context, rev int64) error {
	deadline := time.Now().Add(appliedWait)
	for _, ep := range s.endpoints {
		for {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			st, err := s.client.Status(sctx, ep)
			cancel()
			if err == nil && st.Header.Revision >= rev {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				if err == nil {
					err = fmt.Errorf("at revision %d", st.Header.Revision)
				}
				return fmt.Errorf("etcd: member %s has not applied the seeding (revision %d) after %s: %w", ep, rev, appliedWait, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// Teardown implements collect.Store: it deletes the run's keys (unless
// keep), disconnects and stops the embedded cluster, removing its data
// unless keep.
func (s *Store) Teardown(ctx context.Context, keep bool) error {
	var err error
	if s.client != nil {
		if !keep && s.cluster == nil {
			if _, derr := s.client.Delete(ctx, s.prefix, clientv3.WithPrefix()); derr != nil {
				err = fmt.Errorf("etcd: deleting keys %s*: %w", s.prefix, derr)
			}
		}
		err = errors.Join(err, s.client.Close())
		s.client = nil
	}
	if s.cluster != nil {
		if keep {
			s.cluster.StopAll()
			// Renamed out of the sweep's way: a kept directory stays.
			dir := s.cluster.Dir()
			kept := strings.Replace(dir, DirPrefix+"p", DirPrefix+"kept-", 1)
			if rerr := os.Rename(dir, kept); rerr == nil {
				dir = kept
			}
			s.kept = fmt.Sprintf("keys %s in the stopped cluster's data under %s", s.prefix, dir)
		} else {
			err = errors.Join(err, s.cluster.Close())
		}
		s.cluster = nil
	}
	return err
}

// Connect implements collect.Store. Sessions share the store's client
// (gRPC multiplexes them); a session is just a way to run transactions.
func (s *Store) Connect(ctx context.Context) (collect.Conn, error) {
	if s.client == nil {
		return nil, errors.New("etcd: store torn down")
	}
	return &conn{s: s}, nil
}

type conn struct{ s *Store }

func (c *conn) Close() error { return nil }

// Begin implements collect.Conn: it starts the STM, whose apply function
// then serves the transaction's operations one by one.
func (c *conn) Begin(_ context.Context, iso collect.Isolation) (collect.Tx, error) {
	lv, err := level(iso)
	if err != nil {
		return nil, err
	}
	// The STM keeps one context for the whole attempt; each operation's
	// deadline cancels it (call).
	sctx, cancel := context.WithCancel(context.Background())
	t := &tx{s: c.s, iso: iso, reqs: make(chan request), done: make(chan struct{}), cancel: cancel}
	go func() {
		_, t.err = concurrency.NewSTM(c.s.client, t.apply, concurrency.WithIsolation(lv), concurrency.WithAbortContext(sctx))
		cancel()
		close(t.done)
	}()
	return t, nil
}

type opKind uint8

const (
	opRead opKind = iota
	opWrite
	opPutRaw // a list's text (lists.go)
	opDelete
	opCommit
	opAbort
)

type request struct {
	op       opKind
	key, val int64
	raw      string // opPutRaw's value
	reply    chan string
}

// tx is one STM attempt, driven from the recorder's goroutine: each
// request goes to apply, which runs in the STM's goroutine.
type tx struct {
	s      *Store
	iso    collect.Isolation
	reqs   chan request
	done   chan struct{} // closed when NewSTM returned; err is then set
	err    error
	cancel context.CancelFunc
	calls  int // apply's invocations (STM goroutine only)
}

var (
	errRetry = errors.New("commit guard failed")
	errAbort = errors.New("rolled back")
)

func (t *tx) apply(stm concurrency.STM) error {
	t.calls++
	if t.calls > 1 {
		// The commit's guard failed and the STM wants to run the
		// transaction again: this attempt is over, aborted.
		return errRetry
	}
	for req := range t.reqs {
		switch req.op {
		case opRead:
			// Get aborts the STM (a panic it recovers) on an error;
			// the caller then sees done closed.
			req.reply <- stm.Get(t.s.key(req.key))
		case opWrite:
			stm.Put(t.s.key(req.key), strconv.FormatInt(req.val, 10))
			req.reply <- ""
		case opPutRaw:
			stm.Put(t.s.key(req.key), req.raw)
			req.reply <- ""
		case opDelete:
			stm.Del(t.s.key(req.key))
			req.reply <- ""
		case opCommit:
			return nil
		case opAbort:
			return errAbort
		}
	}
	return errAbort
}

// call hands req to apply and waits for its answer; ctx's end cancels
// the STM's requests.
func (t *tx) call(ctx context.Context, req request) (string, error) {
	req.reply = make(chan string, 1)
	stop := context.AfterFunc(ctx, t.cancel)
	defer stop()
	select {
	case t.reqs <- req:
	case <-t.done:
		return "", t.failure("operation")
	}
	select {
	case v := <-req.reply:
		return v, nil
	case <-t.done:
		return "", t.failure("operation")
	}
}

// failure classifies the error NewSTM returned before a commit was sent:
// nothing of the transaction can have taken effect.
func (t *tx) failure(stage string) error {
	switch {
	case t.err == nil:
		return fmt.Errorf("etcd: %s: transaction already ended", stage)
	case errors.Is(t.err, rpctypes.ErrFutureRev):
		// A serializable read at the snapshot's revision reached a
		// member that had not applied it yet.
		return collect.Conflict("snapshot revision not yet on the member read", t.err)
	case errors.Is(t.err, rpctypes.ErrCompacted):
		return collect.Conflict("snapshot revision compacted", t.err)
	}
	return collect.Aborted(stage+" failed before commit: "+errorKind(t.err), t.err)
}

// errorKind is the gist of an etcd client error, for the summary's reasons.
func errorKind(err error) string {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Error()
	}
	msg := err.Error()
	if i := strings.Index(msg, "desc = "); i >= 0 {
		msg = msg[i+len("desc = "):]
	}
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return msg
}

// Read implements collect.Tx.
func (t *tx) Read(ctx context.Context, key int64) (int64, bool, error) {
	v, err := t.call(ctx, request{op: opRead, key: key})
	if err != nil {
		return 0, false, err
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("etcd: key %s holds %q, not a number written by hyperiso", t.s.key(key), v)
	}
	return n, true, nil
}

// Write implements collect.Tx: the STM buffers it until commit.
func (t *tx) Write(ctx context.Context, key, val int64) error {
	_, err := t.call(ctx, request{op: opWrite, key: key, val: val})
	return err
}

// Commit implements collect.Tx. The STM sends one Txn guarded by the
// revisions of the keys read (and, at SerializableSnapshot, written): a
// failed guard is a definite abort; an error is an outcome unknown, since
// the Txn may have been applied whatever the client heard.
func (t *tx) Commit(ctx context.Context) error {
	stop := context.AfterFunc(ctx, t.cancel)
	defer stop()
	select {
	case t.reqs <- request{op: opCommit}:
	case <-t.done:
		return t.failure("commit")
	}
	<-t.done
	switch {
	case t.err == nil:
		return nil
	case errors.Is(t.err, errRetry):
		return collect.Conflict("STM commit guard failed (a key read or written changed)", nil)
	}
	return &lostError{t.err}
}

// lostError is a commit whose answer was lost: its Error is short, for
// the summary's reasons, and the client's error one Unwrap away.
type lostError struct{ err error }

func (e *lostError) Error() string { return "etcd: commit answer lost: " + errorKind(e.err) }
func (e *lostError) Unwrap() error { return e.err }

// Abort implements collect.Tx: the STM ends without sending anything.
func (t *tx) Abort(context.Context) error {
	select {
	case t.reqs <- request{op: opAbort}:
		<-t.done
	case <-t.done:
	}
	return nil
}
