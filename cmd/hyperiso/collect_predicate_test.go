package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCollectPredicate: hyperiso collect --workload predicate -o h.jsonl
// writes a history of rows and range reads that check reads: SER
// satisfied on a serializable run, SER violated (G2 through predicates) on
// the memory store's snapshot isolation, and RC refused (not decided yet).
func TestCollectPredicate(t *testing.T) {
	h := filepath.Join(t.TempDir(), "predicate.jsonl")
	code, out, errs := runWithCollect(t, "collect", "--workload", "predicate", "--txns", "40", "-o", h)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "workload predicate sessions=8 txns=40 ops=4 reads=0.5 keys=12 dup-keys=0 seed=1")
	code, out, errs = runCLI(t, "check", "--level", "ser", h)
	require.Equal(t, exitSatisfied, code, out+errs)
	require.Contains(t, out, "SER: SATISFIED")

	code, _, errs = runWithCollect(t, "collect", "--workload", "predicate", "--txns", "40", "--keys", "6", "--isolation", "snapshot", "-q", "-o", h)
	require.Equal(t, 0, code, errs)
	code, out, errs = runCLI(t, "check", "--level", "si", h)
	require.Equal(t, exitSatisfied, code, out+errs)
	code, out, errs = runCLI(t, "check", "--level", "ser", h)
	require.Equal(t, exitViolated, code, out+errs)

	for msg, args := range map[string][]string{
		"dup-keys must be 0":      {"--workload", "predicate", "--dup-keys", "0.5"},
		"keys must be at least 2": {"--workload", "predicate", "--keys", "1"},
	} {
		code, _, errs = runWithCollect(t, append([]string{"collect", "-q"}, args...)...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.Contains(t, errs, msg, args)
	}
}
