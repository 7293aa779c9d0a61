package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// psi and pc from the command line, as files and on stdin, in text and
// EDN: the long fork and the lost update tell them apart.
func TestPSIAndPCThroughCLI(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "strong")
	for _, c := range []struct {
		level, file string
		code        int
		text        string
	}{
		{"psi", "long-fork.jsonl", exitSatisfied, "PSI: SATISFIED"},
		{"psi", "lost-update.jsonl", exitViolated, "lost-update"},
		{"pc", "long-fork.jsonl", exitViolated, "PC: VIOLATED"},
		{"pc", "lost-update.jsonl", exitSatisfied, "PC: SATISFIED"},
	} {
		path := filepath.Join(dir, c.file)
		code, out, errs := runCLI(t, "check", "--level", c.level, path)
		require.Equal(t, c.code, code, "%s %s: %s%s", c.level, c.file, out, errs)
		require.Contains(t, out, c.text)

		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		code, out, errs = pipeRun(t, strings.NewReader(string(raw)), "check", "--level", c.level, "--edn", "-")
		require.Equal(t, c.code, code, errs)
		model := map[string]string{"psi": ":parallel-snapshot-isolation", "pc": ":prefix"}[c.level]
		require.Contains(t, out, model)
	}
	code, _, errs := runCLI(t, "check", "--level", "psi", "--strategy", "veristrong", filepath.Join(dir, "long-fork.jsonl"))
	require.NotEqual(t, exitSatisfied, code)
	require.Contains(t, errs, "--strategy must be one of cdcl-psi, lazy-gini-psi")
}

// A level decided one way takes no --strategy; each level's strategies are
// its row's table.
func TestStrategyByLevel(t *testing.T) {
	code, _, errs := runCLI(t, "check", "--level", "rc", "--strategy", "veristrong", "../../testdata/bank.jsonl")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "rc is decided by one strategy")
	code, _, errs = runCLI(t, "check", "--level", "pc", "--strategy", "veristrong", "../../testdata/bank.jsonl")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "cdcl-pc, lazy-gini-pc")
	code, _, _ = runCLI(t, "check", "--level", "psi", "--strategy", "lazy-gini-psi", "../../testdata/bank.jsonl")
	require.NotEqual(t, exitBadInput, code)
}
