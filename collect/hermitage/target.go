package hermitage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/history"
)

// Level is one isolation level of a server, as a scenario asks for it.
type Level struct {
	// Name is the level as the matrix shows it ("repeatable-read").
	Name string
	// Iso is the level the transactions ask for.
	Iso collect.Isolation
	// Params are connection parameters the level needs, added to the URL
	// (a session variable such as innodb_snapshot_isolation).
	Params string
	// Declared is the level of hyperiso's the server's level promises,
	// recorded on each transaction; LevelNone where it promises none of
	// them (READ UNCOMMITTED, InnoDB's REPEATABLE READ).
	Declared history.Level
}

// Target is a server the scenarios run against.
type Target struct {
	// Kind is "postgres" or "mariadb".
	Kind string
	// Server names the server and its version.
	Server string
	// Levels are the levels the server offers, weakest first.
	Levels []Level

	url string
	// params are added to every connection: bounds on lock waits, so that
	// a step that would wait for ever ends as a lock-timeout abort.
	params string
	// stale is how long a lock wait takes to show, or to go once granted:
	// a step is taken as waiting only on a view sampled this long after
	// the last step was issued, started or finished.
	stale time.Duration
	// view is MariaDB's shared view of lock waits.
	view *lockView
}

// Kinds are the servers a target can be.
var Kinds = []string{"postgres", "mariadb"}

// lockTimeout bounds every lock wait: longer than any wait a scenario
// has (a wait ends when another step commits), shorter than the
// per-step timeout.
const lockTimeout = 5 * time.Second

// Open connects to the server url names (postgres://… or mariadb://…,
// mysql://…), checks that it answers and lists its levels. Close releases
// the target.
func Open(ctx context.Context, url string) (*Target, error) {
	scheme, _, _ := strings.Cut(url, "://")
	switch scheme {
	case "postgres", "postgresql":
		return openPostgres(ctx, url)
	case "mariadb", "mysql":
		return openMariaDB(ctx, url)
	}
	return nil, fmt.Errorf("hermitage: unknown database %q: want postgres://user@host:port/db or mariadb://user:password@host:port/db", scheme+"://…")
}

func openPostgres(ctx context.Context, url string) (*Target, error) {
	tg := &Target{Kind: "postgres", url: url, stale: 20 * time.Millisecond,
		params: fmt.Sprintf("lock_timeout=%dms", lockTimeout.Milliseconds()),
		Levels: []Level{
			{Name: "read-committed", Iso: collect.ReadCommitted, Declared: history.RC},
			{Name: "repeatable-read", Iso: collect.RepeatableRead, Declared: history.SI},
			{Name: "serializable", Iso: collect.Serializable, Declared: history.SER},
		}}
	// PostgreSQL looks for deadlocks after deadlock_timeout (1s by
	// default); a superuser may shorten it for these connections.
	for _, p := range []string{tg.params + "&deadlock_timeout=100ms", tg.params} {
		st, err := postgres.Open(ctx, withParams(url, p))
		if err != nil {
			if p != tg.params {
				continue
			}
			return nil, fmt.Errorf("hermitage: %w", err)
		}
		tg.params, tg.Server = p, st.Describe()
		_ = st.Teardown(ctx, true) // nothing set up: only disconnects
		break
	}
	return tg, nil
}

func openMariaDB(ctx context.Context, url string) (*Target, error) {
	tg := &Target{Kind: "mariadb", url: url, stale: 20 * time.Millisecond,
		params: fmt.Sprintf("innodb_lock_wait_timeout=%d", int(lockTimeout.Seconds())),
	}
	st, err := mariadb.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("hermitage: %w", err)
	}
	tg.Server = st.Describe()
	_ = st.Teardown(ctx, true)
	db, err := tg.probeMariaDB()
	if err != nil {
		return nil, err
	}
	tg.view = &lockView{db: db}
	// innodb_snapshot_isolation (from MariaDB 10.6.18, 10.11.8, 11.4.2;
	// ON by default only from 11.8) makes REPEATABLE READ refuse to write
	// a row changed since the snapshot. Both settings are run, each set
	// explicitly, where the server has the variable.
	var snap sql.NullString
	hasSnap := db.QueryRowContext(ctx, "SELECT @@innodb_snapshot_isolation").Scan(&snap) == nil
	rr := Level{Name: "repeatable-read", Iso: collect.RepeatableRead}
	if hasSnap {
		rr.Params = "innodb_snapshot_isolation=OFF"
	}
	tg.Levels = []Level{
		{Name: "read-uncommitted", Iso: collect.ReadUncommitted},
		{Name: "read-committed", Iso: collect.ReadCommitted, Declared: history.RC},
		rr,
	}
	if hasSnap {
		tg.Levels = append(tg.Levels, Level{Name: "repeatable-read+snapshot", Iso: collect.RepeatableRead, Params: "innodb_snapshot_isolation=ON"})
	}
	tg.Levels = append(tg.Levels, Level{Name: "serializable", Iso: collect.Serializable, Declared: history.SER})
	return tg, nil
}

