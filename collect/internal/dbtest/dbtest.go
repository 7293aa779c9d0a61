// Package dbtest helps the collect tests: it finds the test databases
// (skipping, or failing under HYPERISO_REQUIRE_DB=1, when one cannot be
// reached), runs a workload and judges the history with check.Check
// (skipping with a reason when a level's checker does not exist yet).
package dbtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

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

// RequireEnv, set to 1, turns "database unreachable → skip" into a failure.
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
	t.Skipf("%s unreachable (set %s=1 to make this a failure): %v", what, RequireEnv, err)
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
	h, sum, err := collect.Run(context.Background(), st, w, collect.Options{Isolation: iso})
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
	s := string(res.Verdict)
	for i, a := range res.Anomalies {
		if i == 2 {
			s += ", …"
			break
		}
		s += "; " + a.Type + ": " + a.Description
	}
	return s
}
