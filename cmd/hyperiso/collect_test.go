package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/stores"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// runWithCollect is run with the collect command registered, whether or not
// newRoot registers it already.
func runWithCollect(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = exitSatisfied
	root := newRoot(&out, &code)
	if c, _, err := root.Find([]string{"collect"}); err != nil || c == root {
		root.AddCommand(newCollect(&out))
	}
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(&errb, "hyperiso:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code, out.String(), errb.String()
		}
		return exitBadInput, out.String(), errb.String()
	}
	return code, out.String(), errb.String()
}

func TestCollectThenCheck(t *testing.T) {
	// hyperiso collect -o h.jsonl && hyperiso check --level ser h.jsonl
	h := filepath.Join(t.TempDir(), "h.jsonl")
	code, out, errs := runWithCollect(t, "collect", "-o", h)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "memory at serializable, workload general sessions=20 txns=100 ops=20 reads=0.5 keys=5000 dup-keys=0.5")
	require.Contains(t, out, "2000 transactions in 20 sessions")
	require.Contains(t, out, "wrote "+h)
	require.NotContains(t, errs, "collecting", "no progress bar off a terminal")
	code, out, errs = runCLI(t, "check", "--level", "ser", h)
	require.Equal(t, exitSatisfied, code, out+errs)
	require.Contains(t, out, "SER: SATISFIED")
	require.Contains(t, out, "duplicate values:", "the default workload repeats values")
}

func TestCollectBugIsCaught(t *testing.T) {
	h := filepath.Join(t.TempDir(), "lu.jsonl")
	code, _, errs := runWithCollect(t, "collect", "--isolation", "snapshot", "--bug", "lost-update", "--workload", "lost-update", "-q", "-o", h)
	require.Equal(t, 0, code, errs)
	code, out, errs := runCLI(t, "check", "--level", "si", h)
	require.Equal(t, exitViolated, code, out+errs)

	code, _, errs = runWithCollect(t, "collect", "--isolation", "snapshot", "--workload", "write-skew", "-q", "-o", h)
	require.Equal(t, 0, code, errs)
	code, _, _ = runCLI(t, "check", "--level", "si", h)
	require.Equal(t, exitSatisfied, code)
	code, _, _ = runCLI(t, "check", "--level", "ser", h)
	require.Equal(t, exitViolated, code)
}

func TestCollectToStdout(t *testing.T) {
	code, out, errs := runWithCollect(t, "collect", "--workload", "general", "--preset", "WH", "--sessions", "3",
		"--txns", "10", "--ops", "5", "--keys", "7", "--unique", "--seed", "5", "--rollback-rate", "0.2")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "30 transactions in 3 sessions", "the summary goes to stderr when the history goes to stdout")
	h, err := jsonl.Parse(strings.NewReader(out), "stdout", jsonl.Options{})
	require.NoError(t, err)
	st := h.Stats()
	require.Equal(t, 30, st.Transactions)
	require.Equal(t, 3, st.Sessions)
	require.Zero(t, st.MultiWriterReads)
	require.Equal(t, "preset=WH sessions=3 txns=10 ops=5 reads=0.3 keys=7 dup-keys=0 rollback-rate=0.2 seed=5", h.Meta["params"])
	require.Equal(t, "serializable", h.Meta["isolation"])
	for _, tx := range h.Txns[1:] {
		for _, op := range tx.Ops {
			require.True(t, h.Key(op.Key) >= 1 && h.Key(op.Key) <= 7)
			if op.Kind == history.OpWrite {
				v := h.Value(op.Key, op.Value)
				require.Equal(t, h.Sessions[tx.Session].ID, v/1_000_000_000, "unique values encode the session")
			}
		}
	}
	// The same seed gives the same history.
	_, again, _ := runWithCollect(t, "collect", "--workload", "general", "--preset", "WH", "--sessions", "3",
		"--txns", "10", "--ops", "5", "--keys", "7", "--unique", "--seed", "5", "--rollback-rate", "0.2", "-q")
	require.Equal(t, out, again)
}

