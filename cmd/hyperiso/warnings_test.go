package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// warnedHistory writes write-skew.jsonl followed by n lines the lenient
// JSONL reader skips with a warning each.
func warnedHistory(t *testing.T, n int) string {
	t.Helper()
	data, err := os.ReadFile("../../testdata/strong/write-skew.jsonl")
	require.NoError(t, err)
	for i := range n {
		data = append(data, fmt.Sprintf("garbage %d\n", i)...)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("warned%d.jsonl", n))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// TestWarningsInTextOutput: text output of check, explain, convert and
// stats says on standard error how many warnings the reader gave, lists the
// first five and says where the rest are; JSON carries them all.
func TestWarningsInTextOutput(t *testing.T) {
	few, many := warnedHistory(t, 2), warnedHistory(t, 8)
	for _, args := range [][]string{
		{"check", "--level", "ser", "--lenient"},
		{"explain", "--level", "ser", "--lenient"},
		{"explain", "--level", "ser", "--lenient", "--output", "dot"},
		{"convert", "--lenient"},
		{"stats", "--lenient"},
	} {
		_, _, errs := runCLI(t, append(args, many)...)
		require.Contains(t, errs, "hyperiso: 8 warnings reading "+many+", the first 5 (all of them ", args)
		for i := range 8 {
			line := fmt.Sprintf("  %s:%d: line skipped: column 1: expected '{' (each line is one JSON object), found 'g'\n", many, 3+i)
			if i < 5 {
				require.Contains(t, errs, line, args)
			} else {
				require.NotContains(t, errs, line, args)
			}
		}
		_, _, errs = runCLI(t, append(args, few)...)
		require.Contains(t, errs, "hyperiso: 2 warning(s) reading "+few+":\n  "+few+":3: line skipped", args)
		require.NotContains(t, errs, "all of them", args)
		_, _, errs = runCLI(t, append(args, "../../testdata/strong/write-skew.jsonl")...)
		require.NotContains(t, errs, "warning", args)
	}
	_, _, errs := runCLI(t, "check", "--level", "ser", "--lenient", many)
	require.Contains(t, errs, "(all of them in the --json report)")

	// JSON output has them all, and standard error does not repeat them.
	code, out, errs := runCLI(t, "check", "--level", "ser", "--lenient", "--json", many)
	require.Equal(t, exitViolated, code)
	require.NotContains(t, errs, "warning")
	var res struct{ Warnings []string }
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Warnings, 8)
	code, out, errs = runCLI(t, "stats", "--lenient", "--json", many)
	require.Equal(t, 0, code)
	require.NotContains(t, errs, "warning")
	var st struct {
		Warnings        int      `json:"warnings"`
		WarningMessages []string `json:"warning_messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Equal(t, 8, st.Warnings)
	require.Len(t, st.WarningMessages, 8)
	require.True(t, strings.HasPrefix(st.WarningMessages[7], many+":10: line skipped"), st.WarningMessages[7])
}
