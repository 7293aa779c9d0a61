// Package dbtest helps the collect tests: it finds the test databases
// (skipping, or failing under HYPERISO_REQUIRE_DB=1 or CI, when one cannot
// be reached), runs a workload and judges the history with check.Check
// (skipping with a reason when a level's checker does not exist yet).
package dbtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	neturl "net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// Default addresses of the test databases; HYPERISO_POSTGRES_URL and
// HYPERISO_MARIADB_URL override them.
const (
	DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultMariaDB  = "mariadb://root@127.0.0.1:3306/test"
)

// RequireEnv, set to 1, turns "database unreachable → skip" into a failure,
// as CI (set to anything) does.
const RequireEnv = "HYPERISO_REQUIRE_DB"

func url(env, def string) string {
	if u := os.Getenv(env); u != "" {
		return u
	}
	return def
}

// unreachable skips t, or fails it when the databases are required.
func unreachable(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s unreachable and %s=1: %v", what, RequireEnv, err)
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s unreachable under CI: %v", what, err)
	}
	t.Skipf("%s unreachable (set %s=1 or CI=1 to make this a failure): %v", what, RequireEnv, err)
}

// PostgresURL returns the test PostgreSQL URL after checking that it
// answers.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := url("HYPERISO_POSTGRES_URL", DefaultPostgres)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, u)
	if err != nil {
		unreachable(t, "PostgreSQL", err)
	}
	_ = s.Teardown(ctx, false)
	return u
}

// MariaDBURL returns the test MariaDB URL after checking that it answers.
func MariaDBURL(t testing.TB) string {
	t.Helper()
	u := url("HYPERISO_MARIADB_URL", DefaultMariaDB)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := mariadb.Open(ctx, u)
	if err != nil {
		unreachable(t, "MariaDB", err)
	}
	_ = s.Teardown(ctx, false)
	return u
}

// scratchName is a fresh schema or database name for one test.
func scratchName() string {
	return "hyperiso_test_" + strings.TrimPrefix(collect.TableName(), "hyperiso_")
}

// PostgresScratch returns the test PostgreSQL URL with its search_path set
// to a fresh schema, the schema's name, and a connection to the database
// for the test to look and act with. The schema and all it holds are
// dropped when t ends. A run's table lands there, so the test finds it
// (and only it) while other runs share the database.
func PostgresScratch(t testing.TB) (url, schema string, probe *pgx.Conn) {
	t.Helper()
	base := PostgresURL(t)
	ctx := context.Background()
	probe, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	schema = scratchName()
	if _, err := probe.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = probe.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		probe.Close(ctx)
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema + "&application_name=" + schema, schema, probe
}