func TestCollectUsageErrors(t *testing.T) {
	var (
		code int
		errs string
	)
	cases := map[string][]string{
		"unknown isolation level":            {"--isolation", "chaos"},
		"unknown workload \"tpce\"":          {"--workload", "tpce"},
		"--preset applies to the general":    {"--workload", "write-skew", "--preset", "RH"},
		"unknown preset":                     {"--preset", "XL"},
		"only be injected into the memory":   {"--db", "postgres://u@127.0.0.1:1/x", "--bug", "lost-update"},
		"unknown bug":                        {"--bug", "torn-writes"},
		"--unique contradicts --dup-keys":    {"--unique", "--dup-keys", "0.5"},
		"read proportion must be in [0,1]":   {"--reads", "2"},
		"unknown database":                   {"--db", "sqlite://x"},
		"unknown command \"extra\"":          {"extra"},
		"no such file or directory":          {"-o", "/nonexistent/dir/h.jsonl"},
		"write-skew uses keys in pairs":      {"--workload", "write-skew", "--keys", "3"},
		"connecting to 127.0.0.1:1":          {"--db", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"},
		"mariadb: connecting to 127.0.0.1:1": {"--db", "mariadb://root@127.0.0.1:1/x?timeout=2s"},
	}
	for msg, args := range cases {
		code, _, errs = runWithCollect(t, append([]string{"collect", "-q"}, args...)...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.Contains(t, errs, msg, args)
	}
	// A run that fails before recording leaves no empty output behind.
	h := filepath.Join(t.TempDir(), "h.jsonl")
	code, _, _ = runWithCollect(t, "collect", "-q", "--db", "sqlite://x", "-o", h)
	require.Equal(t, exitBadInput, code)
	require.NoFileExists(t, h)
	code, out, _ := runWithCollect(t, "collect", "--help")
	require.Equal(t, 0, code)
	for _, want := range []string{"postgres://", "mariadb://", "--isolation", "RH (95% reads)", "lost-update", "--bug"} {
		require.Contains(t, out, want)
	}
}

func TestProgressBarOnlyOnATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	require.Nil(t, newBar(f, 10, false), "a file is not a terminal")
	require.Nil(t, newBar(&bytes.Buffer{}, 10, false))
}

// server returns url if the database answers, and otherwise skips (or fails
// under HYPERISO_REQUIRE_DB=1).
func server(t *testing.T, url string, open func(context.Context, string) error) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := open(ctx, url); err != nil {
		if os.Getenv("HYPERISO_REQUIRE_DB") == "1" {
			t.Fatalf("%s unreachable and HYPERISO_REQUIRE_DB=1: %v", url, err)
		}
		t.Skipf("%s unreachable (set HYPERISO_REQUIRE_DB=1 to make this a failure): %v", url, err)
	}
	return url
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func TestCollectFromServers(t *testing.T) {
	pg := server(t, envOr("HYPERISO_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"),
		func(ctx context.Context, u string) error {
			s, err := postgres.Open(ctx, u)
			if err == nil {
				err = s.Teardown(ctx, false)
			}
			return err
		})
	my := server(t, envOr("HYPERISO_MARIADB_URL", "mariadb://root@127.0.0.1:3306/test"),
		func(ctx context.Context, u string) error {
			s, err := mariadb.Open(ctx, u)
			if err == nil {
				err = s.Teardown(ctx, false)
			}
			return err
		})
	dir := t.TempDir()
	for name, db := range map[string]string{"postgres": pg, "mariadb": my} {
		h := filepath.Join(dir, name+".jsonl")
		code, out, errs := runWithCollect(t, "collect", "--db", db, "--sessions", "4", "--txns", "15", "--ops", "6", "--keys", "500", "-o", h)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, "60 transactions in 4 sessions")
		code, out, errs = runCLI(t, "check", "--level", "ser", h)
		require.Equal(t, exitSatisfied, code, out+errs)
	}
	code, _, errs := runWithCollect(t, "collect", "--db", my, "--isolation", "snapshot")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "no snapshot isolation")
	code, _, errs = runWithCollect(t, "collect", "--db", my, "--mix", "ser=0.5,si=0.5")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "mix level si runs at the store's snapshot level, the weakest meant to give it: mariadb: no snapshot isolation level")
	code, _, errs = runWithCollect(t, "collect", "--db", pg, "--mix", "ser,ru")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "mix level ru: postgres: READ UNCOMMITTED runs as READ COMMITTED")
	code, _, errs = runWithCollect(t, "collect", "--db", pg, "--isolation", "read-uncommitted")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "READ UNCOMMITTED runs as READ COMMITTED in PostgreSQL")
	h := filepath.Join(dir, "ru.jsonl")
	code, _, errs = runWithCollect(t, "collect", "--db", my, "--isolation", "ru", "--sessions", "2", "--txns", "5", "--keys", "50", "-q", "-o", h)
	require.Equal(t, 0, code, errs)
	raw, err := os.ReadFile(h)
	require.NoError(t, err)
	parsed, err := jsonl.Parse(bytes.NewReader(raw), h, jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, "read-uncommitted", parsed.Meta["isolation"])
}

