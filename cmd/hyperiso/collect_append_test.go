package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCollectAppend: hyperiso collect --workload append -o h.jsonl writes a
// list-append history that check reads: SER satisfied on a serializable
// run, SI violated when the memory store loses updates.
func TestCollectAppend(t *testing.T) {
	h := filepath.Join(t.TempDir(), "append.jsonl")
	code, out, errs := runWithCollect(t, "collect", "--workload", "append", "--txns", "40", "-o", h)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "workload append sessions=10 txns=40 ops=4 reads=0.5 keys=10 max-list=32 dup-keys=0 seed=1")
	code, out, errs = runCLI(t, "check", "--level", "ser", h)
	require.Equal(t, exitSatisfied, code, out+errs)
	require.Contains(t, out, "SER: SATISFIED")

	code, _, errs = runWithCollect(t, "collect", "--workload", "append", "--txns", "40", "--isolation", "snapshot", "--bug", "lost-update", "-q", "-o", h)
	require.Equal(t, 0, code, errs)
	code, out, errs = runCLI(t, "check", "--level", "si", h)
	require.Equal(t, exitViolated, code, out+errs)

	for msg, args := range map[string][]string{
		"--max-list applies to the append and rw-register workloads only": {"--max-list", "8"},
		"dup-keys must be 0":                       {"--workload", "append", "--dup-keys", "0.5"},
		"maximum list length must not be negative": {"--workload", "append", "--max-list", "-1"},
	} {
		code, _, errs = runWithCollect(t, append([]string{"collect", "-q"}, args...)...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.Contains(t, errs, msg, args)
	}
}
