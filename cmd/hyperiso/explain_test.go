package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExplainCommand(t *testing.T) {
	dir := t.TempDir()
	page, dot := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.dot")
	code, out, errs := runCLI(t, "explain", "--level", "si", "--html", page, "--dot", dot, "../../testdata/explain/lost-update.jsonl")
	require.Equal(t, exitViolated, code, out+errs)
	require.Contains(t, out, "lost-update")
	require.Contains(t, out, "Minimality: proven minimal")
	require.Contains(t, errs, "SI violated: lost-update, minimal counterexample of 2")
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "<!DOCTYPE html>"))
	require.Contains(t, string(b), "<svg")
	b, err = os.ReadFile(dot)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "digraph"))

	code, out, errs = runCLI(t, "explain", "--level", "ser", "--json", "--explain-budget", "100,10s", "../../testdata/explain/g2-item.jsonl")
	require.Equal(t, exitViolated, code, errs)
	var rep struct {
		Verdict     string `json:"verdict"`
		Anomalies   []any  `json:"anomalies"`
		Explanation struct {
			Counterexamples []struct {
				Class   string `json:"class"`
				Size    int    `json:"size"`
				Minimal bool   `json:"minimal"`
			} `json:"counterexamples"`
			Budget struct {
				Checks int `json:"checks"`
			} `json:"budget"`
		} `json:"explanation"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "violated", rep.Verdict)
	require.NotEmpty(t, rep.Anomalies)
	require.Equal(t, 100, rep.Explanation.Budget.Checks)
	require.Len(t, rep.Explanation.Counterexamples, 1)
	require.Equal(t, "G2-item", rep.Explanation.Counterexamples[0].Class)
	require.Equal(t, 2, rep.Explanation.Counterexamples[0].Size)

	// DOT to standard output replaces the text report.
	code, out, _ = runCLI(t, "explain", "--level", "ser", "--dot", "-", "../../testdata/explain/g1c.jsonl")
	require.Equal(t, exitViolated, code)
	require.True(t, strings.HasPrefix(out, "digraph"), out)

	code, out, _ = runCLI(t, "explain", "--level", "ser", "--output", "html", "../../testdata/explain/g1c.jsonl")
	require.Equal(t, exitViolated, code)
	require.True(t, strings.HasPrefix(out, "<!DOCTYPE html>"), out)
	code, _, _ = runCLI(t, "explain", "--level", "ser", "--output", "pdf", "../../testdata/explain/g1c.jsonl")
	require.Equal(t, exitBadInput, code)

	code, out, _ = runCLI(t, "explain", "--level", "ser", "../../testdata/bank.jsonl")
	require.Equal(t, exitSatisfied, code)
	require.Contains(t, out, "nothing to explain")

	code, _, errs = runCLI(t, "explain", "--level", "ser", "--explain-budget", "lots", "../../testdata/bank.jsonl")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--explain-budget")
	code, _, _ = runCLI(t, "explain", "--level", "xx", "../../testdata/bank.jsonl")
	require.Equal(t, exitBadInput, code)
}
