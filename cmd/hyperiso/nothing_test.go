package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNothingLeftToCheck: histories from which the reader keeps no
// transaction that may have committed are refused by check and explain
// (exit 2) with a message that says nothing is left and what was skipped;
// never a verdict.
func TestNothingLeftToCheck(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, data, skipped string
	}{
		{"reads.edn", `{:type :invoke, :f :read, :value nil, :process 0, :index 0}
{:type :ok, :f :read, :value 3, :process 0, :index 1}
{:type :invoke, :f :read, :value nil, :process 1, :index 2}
{:type :ok, :f :read, :value 3, :process 1, :index 3}
`, "4 operation map(s) with :f :read skipped"},
		// Keyword processes are clients like integer ones; Jepsen's
		// :nemesis is not.
		{"nemesis-only.edn", `{:type :info, :f :txn, :value [[:append 1 1]], :process :nemesis, :index 0}
{:type :info, :f :txn, :value [[:append 1 2]], :process :nemesis, :index 1}
`, "2 operation map(s) with :process :nemesis skipped"},
		{"aborted.jsonl", `{"session": 1, "status": "aborted", "ops": [["w", 1, 1]]}` + "\n", "none committed"},
	} {
		path := filepath.Join(dir, c.name)
		require.NoError(t, os.WriteFile(path, []byte(c.data), 0o644))
		for _, args := range [][]string{
			{"check", "--level", "ser"},
			{"check", "--level", "rc", "--json"},
			{"explain", "--level", "ser"},
			{"explain", "--level", "si", "--json"},
		} {
			code, out, errs := runCLI(t, append(args, path)...)
			require.Equal(t, exitBadInput, code, "%s %v: %s%s", c.name, args, out, errs)
			require.Contains(t, errs, path+": cannot be checked: nothing to check", args)
			require.Contains(t, errs, c.skipped, args)
		}
	}
	// strict-ser on a history without timing is refused alike.
	for _, cmd := range []string{"check", "explain"} {
		code, out, errs := runCLI(t, cmd, "--level", "strict-ser", "../../testdata/bank.jsonl")
		require.Equal(t, exitBadInput, code, "%s: %s%s", cmd, out, errs)
		require.Contains(t, errs, "strict-ser needs real-time order")
	}
}
