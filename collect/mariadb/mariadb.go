// Package mariadb is the MariaDB/MySQL store of hyperiso collect, through
// go-sql-driver/mysql: one pinned connection per session, SERIALIZABLE,
// REPEATABLE READ (InnoDB's, which is not snapshot isolation), READ
// COMMITTED and READ UNCOMMITTED, and an InnoDB table of its own per run —
// created and seeded by Setup, dropped by Teardown. For the append
// workload (SetupLists) the table holds a text per key, the list's elements
// in decimal separated by spaces, appended to with CONCAT in one statement
// and read back whole; for the predicate workload (SetupRows, rows.go),
// only the live rows.
package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"

	"github.com/hyperiso/hyperiso/collect"
)

// Store is a MariaDB or MySQL database. It implements collect.Store,
// collect.ListStore, collect.RowStore and collect.Faulter (kill-conns,
// and the network faults, through a proxy its sessions then connect to).
type Store struct {
	db  *sql.DB
	cfg *mysql.Config
	net collect.NetFaults
	// sess opens the sessions' connections: db, or a pool through the
	// fault proxy.
	sess    *sql.DB
	mu      sync.Mutex
	ids     map[*conn]int64 // the sessions' connection ids, for kill-conns
	name    string
	table   string // quoted
	version string
	read    string
	write   string
	// The list table's statements.
	readList   string
	appendList string
	apps       []string // the application tables' names (AppTable)
}

// ParseURL turns mariadb://user:password@host:port/database?param=value
// (or mysql://…) into the driver's configuration. The host defaults to
// 127.0.0.1:3306, the user to root; parameters are the driver's DSN
// parameters (e.g. tls=true, timeout=5s).
func ParseURL(raw string) (*mysql.Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	if u.Scheme != "mariadb" && u.Scheme != "mysql" {
		return nil, fmt.Errorf("mariadb: URL scheme must be mariadb:// or mysql:// (got %q)", u.Scheme)
	}
	host := u.Host
	if host == "" {
		host = "127.0.0.1:3306"
	} else if u.Port() == "" {
		host += ":3306"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		return nil, fmt.Errorf("mariadb: the URL must name a database, e.g. mariadb://root@127.0.0.1:3306/test")
	}
	var dsn strings.Builder
	user := "root"
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	dsn.WriteString(user)
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			dsn.WriteString(":" + pw)
		}
	}
	dsn.WriteString("@tcp(" + host + ")/" + db)
	if u.RawQuery != "" {
		dsn.WriteString("?" + u.RawQuery)
	}
	cfg, err := mysql.ParseDSN(dsn.String())
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	// One round trip per statement, and UPDATE counts matched rows, so an
	// update writing a key's current value still reports the key.
	cfg.InterpolateParams = true
	cfg.ClientFoundRows = true
	// The driver logs to standard error what it also returns (a killed
	// connection's "unexpected EOF"): the recorder counts those.
	cfg.Logger = log.New(io.Discard, "", 0)
	return cfg, nil
}

// Open connects to the database named by url (see ParseURL) and checks
// that it answers.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	db := sql.OpenDB(connector)
	// A closed session connection is really closed, never handed back
	// with a transaction it may have left open.
	db.SetMaxIdleConns(0)
	s := &Store{db: db, cfg: cfg, sess: db, ids: map[*conn]int64{}}
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&s.version); err != nil {
		db.Close()
		return nil, fmt.Errorf("mariadb: connecting to %s: %w", cfg.Addr, err)
	}
	s.setName(collect.TableName())
	return s, nil
}

func (s *Store) setName(name string) {
	s.name = name
	s.table = "`" + s.name + "`"
	s.read = "SELECT v FROM " + s.table + " WHERE k = ?"
	s.write = "UPDATE " + s.table + " SET v = ? WHERE k = ?"
	s.readList = "SELECT l FROM " + s.table + " WHERE k = ?"
	s.appendList = "UPDATE " + s.table + " SET l = CONCAT(l, ' ', ?) WHERE k = ?"
}

// KeepTable implements collect.Keeper: the table gets a name no sweep
// takes. Called before Setup.
func (s *Store) KeepTable() { s.setName(collect.KeptTableName()) }

// Sweep implements collect.Sweeper: it lists the run tables of the
// connection's database and drops, if remove, those whose process is gone.
func (s *Store) Sweep(ctx context.Context, remove bool) ([]collect.Leftover, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'hyperiso\_%' ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("mariadb: listing tables: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("mariadb: listing tables: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mariadb: listing tables: %w", err)
	}
	return collect.SweepTables(names, s.name, remove, func(name string) error {
		_, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS `"+name+"`")
		return err
	}), nil
}

