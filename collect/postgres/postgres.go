// Package postgres is the PostgreSQL store of hyperiso collect, through
// the pgx driver: one connection per session, SERIALIZABLE, REPEATABLE
// READ (PostgreSQL's snapshot isolation) and READ COMMITTED, and a table
// of its own per run — created and seeded by Setup, dropped by Teardown.
// For the append workload (SetupLists) the table holds a BIGINT[] per key,
// appended to with array_append in one statement and read back whole; for
// the predicate workload (SetupRows, rows.go), only the live rows.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hyperiso/hyperiso/collect"
)

// Store is a PostgreSQL database. It implements collect.Store,
// collect.ListStore, collect.RowStore and collect.Faulter (kill-conns,
// and the network faults, through a proxy its sessions then connect to).
type Store struct {
	cfg     *pgx.ConnConfig
	net     collect.NetFaults
	mu      sync.Mutex
	pids    map[*conn]uint32 // the sessions' backends, for kill-conns
	admin   *pgx.Conn
	name    string // the table's name
	table   string // the table's name, quoted
	version string
	read    string
	write   string
	// The list table's statements.
	readList   string
	appendList string
	apps       []string // the application tables' names (AppTable)
}

// Open connects to the database named by url (postgres://user@host:port/db?…,
// or any connection string pgx accepts) and checks that it answers.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting to %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	s := &Store{cfg: cfg, admin: admin, pids: map[*conn]uint32{}}
	if err := admin.QueryRow(ctx, "SHOW server_version").Scan(&s.version); err != nil {
		admin.Close(ctx)
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s.setName(collect.TableName())
	return s, nil
}

func (s *Store) setName(name string) {
	s.name = name
	s.table = pgx.Identifier{s.name}.Sanitize()
	s.read = "SELECT v FROM " + s.table + " WHERE k = $1"
	s.write = "UPDATE " + s.table + " SET v = $1 WHERE k = $2"
	s.readList = "SELECT l FROM " + s.table + " WHERE k = $1"
	s.appendList = "UPDATE " + s.table + " SET l = array_append(l, $1::bigint) WHERE k = $2"
}

// KeepTable implements collect.Keeper: the table gets a name no sweep
// takes. Called before Setup.
func (s *Store) KeepTable() { s.setName(collect.KeptTableName()) }

