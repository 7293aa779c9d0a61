package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect/hermitage"
)

func TestHermitageUsageErrors(t *testing.T) {
	cases := map[string][]string{
		"--hermitage needs a SQL server":     {"--hermitage"},
		"needs a SQL server: --db postgres":  {"--hermitage", "--db", "etcd"},
		"--faults does not apply":            {"--hermitage", "--db", "postgres://u@127.0.0.1:1/x", "--faults", "kill-conns@1s"},
		"--isolation does not apply":         {"--hermitage", "--db", "postgres://u@127.0.0.1:1/x", "--isolation", "rr"},
		"--mix does not apply":               {"--hermitage", "--db", "postgres://u@127.0.0.1:1/x", "--mix", "ser,rc"},
		"--workload does not apply":          {"--hermitage", "--db", "postgres://u@127.0.0.1:1/x", "--workload", "lost-update"},
		"no scenario \"P5\"":                 {"--hermitage", "--db", "postgres://u@127.0.0.1:1/x", "--scenario", "P4,P5"},
		"--scenario applies to --hermitage":  {"--scenario", "P4"},
		"unknown database":                   {"--hermitage", "--db", "sqlite://x"},
		"connecting to 127.0.0.1:1":          {"--hermitage", "--db", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"},
		"mariadb: connecting to 127.0.0.1:1": {"--hermitage", "--db", "mariadb://root@127.0.0.1:1/x?timeout=2s"},
	}
	for msg, args := range cases {
		code, _, errs := runWithCollect(t, append([]string{"collect"}, args...)...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.Contains(t, errs, msg, args)
	}
	code, out, _ := runWithCollect(t, "collect", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "--hermitage")
	require.Contains(t, out, "docs/hermitage.md")
}

// TestHermitageFromServers runs two scenarios through the CLI on each
// server: the matrix on stdout agrees with the committed one, and -o
// keeps histories that check reads and judges the same way.
func TestHermitageFromServers(t *testing.T) {
	open := func(ctx context.Context, u string) error {
		tg, err := hermitage.Open(ctx, u)
		if err == nil {
			err = tg.Close()
		}
		return err
	}
	pg := server(t, envOr("HYPERISO_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), open)
	my := server(t, envOr("HYPERISO_MARIADB_URL", "mariadb://root@127.0.0.1:3306/test"), open)
	for kind, db := range map[string]string{"postgres": pg, "mariadb": my} {
		dir := filepath.Join(t.TempDir(), "h")
		code, out, errs := runWithCollect(t, "collect", "--hermitage", "--db", db, "--scenario", "p4,g2-item", "-o", dir)
		require.Equal(t, 0, code, errs)
		require.Regexp(t, `(?m)^read-committed +SI\* +SER\*$`, out, kind)
		require.Regexp(t, `(?m)^serializable +ok +ok$`, out, kind)
		require.Contains(t, out, "differences from Hermitage's documentation: 0")
		files, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, files, 2*len(hermitage.Expected[kind]), kind)
		h := filepath.Join(dir, kind+"-read-committed-P4.jsonl")
		code, out, errs = runCLI(t, "check", "--level", "cc", h)
		require.Equal(t, exitSatisfied, code, out+errs)
		code, out, errs = runCLI(t, "check", "--level", "si", h)
		require.Equal(t, exitViolated, code, out+errs)
		require.Contains(t, out, "lost-update")
	}
}