// PostgresTables lists the tables of schema.
func PostgresTables(t testing.TB, probe *pgx.Conn, schema string) []string {
	t.Helper()
	rows, err := probe.Query(context.Background(), "SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// MariaDBScratch returns a URL of the test MariaDB server naming a fresh
// database, the database's name, and a connection to the server for the
// test to look and act with. The database is dropped when t ends. A run's
// table lands there, and its sessions are the server's connections to it.
func MariaDBScratch(t testing.TB) (url, db string, probe *sql.DB) {
	t.Helper()
	base := MariaDBURL(t)
	cfg, err := mariadb.ParseURL(base)
	if err != nil {
		t.Fatal(err)
	}
	probe, err = sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db = scratchName()
	if _, err := probe.Exec("CREATE DATABASE " + db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = probe.Exec("DROP DATABASE IF EXISTS " + db)
		probe.Close()
	})
	u, err := neturl.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String(), db, probe
}

// MariaDBTables lists the tables of database db.
func MariaDBTables(t testing.TB, probe *sql.DB, db string) []string {
	t.Helper()
	rows, err := probe.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = ?", db)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// Workload builds a workload from the named defaults changed by edit.
func Workload(t testing.TB, name string, edit func(c *workload.Config)) *workload.Workload {
	t.Helper()
	c, err := workload.Defaults(name)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&c)
	}
	w, err := workload.New(name, c)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Run runs w on st at iso, fails t on any error, checks that the summary
// agrees with the history, and returns both.
func Run(t testing.TB, st collect.Store, w *workload.Workload, iso collect.Isolation) (*history.History, *collect.Summary) {
	t.Helper()
	return run(t, st, w, collect.Options{Isolation: iso})
}

func run(t testing.TB, st collect.Store, w *workload.Workload, opt collect.Options) (*history.History, *collect.Summary) {
	t.Helper()
	h, sum, err := collect.Run(context.Background(), st, w, opt)
	if err != nil {
		t.Fatalf("collect.Run: %v", err)
	}
	stats := h.Stats()
	if stats.Transactions != sum.Transactions || stats.Committed != sum.Committed ||
		stats.Aborted != sum.Aborted || stats.Unknown != sum.Unknown || stats.Operations != sum.Operations {
		t.Fatalf("summary %+v disagrees with the history %+v", sum, stats)
	}
	if sum.Transactions != sum.Planned {
		t.Fatalf("%d transactions recorded, %d planned", sum.Transactions, sum.Planned)
	}
	return h, sum
}

// RunMix runs w on st with each transaction at a level of mix, fails t on
// any error, and checks what a mixed history must hold: every transaction
// carries the level the seed drew for it (Levels), the metadata says the
// mix, the levels and metadata survive a JSONL round trip, and check
// --level mixed decides the history read back, which it returns with the
// summary.
func RunMix(t testing.TB, st collect.Store, w *workload.Workload, mix collect.Mix) (*history.History, *collect.Summary) {
	t.Helper()
	h, sum := run(t, st, w, collect.Options{Mix: mix})
	require.Equal(t, Levels(t, h, w, mix), levels(h), "levels recorded")
	require.Equal(t, "mixed", h.Meta["isolation"])
	require.Equal(t, mix.String(), h.Meta["mix"])
	require.Len(t, sum.ByLevel, len(mix.Entries))
	n := 0
	for i, l := range sum.ByLevel {
		require.Equal(t, mix.Entries[i].Name, l.Level)
		n += l.Transactions
	}
	require.Equal(t, sum.Transactions, n, "by-level counts")
	back := RoundTrip(t, h)
	require.Equal(t, levels(h), levels(back), "levels after a JSONL round trip")
	require.Equal(t, h.Meta["mix"], back.Meta["mix"])
	require.Equal(t, "mixed", back.Meta["isolation"])
	// Each transaction at its own level; those that record none (rr, ru)
	// held to RC. The verdict is the database's to give, but it must be
	// one: a mixed history that the checker cannot decide is a failure.
	res, err := check.Check(context.Background(), back, history.Mixed, check.Options{DefaultLevel: history.RC})
	require.NoError(t, err, "check --level mixed")
	require.NotEqual(t, check.Unknown, res.Verdict, "check --level mixed: %s", res.Reason)
	t.Logf("check --level mixed --default-level rc: %s", res.Verdict)
	return back, sum
}

// Mix parses a --mix spec, failing t on error.
func Mix(t testing.TB, spec string) collect.Mix {
	t.Helper()
	m, err := collect.ParseMix(spec)
	require.NoError(t, err)
	return m
}

// Committed counts h's committed transactions by recorded level.
func Committed(h *history.History) map[history.Level]int {
	n := map[history.Level]int{}
	for _, tx := range h.Txns[1:] {
		if tx.Status == history.Committed {
			n[tx.Level]++
		}
	}
	return n
}

// levels lists the level of every transaction but T⊥, in id order.
func levels(h *history.History) []history.Level {
	ls := make([]history.Level, 0, len(h.Txns)-1)
	for _, tx := range h.Txns[1:] {
		ls = append(ls, tx.Level)
	}
	return ls
}

// Levels returns the levels the seed of w draws for the transactions of
// h, a history collected with mix, in the order of h's transactions: the
// j-th transaction of client session i has the level of the j-th draw of
// mix.Session(seed, i). A session that continued under a fresh id after an
// unknown outcome ends the check of its client: its later transactions
// keep the level recorded.
func Levels(t testing.TB, h *history.History, w *workload.Workload, mix collect.Mix) []history.Level {
	t.Helper()
	want := levels(h)
	for _, s := range h.Sessions {
		if s.ID < 1 || s.ID > int64(w.Sessions()) {
			continue // a continuation: its client is not known
		}
		draw := mix.Session(w.Config().Seed, int(s.ID-1))
		for _, id := range s.Txns {
			want[id-1] = mix.Entries[draw.Next()].Level
			if h.Txns[id].Status == history.Unknown {
				break
			}
		}
	}
	return want
}

// RoundTrip writes h as JSONL and reads it back, as a user's check would.
func RoundTrip(t testing.TB, h *history.History) *history.History {
	t.Helper()
	var buf bytes.Buffer
	if err := jsonl.Write(&buf, h); err != nil {
		t.Fatalf("jsonl.Write: %v", err)
	}
	back, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), "collected.jsonl", jsonl.Options{})
	if err != nil {
		t.Fatalf("reading the written history back: %v", err)
	}
	return back
}

// Verdict checks h at level and returns the result. A level whose checker
// does not exist yet skips t, naming the issue that adds it.
func Verdict(t testing.TB, h *history.History, level history.Level) *check.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := check.Check(ctx, h, level, check.Options{})
	if errors.Is(err, check.ErrUnavailable) {
		t.Skipf("the %s checker is not available yet (issue 5: weak-level checkers): %v", level, err)
	}
	if err != nil {
		t.Fatalf("check %s: %v", level, err)
	}
	return res
}

