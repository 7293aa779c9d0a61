package postgres_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// open opens the test database. Random multi-key writes deadlock now and
// then, and PostgreSQL waits deadlock_timeout (1s by default) before it
// notices: the tests ask for 100ms where the server lets them (a superuser
// may set it at connection time) to stay quick.
func open(t *testing.T) *postgres.Store {
	t.Helper()
	url := dbtest.PostgresURL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	s, err := postgres.Open(context.Background(), url+sep+"deadlock_timeout=100ms")
	if err != nil {
		s, err = postgres.Open(context.Background(), url)
	}
	require.NoError(t, err)
	return s
}

// general is small enough for a quick check: 8 sessions × 25 transactions
// × 10 operations on 100 keys, repeated values drawn from 4.
func general(seed int64, dup float64) func(c *workload.Config) {
	return func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys, c.ValueSpace, c.Seed = 8, 25, 10, 100, dup, 4, seed
	}
}

func collectOn(t *testing.T, w *workload.Workload, iso collect.Isolation) (*history.History, *collect.Summary) {
	t.Helper()
	h, sum := dbtest.Run(t, open(t), w, iso)
	t.Logf("%s", sum)
	return dbtest.RoundTrip(t, h), sum
}

func TestSerializableAcceptedAtSER(t *testing.T) {
	for _, dup := range []float64{0, 0.5} {
		h, sum := collectOn(t, dbtest.Workload(t, "general", general(1, dup)), collect.Serializable)
		require.Positive(t, sum.Committed)
		res := dbtest.Verdict(t, h, history.SER)
		t.Logf("dup-keys %g: %d multi-writer reads; SER %s", dup, h.Stats().MultiWriterReads, dbtest.Describe(res))
		require.Equal(t, check.Satisfied, res.Verdict)
	}
}

func TestRepeatableReadAcceptedAtSI(t *testing.T) {
	for _, iso := range []collect.Isolation{collect.RepeatableRead, collect.Snapshot} {
		h, _ := collectOn(t, dbtest.Workload(t, "general", general(2, 0.5)), iso)
		res := dbtest.Verdict(t, h, history.SI)
		t.Logf("%s: SI %s", iso, dbtest.Describe(res))
		require.Equal(t, check.Satisfied, res.Verdict)
	}
}

// maxWriteSkewAttempts bounds the write-skew runs at REPEATABLE READ
// before the SER violation must have been found. One attempt has found it
// in every run so far.
const maxWriteSkewAttempts = 10

func TestRepeatableReadWriteSkewViolatesSER(t *testing.T) {
	for attempt := 1; attempt <= maxWriteSkewAttempts; attempt++ {
		w := dbtest.Workload(t, "write-skew", func(c *workload.Config) { c.Sessions, c.Txns, c.Seed = 8, 30, int64(attempt) })
		h, _ := collectOn(t, w, collect.RepeatableRead)
		require.Equal(t, check.Satisfied, dbtest.Verdict(t, h, history.SI).Verdict, "PostgreSQL's REPEATABLE READ is snapshot isolation")
		res := dbtest.Verdict(t, h, history.SER)
		if res.Verdict == check.Violated {
			t.Logf("SER violation found on attempt %d of at most %d: %s", attempt, maxWriteSkewAttempts, dbtest.Describe(res))
			return
		}
	}
	t.Fatalf("no SER violation in %d write-skew attempts at REPEATABLE READ", maxWriteSkewAttempts)
}

func TestReadCommittedLosesUpdates(t *testing.T) {
	h, sum := collectOn(t, dbtest.Workload(t, "lost-update", nil), collect.ReadCommitted)
	require.Zero(t, sum.Aborted, "READ COMMITTED re-reads the row and never refuses")
	res := dbtest.Verdict(t, h, history.SI)
	t.Logf("SI %s", dbtest.Describe(res))
	require.Equal(t, check.Violated, res.Verdict)
	// The same bait at REPEATABLE READ: the second writer is refused.
	h, sum = collectOn(t, dbtest.Workload(t, "lost-update", nil), collect.RepeatableRead)
	require.Positive(t, sum.Reasons["aborted: serialization failure (40001)"])
	require.Equal(t, check.Satisfied, dbtest.Verdict(t, h, history.SI).Verdict)
	// And READ COMMITTED is what it says.
	h, _ = collectOn(t, dbtest.Workload(t, "general", general(3, 0)), collect.ReadCommitted)
	require.Equal(t, check.Satisfied, dbtest.Verdict(t, h, history.RC).Verdict)
}

func TestTableLifecycle(t *testing.T) {
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	s, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	require.Equal(t, "postgres", s.Name())
	require.Contains(t, s.Describe(), "PostgreSQL ")
	require.ErrorContains(t, s.Supports(collect.Isolation(9)), "unsupported")
	probe, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer probe.Close(ctx)
	require.NoError(t, s.Setup(ctx, 50))
	var n, sum int64
	require.NoError(t, probe.QueryRow(ctx, "SELECT count(*), coalesce(sum(v), 0) FROM "+pgx.Identifier{s.Table()}.Sanitize()).Scan(&n, &sum))
	require.Equal(t, int64(50), n)
	require.Zero(t, sum)

	c, err := s.Connect(ctx)
	require.NoError(t, err)
	tx, err := c.Begin(ctx, collect.Serializable)
	require.NoError(t, err)
	_, found, err := tx.Read(ctx, 51)
	require.NoError(t, err)
	require.False(t, found)
	require.ErrorContains(t, tx.Write(ctx, 51, 1), "not in table")
	require.NoError(t, tx.Abort(ctx))
	require.NoError(t, c.Close())

	require.NoError(t, s.Teardown(ctx, false))
	var exists bool
	require.NoError(t, probe.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.Table()).Scan(&exists))
	require.False(t, exists, "the run's table is dropped")
}