// Name implements collect.Store.
func (s *Store) Name() string { return "mariadb" }

// Describe implements collect.Store.
func (s *Store) Describe() string {
	if strings.Contains(strings.ToLower(s.version), "mariadb") {
		return "MariaDB " + s.version
	}
	return "MySQL " + s.version
}

// Table returns the name of the run's table.
func (s *Store) Table() string { return s.name }

// Supports implements collect.Store. Snapshot is refused: InnoDB's
// REPEATABLE READ is not snapshot isolation (ask for repeatable-read to
// test what it is).
func (s *Store) Supports(iso collect.Isolation) error {
	_, err := level(iso)
	return err
}

func level(iso collect.Isolation) (string, error) {
	switch iso {
	case collect.Serializable:
		return "SERIALIZABLE", nil
	case collect.RepeatableRead:
		return "REPEATABLE READ", nil
	case collect.ReadCommitted:
		return "READ COMMITTED", nil
	case collect.ReadUncommitted:
		return "READ UNCOMMITTED", nil
	case collect.Snapshot:
		return "", fmt.Errorf("mariadb: no snapshot isolation level (InnoDB's REPEATABLE READ is weaker; ask for repeatable-read, rr in a mix, to test what it is)")
	}
	return "", fmt.Errorf("mariadb: unsupported isolation %s", iso)
}

// Setup implements collect.Store: it creates the run's table and inserts
// keys 1…keys with value 0.
func (s *Store) Setup(ctx context.Context, keys int64) error {
	return s.setup(ctx, keys, "v BIGINT NOT NULL", "v", "0")
}

// SetupLists implements collect.ListStore: it creates the run's table with
// a text per key and inserts keys 1…keys with the empty list (the empty
// text).
func (s *Store) SetupLists(ctx context.Context, keys int64) error {
	return s.setup(ctx, keys, "l LONGTEXT NOT NULL", "l", "''")
}

// setup creates the run's table with column col (named name) beside the
// key and inserts keys 1…keys with the SQL value zero.
func (s *Store) setup(ctx context.Context, keys int64, col, name, zero string) error {
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE "+s.table+" (k BIGINT PRIMARY KEY, "+col+") ENGINE=InnoDB"); err != nil {
		return fmt.Errorf("mariadb: creating table %s: %w", s.name, err)
	}
	const batch = 1000
	for lo := int64(1); lo <= keys; lo += batch {
		var q strings.Builder
		q.WriteString("INSERT INTO " + s.table + " (k, " + name + ") VALUES ")
		for k := lo; k < lo+batch && k <= keys; k++ {
			if k > lo {
				q.WriteByte(',')
			}
			fmt.Fprintf(&q, "(%d,%s)", k, zero)
		}
		if _, err := s.db.ExecContext(ctx, q.String()); err != nil {
			return fmt.Errorf("mariadb: seeding table %s: %w", s.name, err)
		}
	}
	return nil
}

// Teardown implements collect.Store: it drops the table (unless keep) and
// disconnects.
func (s *Store) Teardown(ctx context.Context, keep bool) error {
	var err error
	if !keep {
		_, err = s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+s.table)
		err = errors.Join(err, s.dropApps(ctx))
	}
	// As for PostgreSQL, closing a dead connection says nothing about
	// the table.
	_ = s.db.Close()
	if s.sess != s.db {
		_ = s.sess.Close()
	}
	s.net.Close()
	return err
}

// Connect implements collect.Store: through the fault proxy, if one runs.
func (s *Store) Connect(ctx context.Context) (collect.Conn, error) {
	c, err := s.sess.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		c.Close()
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	cn := &conn{s: s, c: c}
	s.mu.Lock()
	s.ids[cn] = id
	s.mu.Unlock()
	return cn, nil
}

// conn runs transactions with explicit statements on a pinned connection,
// so that each statement has its own deadline (database/sql's Tx would
// roll back when the context of its BeginTx ends).
type conn struct {
	s     *Store
	c     *sql.Conn
	level string // session isolation level last set
}

func (c *conn) Close() error {
	c.s.mu.Lock()
	delete(c.s.ids, c)
	c.s.mu.Unlock()
	return c.c.Close()
}

func (c *conn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	lv, err := level(iso)
	if err != nil {
		return nil, err
	}
	if lv != c.level {
		if _, err := c.c.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL "+lv); err != nil {
			return nil, c.s.classify(err)
		}
		c.level = lv
	}
	if _, err := c.c.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return nil, c.s.classify(err)
	}
	return &tx{c: c}, nil
}

type tx struct{ c *conn }