// Describe renders a result in one line for logs.
func Describe(res *check.Result) string {
	s := res.Verdict.String()
	for i, a := range res.Anomalies {
		if i == 2 {
			s += ", …"
			break
		}
		s += "; " + a.Type + ": " + a.Description
	}
	return s
}

// KillConns runs a short workload while st drops the sessions' connections
// every 50ms: the sessions reconnect, a commit whose answer was lost is
// unknown, and the history still checks at SER. Both SQL stores run it.
func KillConns(t *testing.T, st interface {
	collect.Store
	collect.Faulter
}) {
	t.Helper()
	require.ErrorContains(t, st.CheckFault(collect.Fault{Kind: "restart", Target: "leader"}), "fault restart not supported (want kill-conns, delay, drop or partition)")
	killConns(t, st, Workload(t, "general", func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys = 6, 40, 6, 100, 0
	}))
}

// KillConnsAppend is KillConns on the append workload: appenders whose
// commit's answer was lost are unknown, and the lists read say which of
// them committed.
func KillConnsAppend(t *testing.T, st interface {
	collect.Store
	collect.Faulter
}) {
	t.Helper()
	killConns(t, st, Workload(t, "append", func(c *workload.Config) { c.Sessions, c.Txns, c.Keys = 6, 40, 5 }))
}

func killConns(t *testing.T, st interface {
	collect.Store
	collect.Faulter
}, w *workload.Workload) {
	t.Helper()
	faults, err := collect.ParseFaults("kill-conns@10ms/50ms")
	require.NoError(t, err)
	h, sum, err := collect.Run(context.Background(), st, w, collect.Options{Isolation: collect.Serializable, Faults: faults, Times: true})
	require.NoError(t, err)
	t.Logf("%s", sum)
	require.Positive(t, sum.Faults)
	require.Zero(t, sum.FaultErrors)
	require.Equal(t, "done", sum.FaultLog[0].Event)
	require.Contains(t, sum.FaultLog[0].What, "session connections")
	require.Equal(t, sum.Planned, sum.Transactions)
	stats := h.Stats()
	require.Equal(t, sum.Unknown, stats.Unknown)
	require.Positive(t, stats.Committed)
	res := Verdict(t, RoundTrip(t, h), history.SER)
	require.Equal(t, check.Satisfied, res.Verdict, Describe(res))
}

// TabledStore is a store whose run keeps its data in a table.
type TabledStore interface {
	collect.Store
	Table() string
}

// SweepsOrphanedTables checks that the table of a killed run (its process
// gone) is dropped by the next run, which says so, while a live run's
// table and a kept one stay, and that --keep-table names the table so that
// no sweep takes it. create makes a table in the scratch schema, open the
// store, tables lists the schema's tables.
func SweepsOrphanedTables(t *testing.T, create func(name string) error, open func() (TabledStore, error), tables func() []string, w *workload.Workload) {
	t.Helper()
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	orphan, live := collect.TableNameOf(gone.Process.Pid), collect.TableName()
	kept := collect.KeptTableName()
	for _, name := range []string{orphan, live, kept} {
		require.NoError(t, create(name))
	}
	st, err := open()
	require.NoError(t, err)
	_, sum, err := collect.Run(context.Background(), st, w, collect.Options{KeepTable: true})
	require.NoError(t, err)
	require.Equal(t, []string{"removed table " + orphan + " (process " + strconv.Itoa(gone.Process.Pid) + " is gone)"}, sum.Swept)
	require.Contains(t, sum.String(), sum.Swept[0])
	got := tables()
	slices.Sort(got)
	want := []string{live, kept, st.Table()}
	slices.Sort(want)
	require.Equal(t, want, got)
	l, ok := collect.ClassifyTable(st.Table())
	require.True(t, ok)
	require.Equal(t, "kept (--keep-table)", l.Note)
}

