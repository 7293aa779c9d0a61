package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/formats"
)

// scratch is a database place of a test's own: a PostgreSQL schema or a
// MariaDB database, where the run's table lands and nothing else does.
type scratch struct {
	name   string
	url    string // for --db
	tables func() []string
	drop   func(table string) error
}

func scratchName() string {
	return "hyperiso_test_" + strings.TrimPrefix(collect.TableName(), "hyperiso_")
}

func postgresScratch(t *testing.T) scratch {
	base := server(t, envOr("HYPERISO_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"),
		func(ctx context.Context, u string) error {
			s, err := postgres.Open(ctx, u)
			if err == nil {
				err = s.Teardown(ctx, false)
			}
			return err
		})
	ctx := context.Background()
	probe, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	name := scratchName()
	_, err = probe.Exec(ctx, "CREATE SCHEMA "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = probe.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
		probe.Close(ctx)
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return scratch{
		name: name,
		url:  base + sep + "search_path=" + name,
		tables: func() []string {
			rows, err := probe.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1", name)
			require.NoError(t, err)
			names, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			return names
		},
		drop: func(table string) error {
			_, err := probe.Exec(ctx, "DROP TABLE "+pgx.Identifier{name, table}.Sanitize())
			return err
		},
	}
}

func mariadbScratch(t *testing.T) scratch {
	base := server(t, envOr("HYPERISO_MARIADB_URL", "mariadb://root@127.0.0.1:3306/test"),
		func(ctx context.Context, u string) error {
			s, err := mariadb.Open(ctx, u)
			if err == nil {
				err = s.Teardown(ctx, false)
			}
			return err
		})
	cfg, err := mariadb.ParseURL(base)
	require.NoError(t, err)
	probe, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	name := scratchName()
	_, err = probe.Exec("CREATE DATABASE " + name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = probe.Exec("DROP DATABASE IF EXISTS " + name)
		probe.Close()
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	return scratch{
		name: name,
		url:  u.String(),
		tables: func() []string {
			rows, err := probe.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = ?", name)
			require.NoError(t, err)
			defer rows.Close()
			var names []string
			for rows.Next() {
				var n string
				require.NoError(t, rows.Scan(&n))
				names = append(names, n)
			}
			return names
		},
		drop: func(table string) error {
			_, err := probe.Exec("DROP TABLE " + name + ".`" + table + "`")
			return err
		},
	}
}

// waitForTable waits until the run's table exists and returns its name.
func (s scratch) waitForTable(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if names := s.tables(); len(names) > 0 {
			return names[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no table appeared in %s", s.name)
	return ""
}

// binary builds hyperiso into dir, for the tests that signal a real process.
func binary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "hyperiso")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

var wroteRE = regexp.MustCompile(`^hyperiso: interrupted by (SIG\w+): wrote (\d+) of \d+ planned transactions \((\d+) unknown\) to (\S+)\n$`)

// TestCollectSignals: SIGTERM or SIGINT mid-run ends collect with the
// shell's status for the signal and one line saying what was written; the
// history is whole and readable, what was in flight is unknown, and the
// table is dropped.
func TestCollectSignals(t *testing.T) {
	bin := binary(t, t.TempDir())
	type target struct {
		db      string
		scratch *scratch
		sig     syscall.Signal
	}
	targets := map[string]target{
		"memory SIGTERM": {db: "memory", sig: syscall.SIGTERM},
		"memory SIGINT":  {db: "memory", sig: syscall.SIGINT},
	}
	pg, my := postgresScratch(t), mariadbScratch(t)
	targets["postgres SIGTERM"] = target{db: pg.url, scratch: &pg, sig: syscall.SIGTERM}
	targets["mariadb SIGTERM"] = target{db: my.url, scratch: &my, sig: syscall.SIGTERM}
	for name, tg := range targets {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "h.jsonl")
			// Bait transactions pause 100ms between their reads and
			// writes: at any moment most sessions are inside one.
			cmd := exec.Command(bin, "collect", "--db", tg.db, "--workload", "lost-update", "--think", "100ms",
				"--sessions", "4", "--txns", "100000", "-o", out)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if tg.scratch != nil {
				tg.scratch.waitForTable(t)
			}
			time.Sleep(500 * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(tg.sig))
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("collect did not end within 30s of %v", tg.sig)
			}
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "%v: %s", err, stderr.String())
			require.Equal(t, 128+int(tg.sig), ee.ExitCode(), stderr.String())

			m := wroteRE.FindStringSubmatch(stderr.String())
			require.NotNil(t, m, "one line on stderr, got %q", stderr.String())
			require.Equal(t, map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[tg.sig], m[1])
			require.Equal(t, out, m[4])
			h, err := formats.Read(out, formats.Options{})
			require.NoError(t, err, "the history is complete and readable")
			st := h.Stats()
			require.Equal(t, m[2], strconv.Itoa(st.Transactions))
			require.Equal(t, m[3], strconv.Itoa(st.Unknown))
			require.Positive(t, st.Transactions)
			require.Contains(t, stdout.String(), "stopped after")
			require.NotContains(t, stdout.String(), "context canceled", "no outcome guessed from the cancellation")
			if tg.scratch != nil {
				// The memory store answers in flight operations whatever
				// the context says; the servers' are cut short.
				require.Positive(t, st.Unknown, stdout.String())
				require.Contains(t, stdout.String(), "in flight when the run stopped")
				require.Empty(t, tg.scratch.tables(), "the table is dropped")
			}
		})
	}
}

// TestCollectStopsOnDroppedTable: the table dropped from another connection
// ends collect with status 2 and the reason, the history so far written.
func TestCollectStopsOnDroppedTable(t *testing.T) {
	for name, s := range map[string]scratch{"postgres": postgresScratch(t), "mariadb": mariadbScratch(t)} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "h.jsonl")
			dropped := make(chan error, 1)
			go func() {
				table := s.waitForTable(t)
				time.Sleep(300 * time.Millisecond)
				dropped <- s.drop(table)
			}()
			start := time.Now()
			code, stdout, stderr := runWithCollect(t, "collect", "--db", s.url, "--sessions", "4", "--txns", "20000",
				"--ops", "6", "--keys", "100", "-o", out)
			require.NoError(t, <-dropped)
			require.Equal(t, exitBadInput, code, stderr)
			require.Less(t, time.Since(start), 20*time.Second)
			require.Regexp(t, `^hyperiso: run stopped: table hyperiso_\w+ no longer exists \((42P01|1146)\): wrote \d+ of 80000 planned transactions \(\d+ unknown\) to `+regexp.QuoteMeta(out)+"\n$", stderr)
			require.Contains(t, stdout, "stopped after")
			h, err := formats.Read(out, formats.Options{})
			require.NoError(t, err)
			require.Less(t, h.Stats().Transactions, 80000)
		})
	}
}
