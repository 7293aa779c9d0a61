package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/internal/shared"
)

// TestConvertTo: convert --to writes each format, and check reads the
// result back (format detected) with the original verdict.
func TestConvertTo(t *testing.T) {
	in := filepath.Join(shared.Datasets(t), "real-bugs", "pg_ser_bug.txt")
	wantCode, want, _ := runCLI(t, "check", "--level", "ser", in)
	require.Equal(t, exitViolated, wantCode)
	dir := t.TempDir()
	for _, to := range []string{"jsonl", "dbcop", "cobra", "text", "edn", "awdit", "viper"} {
		out := filepath.Join(dir, "h-"+to)
		code, _, errs := runCLI(t, "convert", "--to", to, "-o", out, in)
		require.Equal(t, 0, code, "%s: %s", to, errs)
		code, got, errs := runCLI(t, "check", "--level", "ser", out)
		require.Equal(t, wantCode, code, "%s: %s", to, errs)
		require.Equal(t, verdictLine(want), verdictLine(got), to)
	}
	// To standard output.
	code, got, errs := runCLI(t, "convert", "--to", "text", in)
	require.Equal(t, 0, code, errs)
	require.True(t, strings.HasPrefix(got, "w(") || strings.HasPrefix(got, "r("), got)
}

func verdictLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "SER:") {
			return l
		}
	}
	return ""
}

// TestConvertToRefuses: a history the target cannot hold exits 2, names
// what is missing and leaves no output file; bad flags exit 2 too.
func TestConvertToRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(shared.Datasets(t), "elle", "list-append-gh-30.edn")
	out := filepath.Join(dir, "h.txt")
	code, _, errs := runCLI(t, "convert", "--to", "text", "-o", out, in)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "the text format cannot hold this history")
	require.Contains(t, errs, "list-append operations")
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "a refused conversion leaves no file")
	require.NoError(t, os.WriteFile(out, []byte("keep"), 0o644))
	code, _, _ = runCLI(t, "convert", "--to", "text", "-o", out, in)
	require.Equal(t, exitBadInput, code)
	kept, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "keep", string(kept), "a refused conversion leaves an existing file as it was")

	code, stdout, errs := runCLI(t, "convert", "--to", "awdit", in)
	require.Equal(t, exitBadInput, code)
	require.Empty(t, stdout)
	require.Contains(t, errs, "the AWDIT format cannot hold this history")

	code, _, errs = runCLI(t, "convert", "--to", "cobra", in)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "-o DIR")
	code, _, errs = runCLI(t, "convert", "--to", "xml", in)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--to must be one of jsonl, dbcop, cobra, text, edn, awdit, viper")
	code, _, errs = runCLI(t, "convert", "--to", "cobra", "--to-cobra-flavour", "odd", "-o", filepath.Join(dir, "c"), in)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--to-cobra-flavour")
}