// slowCommits makes every commit on its table take a second, through a
// deferred constraint trigger, so that a short operation timeout expires
// during COMMIT.
type slowCommits struct {
	*postgres.Store
	url string
}

func (s slowCommits) Setup(ctx context.Context, keys int64) error {
	if err := s.Store.Setup(ctx, keys); err != nil {
		return err
	}
	c, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	table := pgx.Identifier{s.Table()}.Sanitize()
	fn := pgx.Identifier{s.Table() + "_slow"}.Sanitize()
	_, err = c.Exec(ctx, `CREATE FUNCTION `+fn+`() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
		CREATE CONSTRAINT TRIGGER slow AFTER UPDATE ON `+table+`
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION `+fn+`()`)
	return err
}

func (s slowCommits) Teardown(ctx context.Context, keep bool) error {
	err := s.Store.Teardown(ctx, keep)
	if c, cerr := pgx.Connect(ctx, s.url); cerr == nil {
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP FUNCTION IF EXISTS "+pgx.Identifier{s.Table() + "_slow"}.Sanitize()+"()")
	}
	return err
}

func TestCommitTimeoutIsUnknown(t *testing.T) {
	url := dbtest.PostgresURL(t)
	st, err := postgres.Open(context.Background(), url)
	require.NoError(t, err)
	w := dbtest.Workload(t, "lost-update", func(c *workload.Config) { c.Sessions, c.Txns, c.Keys = 2, 3, 1000 })
	h, sum, err := collect.Run(context.Background(), slowCommits{st, url}, w,
		collect.Options{Isolation: collect.ReadCommitted, OpTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Logf("%s", sum)
	require.Equal(t, 6, sum.Transactions)
	require.Positive(t, sum.Unknown)
	// Every lost commit answer costs its connection; on a loaded machine an
	// operation may time out as well (aborted, also reconnected).
	require.GreaterOrEqual(t, sum.Reconnects, sum.Unknown)
	for r, n := range sum.Reasons {
		if strings.HasPrefix(r, "unknown: ") {
			require.Contains(t, r, "unknown: commit: ")
			require.Contains(t, r, "timeout")
			require.Positive(t, n)
		}
	}
	require.Equal(t, sum.Unknown, h.Stats().Unknown)
	require.Equal(t, check.Satisfied, dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER).Verdict)
}

func TestKeepTable(t *testing.T) {
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	s, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	w := dbtest.Workload(t, "lost-update", func(c *workload.Config) { c.Sessions, c.Txns = 2, 5 })
	_, _, err = collect.Run(ctx, s, w, collect.Options{KeepTable: true})
	require.NoError(t, err)
	probe, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer probe.Close(ctx)
	var n int64
	table := pgx.Identifier{s.Table()}.Sanitize()
	require.NoError(t, probe.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n))
	require.Equal(t, int64(2), n, "the kept table holds the run's keys")
	_, err = probe.Exec(ctx, "DROP TABLE "+table)
	require.NoError(t, err)
}

func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	require.ErrorContains(t, err, "postgres: connecting to 127.0.0.1:1")
	_, err = postgres.Open(ctx, "postgres://[::1")
	require.Error(t, err)
}

// TestMeasureBL10k collects the acceptance measurement: a 10,000-transaction
// general BL history (20 sessions × 500) from PostgreSQL SERIALIZABLE, then
// checks it at SER. It runs only with HYPERISO_MEASURE=1; go test -v shows
// the figures.
func TestMeasureBL10k(t *testing.T) {
	if os.Getenv("HYPERISO_MEASURE") != "1" {
		t.Skip("a measurement: set HYPERISO_MEASURE=1 to run it")
	}
	c, _ := workload.Defaults("general")
	require.NoError(t, workload.ApplyPreset(&c, "BL"))
	c.Txns = 500
	w, err := workload.New("general", c)
	require.NoError(t, err)
	start := time.Now()
	h, sum := dbtest.Run(t, open(t), w, collect.Serializable)
	elapsed := time.Since(start)
	var buf bytes.Buffer
	require.NoError(t, jsonl.Write(&buf, h))
	t.Logf("collected in %s (run %s, setup %s, teardown %s), %d bytes of JSONL\n%s",
		elapsed.Round(time.Millisecond), sum.Duration.Round(time.Millisecond), sum.Setup.Round(time.Millisecond),
		sum.Teardown.Round(time.Millisecond), buf.Len(), sum)
	require.Less(t, elapsed, 2*time.Minute)
	start = time.Now()
	res := dbtest.Verdict(t, h, history.SER)
	t.Logf("SER %s in %s", res.Verdict, time.Since(start).Round(time.Millisecond))
	require.Equal(t, check.Satisfied, res.Verdict)
}

// TestAppend: the append workload at SERIALIZABLE satisfies SER, and at
// REPEATABLE READ (snapshot isolation) satisfies SI.
func TestAppend(t *testing.T) {
	store := func() collect.Store { return open(t) }
	h := dbtest.Append(t, store, collect.Serializable)
	res := dbtest.Verdict(t, h, history.SER)
	t.Logf("SER %s", dbtest.Describe(res))
	require.Equal(t, check.Satisfied, res.Verdict, dbtest.Describe(res))

	h = dbtest.Append(t, store, collect.RepeatableRead)
	res = dbtest.Verdict(t, h, history.SI)
	t.Logf("repeatable read: SI %s", dbtest.Describe(res))
	require.Equal(t, check.Satisfied, res.Verdict, dbtest.Describe(res))
}