func TestCollectMixed(t *testing.T) {
	// hyperiso collect --mix ser=0.3,si=0.4,rc=0.3 -o h.jsonl
	h := filepath.Join(t.TempDir(), "mixed.jsonl")
	args := []string{"collect", "--mix", "ser=0.3,si=0.4,rc=0.3", "--sessions", "4", "--txns", "30", "--keys", "10", "--seed", "4", "-o", h}
	code, out, errs := runWithCollect(t, args...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "memory at mixed (ser=0.3,si=0.4,rc=0.3), workload general")
	require.Contains(t, out, "by level: ser ")
	raw, err := os.ReadFile(h)
	require.NoError(t, err)
	parsed, err := jsonl.Parse(bytes.NewReader(raw), h, jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, "mixed", parsed.Meta["isolation"])
	require.Equal(t, "ser=0.3,si=0.4,rc=0.3", parsed.Meta["mix"])
	seen := map[history.Level]bool{}
	for _, tx := range parsed.Txns[1:] {
		seen[tx.Level] = true
	}
	require.Equal(t, map[history.Level]bool{history.SER: true, history.SI: true, history.RC: true}, seen)
	// The seed fixes the history.
	code, _, errs = runWithCollect(t, args...)
	require.Equal(t, 0, code, errs)
	again, err := os.ReadFile(h)
	require.NoError(t, err)
	require.Equal(t, raw, again)

	for msg, args := range map[string][]string{
		"--mix and --isolation are exclusive":                                {"--mix", "ser,si", "--isolation", "ser"},
		`--mix: mix "ser=2,xx=1": unknown level "xx"`:                        {"--mix", "ser=2,xx=1"},
		"--mix: empty mix":                                                   {"--mix", ""},
		`weight of si must be a positive number, not "-1"`:                   {"--mix", "ser=1,si=-1"},
		"mix level ru: memory store: unsupported isolation read-uncommitted": {"--mix", "ser,ru"},
	} {
		code, _, errs := runWithCollect(t, append([]string{"collect", "-q"}, args...)...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.Contains(t, errs, msg, args)
	}
}

func TestCollectEtcdUnderFaults(t *testing.T) {
	if !stores.WithEtcd {
		t.Skip("built with -tags noetcd (TestCollectEtcdWithoutEtcd tests the message)")
	}
	// hyperiso collect --db etcd --faults … --times -o h.jsonl && hyperiso check --level strict-ser h.jsonl
	h := filepath.Join(t.TempDir(), "etcd.jsonl")
	// The fault starts at once: a quiet machine runs the whole workload in
	// about 100ms.
	code, out, errs := runWithCollect(t, "collect", "--db", "etcd", "--isolation", "snapshot", "--sessions", "4", "--txns", "30",
		"--ops", "6", "--keys", "40", "--times", "--faults", "kill:follower@1ms+200ms", "-o", h)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "etcd 3.7.3 (embedded, 3 members) at snapshot")
	require.Contains(t, out, "120 transactions in")
	require.Contains(t, out, "1 faults injected:")
	require.Contains(t, out, "kill:follower@1ms+200ms: member")
	code, out, errs = runCLI(t, "check", "--level", "strict-ser", h)
	require.Equal(t, exitSatisfied, code, out+errs)
	require.Contains(t, out, "STRICT-SER: SATISFIED")
	hist, err := os.ReadFile(h)
	require.NoError(t, err)
	require.Contains(t, string(hist), `"level":"ser","time":[`)
	require.Contains(t, string(hist), `"faults":"kill:follower@1ms+200ms"`, "the metadata holds the schedule")

	for msg, args := range map[string][]string{
		`--faults: fault 1 "reboot@1s": unknown kind "reboot"`: {"--faults", "reboot@1s"},
		"memory: faults cannot be injected into this store":    {"--faults", "restart@1s"},
		"etcd: members=0: want a number from 1 to 9":           {"--db", "etcd?members=0"},
	} {
		code, _, errs := runWithCollect(t, append([]string{"collect", "-q"}, args...)...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.Contains(t, errs, msg, args)
	}
}