func (t *tx) Read(ctx context.Context, key int64) (int64, bool, error) {
	var v int64
	err := t.c.c.QueryRowContext(ctx, t.c.s.read, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, t.c.s.classify(err)
	}
	return v, true, nil
}

func (t *tx) Write(ctx context.Context, key, val int64) error {
	res, err := t.c.c.ExecContext(ctx, t.c.s.write, val, key)
	if err != nil {
		return t.c.s.classify(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("mariadb: key %d is not in table %s", key, t.c.s.name)
	}
	return nil
}

// ReadList implements collect.ListTx.
func (t *tx) ReadList(ctx context.Context, key int64) ([]int64, error) {
	var text string
	err := t.c.c.QueryRowContext(ctx, t.c.s.readList, key).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("mariadb: key %d is not in table %s", key, t.c.s.name)
	}
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	return parseList(text)
}

// parseList reads a list's text: its elements in decimal, separated by
// spaces.
func parseList(text string) ([]int64, error) {
	fields := strings.Fields(text)
	l := make([]int64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("mariadb: a list holds %q, not an integer", f)
		}
		l[i] = v
	}
	return l, nil
}

// Append implements collect.ListTx.
func (t *tx) Append(ctx context.Context, key, val int64) error {
	res, err := t.c.c.ExecContext(ctx, t.c.s.appendList, val, key)
	if err != nil {
		return t.c.s.classify(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("mariadb: key %d is not in table %s", key, t.c.s.name)
	}
	return nil
}

func (t *tx) Commit(ctx context.Context) error {
	_, err := t.c.c.ExecContext(ctx, "COMMIT")
	return t.c.s.classify(err)
}

func (t *tx) Abort(ctx context.Context) error {
	_, err := t.c.c.ExecContext(ctx, "ROLLBACK")
	return err
}

// classify marks the errors after which InnoDB has rolled back, or the
// recorder must roll back, the transaction: the conflicts — deadlock, lock
// wait timeout, "record has changed since last read" (MariaDB's snapshot
// check) — and the loss of the run's table, after which no transaction can
// succeed. Anything else, a lost connection included, leaves the outcome
// of a COMMIT open.
func (s *Store) classify(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1213:
			return collect.Conflict("deadlock (1213)", err)
		case 1205:
			return collect.Conflict("lock wait timeout (1205)", err)
		case 1020:
			return collect.Conflict("record changed since last read (1020)", err)
		case 1146: // ER_NO_SUCH_TABLE
			return collect.Fatal(fmt.Sprintf("table %s no longer exists (1146)", s.name), err)
		}
	}
	return err
}

// CheckFault implements collect.Faulter: kill-conns, and the network
// faults, for which it starts the proxy between the sessions and the
// server and a pool of session connections through it.
func (s *Store) CheckFault(f collect.Fault) error {
	switch {
	case f.Kind == "kill-conns":
		return nil
	case !collect.NetworkFaults[f.Kind]:
		return fmt.Errorf("mariadb: fault %s not supported (want kill-conns, delay, drop or partition)", f.Kind)
	case f.Kind == "partition" && f.Target != "":
		return fmt.Errorf("mariadb: partition takes no target: it holds the traffic between the sessions and the server")
	case s.sess != s.db:
		return nil // the proxy runs
	}
	network := s.cfg.Net
	if network != "unix" {
		network = "tcp"
	}
	if err := s.net.Prepare(network, s.cfg.Addr); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	// TLS, if any, keeps the server's name: the proxy only forwards.
	cfg := s.cfg.Clone()
	cfg.Net, cfg.Addr = "tcp", s.net.Addr()
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	s.sess = sql.OpenDB(connector)
	s.sess.SetMaxIdleConns(0)
	return nil
}

// Inject implements collect.Faulter: for kill-conns, the server kills
// the run's open session connections (KILL CONNECTION), over a connection
// of the pool; the network faults go through the proxy.
func (s *Store) Inject(ctx context.Context, f collect.Fault, began func(string)) (string, error) {
	if f.Kind != "kill-conns" {
		return s.net.Inject(ctx, f, began)
	}
	s.mu.Lock()
	ids := make([]int64, 0, len(s.ids))
	for _, id := range s.ids {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	n := 0
	for _, id := range ids {
		_, err := s.db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id))
		var me *mysql.MySQLError
		switch {
		case err == nil:
			n++
		case errors.As(err, &me) && me.Number == 1094: // unknown thread: it closed meanwhile
		default:
			return fmt.Sprintf("killed %d session connections", n), fmt.Errorf("mariadb: killing connection %d: %w", id, err)
		}
	}
	return fmt.Sprintf("killed %d session connections", n), nil
}

// The store injects faults.
var _ collect.Faulter = (*Store)(nil)
