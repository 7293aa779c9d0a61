package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestValidationFindingsOnTestdata(t *testing.T) {
	cases := map[string]string{
		"thin-air.jsonl":             "thin-air-read",
		"aborted-read.jsonl":         "aborted-read",
		"intermediate-read.jsonl":    "intermediate-read",
		"future-read.jsonl":          "future-read",
		"not-own-write.jsonl":        "not-own-write",
		"not-latest-own-write.jsonl": "not-latest-own-write",
		"non-repeatable-read.jsonl":  "non-repeatable-read",
	}
	for file, kind := range cases {
		t.Run(file, func(t *testing.T) {
			code, out, errs := runCLI(t, "check", "--level", "ser", "--json", filepath.Join("../../testdata/validation", file))
			require.Equal(t, exitViolated, code, errs)
			var res check.Result
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			require.Len(t, res.Anomalies, 1, out)
			a := res.Anomalies[0]
			require.Equal(t, kind, a.Type)
			require.NotNil(t, a.Key)
			require.NotNil(t, a.Value)
			require.NotNil(t, a.Op)
			require.NotEmpty(t, a.Txns)
			require.Contains(t, a.Description, "T")
		})
	}
	code, out, errs := runCLI(t, "check", "--level", "ser", "../../testdata/validation/clean.jsonl")
	require.Equal(t, exitSatisfied, code, out+errs)
	require.Contains(t, out, "SER: SATISFIED")
}

func TestNonRepeatableReadAllowedAtRC(t *testing.T) {
	code, out, errs := runCLI(t, "check", "--level", "rc", "../../testdata/validation/non-repeatable-read.jsonl")
	require.Equal(t, exitSatisfied, code, out+errs)
	code, _, _ = runCLI(t, "check", "--level", "ra", "../../testdata/validation/non-repeatable-read.jsonl")
	require.Equal(t, exitViolated, code)
	code, _, _ = runCLI(t, "check", "--level", "rc", "../../testdata/validation/thin-air.jsonl")
	require.Equal(t, exitViolated, code, "a thin-air read violates every level")
}

func TestStrongLevelsOnTestdata(t *testing.T) {
	cases := []struct {
		file    string
		ser, si int
	}{
		{"../../testdata/bank.jsonl", exitSatisfied, exitSatisfied},
		{"../../testdata/strong/write-skew.jsonl", exitViolated, exitSatisfied},
		{"../../testdata/strong/lost-update.jsonl", exitViolated, exitViolated},
		{"../../testdata/strong/long-fork.jsonl", exitViolated, exitViolated},
		{"../../testdata/strong/duplicate-values.jsonl", exitSatisfied, exitSatisfied},
	}
	for _, c := range cases {
		for _, s := range check.StrategyNames(history.SER) {
			code, out, errs := runCLI(t, "check", "--level", "ser", "--strategy", s, c.file)
			require.Equal(t, c.ser, code, "%s SER %s\n%s%s", c.file, s, out, errs)
			code, out, errs = runCLI(t, "check", "--level", "si", "--strategy", s, c.file)
			require.Equal(t, c.si, code, "%s SI %s\n%s%s", c.file, s, out, errs)
		}
		pc := exitSatisfied
		if c.file == "../../testdata/strong/long-fork.jsonl" {
			pc = exitViolated
		}
		for _, s := range check.StrategyNames(history.PC) {
			code, out, errs := runCLI(t, "check", "--level", "pc", "--strategy", s, c.file)
			require.Equal(t, pc, code, "%s PC %s\n%s%s", c.file, s, out, errs)
		}
		psi := exitSatisfied
		if c.file == "../../testdata/strong/lost-update.jsonl" {
			psi = exitViolated
		}
		for _, s := range check.StrategyNames(history.PSI) {
			code, out, errs := runCLI(t, "check", "--level", "psi", "--strategy", s, c.file)
			require.Equal(t, psi, code, "%s PSI %s\n%s%s", c.file, s, out, errs)
		}
	}
}

func TestJSONReportSchema(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--level", "ser", "--json", "../../testdata/strong/write-skew.jsonl")
	require.Equal(t, exitViolated, code)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	for _, k := range []string{"hyperiso_report", "source", "format", "level", "verdict", "history", "timings_ms", "counters", "anomalies"} {
		require.Contains(t, m, k)
	}
	a := m["anomalies"].([]any)[0].(map[string]any)
	require.Contains(t, a, "edges")
	e := a["edges"].([]any)[0].(map[string]any)
	for _, k := range []string{"from", "to", "relation", "reason"} {
		require.Contains(t, e, k)
	}
	code, out, _ = runCLI(t, "check", "--level", "ser", "--json", "../../testdata/bank.jsonl")
	require.Equal(t, exitSatisfied, code)
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Len(t, m["witness"], 5)
}