// Append runs a small append workload (Jepsen's list-append: 6 sessions ×
// 20 transactions of 1…4 appends and list reads on 5 keys) on the store
// open returns, at iso, twice: once built in memory, once streamed as
// JSONL by a Recorder and read back, as "hyperiso collect -o FILE
// --workload append" records it. It checks that both hold lists and
// agree, and returns the history read back.
func Append(t *testing.T, open func() collect.Store, iso collect.Isolation) *history.History {
	t.Helper()
	w := Workload(t, "append", func(c *workload.Config) { c.Sessions, c.Txns, c.Keys = 6, 20, 5 })
	built, sum := Run(t, open(), w, iso)
	t.Logf("%s", sum)
	require.True(t, built.HasLists())
	require.Positive(t, sum.Committed)

	var out bytes.Buffer
	rec := collect.NewRecorder(&out)
	_, sum, err := collect.Run(context.Background(), open(), w, collect.Options{Isolation: iso, Sink: rec})
	require.NoError(t, err)
	require.NoError(t, rec.Close())
	h, err := jsonl.Parse(bytes.NewReader(out.Bytes()), "append.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.True(t, h.HasLists())
	require.Equal(t, "append", h.Meta["workload"])
	require.Equal(t, sum.Transactions, h.Stats().Transactions)
	require.Equal(t, sum.Operations, h.Stats().Operations)
	longest := 0
	for _, tx := range h.Txns[1:] {
		for _, op := range tx.Ops {
			require.True(t, op.Kind == history.OpAppend || op.Kind == history.OpReadList, "only appends and list reads")
			if op.Kind == history.OpReadList {
				longest = max(longest, len(h.List(op)))
			}
		}
	}
	require.Positive(t, longest, "some list read shows appends")
	return h
}

// NetFaults runs a short workload at SERIALIZABLE while the network
// between the sessions and the server (st's fault proxy) is slowed, cut
// and held: a delay all along, every session connection reset every
// 400ms, the traffic held for 100ms, then a reset with new connections
// held for 100ms. It checks that the sessions went through the proxy
// (the resets made them reconnect; every committed transaction took at
// least two delayed round trips), that every fault's start and end were
// logged in time order, and that the history, its in-doubt commits
// recorded unknown, still checks at SER.
func NetFaults(t *testing.T, st interface {
	collect.Store
	collect.Faulter
}) {
	t.Helper()
	require.ErrorContains(t, st.CheckFault(collect.Fault{Kind: "partition", Target: "leader"}), "partition takes no target")
	const delay = 5 * time.Millisecond
	schedule := "delay:5ms~2ms@0s+1h0m0s,drop@100ms/400ms,partition@300ms+100ms,drop@600ms+100ms"
	faults, err := collect.ParseFaults(schedule)
	require.NoError(t, err)
	w := Workload(t, "general", func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys = 6, 20, 4, 1000, 0
	})
	h, sum, err := collect.Run(context.Background(), st, w, collect.Options{Isolation: collect.Serializable, Faults: faults, Times: true})
	require.NoError(t, err)
	t.Logf("%s", sum)
	require.Zero(t, sum.FaultErrors)
	require.GreaterOrEqual(t, sum.Faults, 4, "the delay, a drop, the partition, the held drop")
	require.Positive(t, sum.Reconnects, "the drops reset the sessions' connections")
	require.Equal(t, sum.Planned, sum.Transactions)

	// The log: in time order; each lasting fault's start before its end.
	var delayStart, delayEnd time.Duration = -1, -1
	open := map[string]time.Duration{}
	for i, e := range sum.FaultLog {
		if i > 0 {
			require.GreaterOrEqual(t, e.At, sum.FaultLog[i-1].At, "fault log out of order: %v", sum.FaultLog)
		}
		switch e.Event {
		case "start":
			open[e.Fault] = e.At
		case "end":
			_, ok := open[e.Fault]
			require.True(t, ok, "%s ended without a start", e)
			delete(open, e.Fault)
		case "done":
			require.Equal(t, "drop", e.Fault[:4], e.String())
			require.Contains(t, e.What, "reset")
		default:
			t.Fatalf("unexpected event %s", e)
		}
		if strings.HasPrefix(e.Fault, "delay") {
			if e.Event == "start" {
				delayStart = e.At
				require.Contains(t, e.What, "delayed by 5ms~2ms each way")
			} else {
				delayEnd = e.At
			}
		}
	}
	require.Empty(t, open, "faults started and never ended")
	require.GreaterOrEqual(t, delayStart, time.Duration(0), "the delay's start is logged")
	require.Greater(t, delayEnd, delayStart, "the delay's end is logged")
	require.Contains(t, sum.String(), " start partition@300ms+100ms: session traffic held")

	stats := h.Stats()
	require.Equal(t, sum.Unknown, stats.Unknown)
	require.Positive(t, stats.Committed)
	under := 0
	for _, tx := range h.Txns[1:] {
		if tx.Status != history.Committed || time.Duration(tx.Start) < delayStart || time.Duration(tx.End) > delayEnd {
			continue
		}
		under++
		// BEGIN and COMMIT at least, each a round trip delayed both ways.
		require.GreaterOrEqual(t, time.Duration(tx.End-tx.Start), 4*delay, "a transaction run under the delay")
	}
	require.Positive(t, under, "no transaction ran wholly under the delay")
	back := RoundTrip(t, h)
	require.Equal(t, schedule, back.Meta["faults"])
	require.Contains(t, back.Meta["fault_log"], "start delay:5ms~2ms@0s+1h0m0s: session traffic delayed")
	res := Verdict(t, back, history.SER)
	require.Equal(t, check.Satisfied, res.Verdict, Describe(res))
}