// Sweep implements collect.Sweeper: it lists the run tables in the
// connection's current schema and drops, if remove, those whose process
// is gone.
func (s *Store) Sweep(ctx context.Context, remove bool) ([]collect.Leftover, error) {
	rows, err := s.admin.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'hyperiso\_%' ORDER BY tablename`)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: listing tables: %w", err)
	}
	return collect.SweepTables(names, s.name, remove, func(name string) error {
		_, err := s.admin.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize())
		return err
	}), nil
}

// Name implements collect.Store.
func (s *Store) Name() string { return "postgres" }

// Describe implements collect.Store.
func (s *Store) Describe() string { return "PostgreSQL " + s.version }

// Table returns the name of the run's table.
func (s *Store) Table() string { return s.name }

// Supports implements collect.Store: every level; snapshot runs at
// REPEATABLE READ, which is snapshot isolation in PostgreSQL.
func (s *Store) Supports(iso collect.Isolation) error {
	_, err := level(iso)
	return err
}

func level(iso collect.Isolation) (pgx.TxIsoLevel, error) {
	switch iso {
	case collect.Serializable:
		return pgx.Serializable, nil
	case collect.RepeatableRead, collect.Snapshot:
		return pgx.RepeatableRead, nil
	case collect.ReadCommitted:
		return pgx.ReadCommitted, nil
	case collect.ReadUncommitted:
		return "", fmt.Errorf("postgres: READ UNCOMMITTED runs as READ COMMITTED in PostgreSQL; ask for read-committed (rc)")
	}
	return "", fmt.Errorf("postgres: unsupported isolation %s", iso)
}

// Setup implements collect.Store: it creates the run's table and copies in
// keys 1…keys with value 0.
func (s *Store) Setup(ctx context.Context, keys int64) error {
	return s.setup(ctx, keys, "v BIGINT NOT NULL", "v", int64(0))
}

// SetupLists implements collect.ListStore: it creates the run's table with
// a BIGINT[] per key and copies in keys 1…keys with the empty array.
func (s *Store) SetupLists(ctx context.Context, keys int64) error {
	return s.setup(ctx, keys, "l BIGINT[] NOT NULL", "l", []int64{})
}

// setup creates the run's table with column col (named name) beside the
// key and copies in keys 1…keys with value zero.
func (s *Store) setup(ctx context.Context, keys int64, col, name string, zero any) error {
	if _, err := s.admin.Exec(ctx, "CREATE TABLE "+s.table+" (k BIGINT PRIMARY KEY, "+col+")"); err != nil {
		return fmt.Errorf("postgres: creating table %s: %w", s.name, err)
	}
	k := int64(0)
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if k == keys {
			return nil, nil
		}
		k++
		return []any{k, zero}, nil
	})
	if _, err := s.admin.CopyFrom(ctx, pgx.Identifier{s.name}, []string{"k", name}, src); err != nil {
		return fmt.Errorf("postgres: seeding table %s: %w", s.name, err)
	}
	if _, err := s.admin.Exec(ctx, "ANALYZE "+s.table); err != nil {
		return fmt.Errorf("postgres: analyzing table %s: %w", s.name, err)
	}
	return nil
}

// Teardown implements collect.Store: it drops the table (unless keep) and
// disconnects. The control connection may have died during the run (killed,
// idle timeout): the table is then dropped over a new one. Only a failure
// to drop the table is an error: with keep, Teardown cannot fail.
func (s *Store) Teardown(ctx context.Context, keep bool) error {
	var err error
	if !keep {
		drop := "DROP TABLE IF EXISTS " + s.table
		if _, err = s.admin.Exec(ctx, drop); err != nil && s.admin.IsClosed() {
			if c, cerr := pgx.ConnectConfig(ctx, s.cfg.Copy()); cerr != nil {
				err = errors.Join(err, cerr)
			} else {
				s.admin.Close(ctx)
				s.admin = c
				_, err = c.Exec(ctx, drop)
			}
		}
		if !s.admin.IsClosed() {
			err = errors.Join(err, s.dropApps(ctx, s.admin))
		}
	}
	// Closing says nothing about the table: a control connection the
	// server terminated fails to close over TLS (its close_notify meets a
	// reset socket), yet it is closed, and the table kept or dropped.
	_ = s.admin.Close(ctx)
	s.net.Close()
	return err
}

// Connect implements collect.Store: through the fault proxy, if one runs.
func (s *Store) Connect(ctx context.Context) (collect.Conn, error) {
	cfg := s.cfg.Copy()
	if addr := s.net.Addr(); addr != "" {
		// TLS, if any, still names the server: the proxy only forwards.
		cfg.Fallbacks = nil
		cfg.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		}
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cn := &conn{s: s, c: c}
	s.mu.Lock()
	s.pids[cn] = c.PgConn().PID()
	s.mu.Unlock()
	return cn, nil
}

type conn struct {
	s *Store
	c *pgx.Conn
}

func (c *conn) Close() error {
	c.s.mu.Lock()
	delete(c.s.pids, c)
	c.s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.c.Close(ctx)
}

func (c *conn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	lv, err := level(iso)
	if err != nil {
		return nil, err
	}
	t, err := c.c.BeginTx(ctx, pgx.TxOptions{IsoLevel: lv})
	if err != nil {
		return nil, c.s.classify(err)
	}
	return &tx{c: c, t: t}, nil
}

type tx struct {
	c *conn
	t pgx.Tx
}

func (t *tx) Read(ctx context.Context, key int64) (int64, bool, error) {
	var v int64
	err := t.t.QueryRow(ctx, t.c.s.read, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, t.c.s.classify(err)
	}
	return v, true, nil
}

func (t *tx) Write(ctx context.Context, key, val int64) error {
	tag, err := t.t.Exec(ctx, t.c.s.write, val, key)
	if err != nil {
		return t.c.s.classify(err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("postgres: key %d is not in table %s", key, t.c.s.name)
	}
	return nil
}

// ReadList implements collect.ListTx.
func (t *tx) ReadList(ctx context.Context, key int64) ([]int64, error) {
	var l []int64
	err := t.t.QueryRow(ctx, t.c.s.readList, key).Scan(&l)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: key %d is not in table %s", key, t.c.s.name)
	}
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	if l == nil {
		l = []int64{}
	}
	return l, nil
}

// Append implements collect.ListTx.
func (t *tx) Append(ctx context.Context, key, val int64) error {
	tag, err := t.t.Exec(ctx, t.c.s.appendList, val, key)
	if err != nil {
		return t.c.s.classify(err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("postgres: key %d is not in table %s", key, t.c.s.name)
	}
	return nil
}

func (t *tx) Commit(ctx context.Context) error {
	err := t.t.Commit(ctx)
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrTxCommitRollback) {
		return collect.Aborted("commit turned into rollback", err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Severity == "ERROR" && !strings.HasPrefix(pe.Code, "57") &&
		!strings.HasPrefix(pe.Code, "08") && !strings.HasPrefix(pe.Code, "XX") {
		// The server answered COMMIT with an ordinary error (a
		// serialization failure, a deferred constraint): it rolled
		// back. A cancelled commit (57014) or a connection or internal
		// error leaves the outcome open.
		return t.c.s.classify(err)
	}
	return err
}

func (t *tx) Abort(ctx context.Context) error { return t.t.Rollback(ctx) }

// classify marks the errors that definitely abort a transaction (an
// ERROR answer: the server rolled the transaction back): conflicts, which
// concurrency control causes; the loss of the run's table, after which no
// transaction can succeed; any other error.
func (s *Store) classify(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Severity != "ERROR" {
		return err
	}
	switch pe.Code {
	case "40001":
		return collect.Conflict("serialization failure (40001)", err)
	case "40P01":
		return collect.Conflict("deadlock (40P01)", err)
	case "55P03":
		return collect.Conflict("lock not available (55P03)", err)
	case "42P01": // undefined_table
		return collect.Fatal(fmt.Sprintf("table %s no longer exists (42P01)", s.name), err)
	case "25P02":
		return collect.Aborted("transaction already failed (25P02)", err)
	}
	return collect.Aborted(fmt.Sprintf("error %s", pe.Code), err)
}

// CheckFault implements collect.Faulter: kill-conns, and the network
// faults, for which it starts the proxy between the sessions and the
// server (the first host of the connection string).
func (s *Store) CheckFault(f collect.Fault) error {
	switch {
	case f.Kind == "kill-conns":
		return nil
	case !collect.NetworkFaults[f.Kind]:
		return fmt.Errorf("postgres: fault %s not supported (want kill-conns, delay, drop or partition)", f.Kind)
	case f.Kind == "partition" && f.Target != "":
		return fmt.Errorf("postgres: partition takes no target: it holds the traffic between the sessions and the server")
	}
	network, addr := "tcp", net.JoinHostPort(s.cfg.Host, strconv.Itoa(int(s.cfg.Port)))
	if strings.HasPrefix(s.cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", s.cfg.Host, s.cfg.Port)
	}
	if err := s.net.Prepare(network, addr); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// Inject implements collect.Faulter: for kill-conns, the server
// terminates the run's open session connections (pg_terminate_backend of
// their backends), over a connection of its own; the network faults go
// through the proxy.
func (s *Store) Inject(ctx context.Context, f collect.Fault, began func(string)) (string, error) {
	if f.Kind != "kill-conns" {
		return s.net.Inject(ctx, f, began)
	}
	s.mu.Lock()
	pids := make([]int32, 0, len(s.pids))
	for _, pid := range s.pids {
		pids = append(pids, int32(pid))
	}
	s.mu.Unlock()
	c, err := pgx.ConnectConfig(ctx, s.cfg.Copy())
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	defer c.Close(context.Background())
	var n int
	err = c.QueryRow(ctx, "SELECT count(*) FROM unnest($1::int[]) AS p WHERE pg_terminate_backend(p)", pids).Scan(&n)
	if err != nil {
		return "", fmt.Errorf("postgres: terminating the sessions: %w", err)
	}
	return fmt.Sprintf("terminated %d session connections", n), nil
}

// The store injects faults.
var _ collect.Faulter = (*Store)(nil)