// Level returns the target's level named name.
func (tg *Target) Level(name string) (Level, bool) {
	for _, l := range tg.Levels {
		if l.Name == name {
			return l, true
		}
	}
	return Level{}, false
}

// withParams adds URL parameters p ("a=1&b=2") to url.
func withParams(url, p string) string {
	if p == "" {
		return url
	}
	if strings.Contains(url, "?") {
		return url + "&" + p
	}
	return url + "?" + p
}

// store opens a store for one run at lv: its own table, and the lock
// bounds and the level's parameters on every connection.
func (tg *Target) store(ctx context.Context, lv Level) (collect.Store, string, error) {
	url := withParams(withParams(tg.url, tg.params), lv.Params)
	switch tg.Kind {
	case "postgres":
		st, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, "", err
		}
		return st, st.Table(), nil
	default:
		st, err := mariadb.Open(ctx, url)
		if err != nil {
			return nil, "", err
		}
		return st, st.Table(), nil
	}
}

// waitCounter counts the sessions waiting on a lock while running a
// statement on one table, as the server saw them at some time after
// after.
type waitCounter interface {
	waiting(ctx context.Context, after time.Time) (int, error)
	close()
}

func (tg *Target) probe(ctx context.Context, table string) (waitCounter, error) {
	if tg.Kind == "postgres" {
		c, err := pgx.Connect(ctx, tg.url)
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		return &pgProbe{c: c, table: table}, nil
	}
	return &myProbe{v: tg.view, table: table}, nil
}

// Close releases the target's own connection.
func (tg *Target) Close() error {
	if tg.view != nil {
		return tg.view.db.Close()
	}
	return nil
}

func (tg *Target) probeMariaDB() (*sql.DB, error) {
	cfg, err := mariadb.ParseURL(tg.url)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

type pgProbe struct {
	c     *pgx.Conn
	table string
}

// waiting counts backends waiting for a heavyweight lock (a row's
// transaction, a tuple) whose current statement names the table.
// pg_stat_activity is read live.
func (p *pgProbe) waiting(ctx context.Context, _ time.Time) (int, error) {
	var n int
	err := p.c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0", p.table).Scan(&n)
	return n, err
}

func (p *pgProbe) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.c.Close(ctx)
}

// lockView is InnoDB's list of transactions, as SHOW ENGINE INNODB STATUS
// prints it, shared by all runs on a target: a run asking for a view
// taken after a time it names reuses one that is recent enough. Not
// information_schema.innodb_trx: InnoDB refills that cache only when no
// one has read it for 100ms, so polled by several runs it never changes.
type lockView struct {
	mu     sync.Mutex
	db     *sql.DB
	taken  time.Time // when the last read began
	blocks []string  // one per transaction in LOCK WAIT
}

func (v *lockView) waiting(ctx context.Context, table string, after time.Time) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.taken.After(after) {
		start := time.Now()
		var typ, name, status string
		if err := v.db.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
			return 0, fmt.Errorf("SHOW ENGINE INNODB STATUS (needs the PROCESS privilege): %w", err)
		}
		v.taken, v.blocks = start, lockWaits(status)
	}
	n := 0
	for _, b := range v.blocks {
		if strings.Contains(b, table) {
			n++
		}
	}
	return n, nil
}

// lockWaits returns the paragraphs of an InnoDB status report that
// describe a transaction waiting on a lock: each names the statement and
// the table of the lock.
func lockWaits(status string) []string {
	var out []string
	for _, b := range strings.Split(status, "\n---TRANSACTION")[1:] {
		if strings.Contains(b, "\nLOCK WAIT") {
			out = append(out, b)
		}
	}
	return out
}

type myProbe struct {
	v     *lockView
	table string
}

func (p *myProbe) waiting(ctx context.Context, after time.Time) (int, error) {
	return p.v.waiting(ctx, p.table, after)
}

func (p *myProbe) close() {}
