package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// The hand-written mixed histories of testdata/mixed through the CLI: each
// file, named SHAPE.LEVELS.VERDICT.jsonl, gets the verdict its name states,
// which the brute-force oracle finds too; a violation names a culprit
// transaction and an axiom.
func TestMixedTestdata(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "mixed", "*.jsonl"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 40)
	for _, path := range paths {
		name := filepath.Base(path)
		parts := strings.Split(strings.TrimSuffix(name, ".jsonl"), ".")
		require.Len(t, parts, 3, name)
		want := parts[2]
		code, out, errs := runCLI(t, "check", "--level", "mixed", "--json", path)
		var res check.Result
		require.NoError(t, json.Unmarshal([]byte(out), &res), errs)
		require.Equal(t, want, res.Verdict.String(), "%s: %s", name, out)
		wantCode := map[string]int{"satisfied": exitSatisfied, "violated": exitViolated}[want]
		require.Equal(t, wantCode, code, name)
		if want == "violated" {
			require.NotEmpty(t, res.Anomalies, name)
			a := res.Anomalies[0]
			require.NotNil(t, a.Culprit, name)
			require.NotEmpty(t, a.Axiom, name)
			require.Contains(t, a.Description, " ran at ", name)
		}
		h, err := jsonl.Read(path, jsonl.Options{})
		require.NoError(t, err)
		consistent, err := oracle.Mixed(h, history.LevelNone)
		require.NoError(t, err)
		require.Equal(t, want == "satisfied", consistent, "%s: the oracle disagrees with the file's name", name)
	}
}

// What a mixed check refuses as bad input, and the text report of a
// violation.
func TestMixedThroughCLI(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata")
	noLevels := filepath.Join(dir, "strong", "lost-update.jsonl")
	code, _, errs := runCLI(t, "check", "--level", "mixed", noLevels)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "declares no level")

	code, out, _ := runCLI(t, "check", "--level", "mixed", "--default-level", "pc", noLevels)
	require.Equal(t, exitSatisfied, code, out)
	code, out, _ = runCLI(t, "check", "--level", "mixed", "--default-level", "psi", noLevels)
	require.Equal(t, exitViolated, code, out)
	require.Contains(t, out, "ran at PARALLEL SNAPSHOT ISOLATION")

	for _, args := range [][]string{
		{"check", "--level", "ser", "--default-level", "pc", noLevels},
		{"check", "--level", "mixed", "--default-level", "strict-ser", noLevels},
		{"check", "--level", "mixed", "--default-level", "pc", "--realtime", noLevels},
		{"explain", "--level", "mixed", noLevels},
	} {
		code, _, errs := runCLI(t, args...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
	}

	// explain re-checks each smaller history at the same levels.
	code, out, _ = runCLI(t, "explain", "--level", "mixed", "--default-level", "psi", noLevels)
	require.Equal(t, exitViolated, code, out)
	require.Contains(t, out, "proven minimal")
	require.Contains(t, out, "ran at PARALLEL SNAPSHOT ISOLATION")
	code, out, _ = runCLI(t, "explain", "--level", "mixed", filepath.Join(dir, "mixed", "postgres-ser-beside-rr.si-ser-ser-si-si.violated.jsonl"))
	require.Equal(t, exitViolated, code, out)
	require.Contains(t, out, "5 transactions of 5, minimal")
	require.Contains(t, out, "(TOTALVis)")

	code, out, _ = runCLI(t, "check", "--level", "mixed", "--edn", filepath.Join(dir, "mixed", "long-fork.ra-ra-pc-pc.violated.jsonl"))
	require.Equal(t, exitViolated, code)
	require.Contains(t, out, ":mixed")
	code, out, _ = runCLI(t, "check", "--level", "mixed", filepath.Join(dir, "mixed", "long-fork.ra-ra-pc-pc.violated.jsonl"))
	require.Equal(t, exitViolated, code)
	require.Contains(t, out, "ran at PREFIX CONSISTENCY")
	require.Contains(t, out, "(PREFIX)")
}