func TestBadInputAndUsage(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"session\": 1, \"ops\": [[\"x\", 1, 2]]}\n"), 0o644))
	for _, args := range [][]string{
		{"check", "--level", "ser", filepath.Join(dir, "missing.jsonl")},
		{"check", "--level", "bogus", "../../testdata/bank.jsonl"},
		{"check"},
		{"check", "--level", "ser", "--format", "nope", "../../testdata/bank.jsonl"},
		{"check", "--level", "ser", "--strategy", "nope", "../../testdata/bank.jsonl"},
		{"check", "--level", "ser", bad},
		{"stats", "--nope", "x"},
		{"convert"},
	} {
		code, _, errs := runCLI(t, args...)
		require.Equal(t, exitBadInput, code, "%v: %s", args, errs)
		require.NotEmpty(t, errs)
	}
	code, _, errs := runCLI(t, "check", "--level", "ser", bad)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "bad.jsonl:1")
	code, _, errs = runCLI(t, "stats", empty)
	require.Equal(t, exitBadInput, code, errs)
	// A flag error names the flag on the first line and prints the usage
	// as text, its lines as lines (not escaped like input).
	code, _, errs = runCLI(t, "check", "--bogus", "x")
	require.Equal(t, exitBadInput, code, errs)
	require.True(t, strings.HasPrefix(errs, "hyperiso: unknown flag: --bogus\nUsage:\n"), errs)
	require.NotContains(t, errs, `\n`)
}

func TestConvertRoundTripsThroughJSONL(t *testing.T) {
	ds := shared.Datasets(t)
	out := filepath.Join(t.TempDir(), "h.jsonl")
	for _, p := range []string{"samples/dbcop/roachdb-cut/history.bincode", "samples/cobra/rubis-1k-cut", "samples/text/pg_ser_bug.txt"} {
		code, _, errs := runCLI(t, "convert", "-o", out, filepath.Join(ds, p))
		require.Equal(t, 0, code, errs)
		_, a, _ := runCLI(t, "stats", "--json", filepath.Join(ds, p))
		_, b, _ := runCLI(t, "stats", "--json", out)
		var sa, sb map[string]any
		require.NoError(t, json.Unmarshal([]byte(a), &sa))
		require.NoError(t, json.Unmarshal([]byte(b), &sb))
		delete(sa, "source")
		delete(sb, "source")
		delete(sa, "format")
		delete(sb, "format")
		for _, k := range []string{"warnings", "warning_messages"} {
			delete(sa, k)
			delete(sb, k)
		}
		require.Equal(t, sa, sb, p)
		for _, l := range []string{"ser", "si"} {
			c1, _, _ := runCLI(t, "check", "--level", l, filepath.Join(ds, p))
			c2, _, _ := runCLI(t, "check", "--level", l, out)
			require.Equal(t, c1, c2, "%s at %s: same verdict before and after conversion", p, l)
		}
	}
}

func TestStatsText(t *testing.T) {
	code, out, _ := runCLI(t, "stats", "../../testdata/strong/duplicate-values.jsonl")
	require.Equal(t, 0, code)
	require.True(t, strings.Contains(out, "multi-writer reads  1"), out)
}

func TestTimeoutIsUnknown(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--level", "ser", "--timeout", "1ns", "../../testdata/bank.jsonl")
	require.Equal(t, exitUnknown, code, out)
	require.Contains(t, out, "UNKNOWN (timeout after 1ns during ")
}

func TestElleHistories(t *testing.T) {
	ds := shared.Datasets(t)
	code, out, errs := runCLI(t, "check", "--level", "ser", "--json", filepath.Join(ds, "elle", "paper-example.edn"))
	require.Equal(t, exitViolated, code, errs)
	var res check.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "G-single", res.Anomalies[0].Type)
	keys := map[int64]bool{}
	for _, e := range res.Anomalies[0].Edges {
		keys[*e.Key] = true
	}
	require.Equal(t, map[int64]bool{255: true, 256: true}, keys)

	stale := "../../testdata/elle/realtime-stale-read.edn"
	code, _, _ = runCLI(t, "check", "--level", "ser", stale)
	require.Equal(t, exitSatisfied, code, "serializable without real time")
	code, out, _ = runCLI(t, "check", "--level", "strict-ser", stale)
	require.Equal(t, exitViolated, code, out)
	require.Contains(t, out, "-rt->")
	code, _, _ = runCLI(t, "check", "--level", "ser", "--realtime", stale)
	require.Equal(t, exitViolated, code)
}

// TestCPUProfile checks the hidden --cpuprofile flag: a profile is written
// (gzip-compressed, as pprof writes them) whether the command succeeds or
// fails, and an unwritable path is bad input.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		{"check", "--level", "ser", "../../testdata/strong/write-skew.jsonl"},
		{"check", "--level", "ser", filepath.Join(dir, "missing.jsonl")},
		{"check", "--level", "si", "../../testdata/strong/write-skew.jsonl"},
	} {
		prof := filepath.Join(dir, fmt.Sprintf("cpu%d.prof", i))
		code, _, errs := runCLI(t, append(args, "--cpuprofile", prof)...)
		if i == 0 {
			require.Equal(t, exitViolated, code, errs)
		}
		data, err := os.ReadFile(prof)
		require.NoError(t, err, "run %d (exit %d) wrote no profile", i, code)
		require.True(t, len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b, "run %d: not a gzip-compressed profile", i)
	}
	code, _, errs := runCLI(t, "check", "--level", "ser", "--cpuprofile", filepath.Join(dir, "no", "such", "dir", "p"), "../../testdata/bank.jsonl")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--cpuprofile")
}

// check --help says which definition each level follows, and the README
// says the same for every level.
func TestLevelDefinitions(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, history.Definitions(78))
	// Each level once, each from its row of the level table.
	for _, r := range history.Levels {
		require.Equal(t, 1, strings.Count(out, "\n  "+r.Name+" "), r.Name)
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, phrase := range []string{"strong session SI", "induced graph of Cerone", "Biswas and Enea", "Adya's PL-2", "one version order per key"} {
		require.Contains(t, out, phrase)
		require.Contains(t, string(readme), phrase)
	}
}
