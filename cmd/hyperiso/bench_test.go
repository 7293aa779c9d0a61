package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/bench"
	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// benchWorkerEnv makes the test binary, re-executed by "hyperiso bench" as
// "<test binary> bench --worker", serve that job (see TestMain).
const benchWorkerEnv = "HYPERISO_BENCH_CMD_TEST_WORKER"

// peakEnv makes the test binary acting as hyperiso write its own peak
// resident size last on standard error (reportPeak, where the system
// tells it).
const peakEnv = "HYPERISO_CMD_TEST_PEAK"

// reportPeak is set where the system tells a process its own peak.
var reportPeak func()

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		code := run(os.Args[1:], os.Stdout, os.Stderr)
		if os.Getenv(peakEnv) == "1" && reportPeak != nil {
			reportPeak()
		}
		os.Exit(code)
	}
	if os.Getenv(benchWorkerEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "bench" {
		code := exitSatisfied
		root := rootWithBench(os.Stdout, &code)
		root.SetArgs(os.Args[1:])
		if err := root.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "hyperiso:", err)
			os.Exit(exitBadInput)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// rootWithBench is newRoot with the bench command registered, whether or
// not newRoot registers it already.
func rootWithBench(stdout io.Writer, code *int) *cobra.Command {
	root := newRoot(stdout, code)
	if c, _, err := root.Find([]string{"bench"}); err != nil || c == root {
		root.AddCommand(newBench(stdout))
	}
	return root
}

// runWithBench is run with the bench command registered, whether or not
// newRoot registers it already.
func runWithBench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = exitSatisfied
	root := rootWithBench(&out, &code)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(&errb, "hyperiso:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code, out.String(), errb.String()
		}
		return exitBadInput, out.String(), errb.String()
	}
	return code, out.String(), errb.String()
}

func TestBenchCommand(t *testing.T) {
	t.Setenv(benchWorkerEnv, "1")
	dir := t.TempDir()
	csvPath, svgPath, jsonPath := filepath.Join(dir, "b.csv"), filepath.Join(dir, "b.svg"), filepath.Join(dir, "b.json")
	code, out, errs := runWithBench(t, "bench", "--strategy", "lazy-gini,lazy-gophersat", "--level", "ser,si",
		"--repeat", "2", "--timeout", "1m", "--csv", csvPath, "--plot", svgPath, "--json", jsonPath,
		"--ablation", "lazy-gini", "--ablation-counter", "solver_iterations", "-v",
		"../../testdata/strong", "../../testdata/bank.jsonl")
	require.Equal(t, 0, code, out+errs)

	// The table: 5 histories × 2 levels × 2 strategies.
	assert.Regexp(t, `(?m)^write-skew\.jsonl\s+ser\s+lazy-gini\s+violated\s+2\s+2\s`, out)
	assert.Regexp(t, `(?m)^write-skew\.jsonl\s+si\s+lazy-gophersat\s+satisfied\s`, out)
	assert.Regexp(t, `(?m)^bank\.jsonl\s+si\s+lazy-gini\s+satisfied\s`, out)
	assert.Contains(t, out, "lazy-gini (base) solver_iterations")
	assert.NotContains(t, out, " error ")
	assert.Contains(t, errs, "[40/40] bank.jsonl si lazy-gophersat #2: satisfied in", "-v prints a line per run")
	assert.NotContains(t, errs, "\r", "no progress bar off a terminal")

	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 1+20)
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	assert.Contains(t, string(svg), "lost-update.jsonl")
	var rep bench.Report
	data, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Len(t, rep.Measurements, 20)
	for _, m := range rep.Measurements {
		assert.Len(t, m.Samples, 2)
		assert.Positive(t, m.PeakRSS, m.History)
	}

	// --from prints a saved report again, without running anything.
	t.Setenv(benchWorkerEnv, "0")
	code, again, errs := runWithBench(t, "bench", "--from", jsonPath, "--ablation", "lazy-gini", "--ablation-counter", "solver_iterations")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, out, again)
	code, _, errs = runWithBench(t, "bench", "--from", jsonPath, "../../testdata/bank.jsonl")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "give no PATH")
	code, _, errs = runWithBench(t, "bench", "--from", csvPath)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "reading a bench report")
}

// TestBenchGenerators benchmarks histories generated in memory: write skew
// under snapshot isolation violates SER but not SI, and a store that loses
// updates violates SI.
func TestBenchGenerators(t *testing.T) {
	t.Setenv(benchWorkerEnv, "1")
	code, out, errs := runWithBench(t, "bench", "--strategy", "veristrong", "--level", "ser,si",
		"gen:write-skew:isolation=snapshot,seed=3", "gen:lost-update:isolation=snapshot,bug=lost-update,txns=20")
	require.Equal(t, 0, code, out+errs)
	assert.Regexp(t, `(?m)^gen:write-skew:isolation=snapshot,seed=3\s+ser\s+veristrong\s+violated\s+400\s`, out)
	assert.Regexp(t, `(?m)^gen:write-skew:isolation=snapshot,seed=3\s+si\s+veristrong\s+satisfied\s`, out)
	assert.Regexp(t, `(?m)^gen:lost-update:isolation=snapshot,bug=lost-update,txns=20\s+si\s+veristrong\s+violated\s+160\s`, out)

	for spec, msg := range map[string]string{
		"gen:nope":                  `unknown generator "nope" (known: append, blindw-rw, general, lost-update, predicate, rubis, rw-register, smallbank, tpcc, twitter, write-skew)`,
		"gen:general:nope=1":        "unknown flag: --nope",
		"gen:general:sessions=x":    `invalid argument "x" for "--sessions"`,
		"gen:write-skew:preset=WH":  "--preset applies to the general workload only",
		"gen:general:isolation=foo": "isolation:",
	} {
		code, _, errs := runWithBench(t, "bench", spec)
		assert.Equal(t, exitBadInput, code, spec)
		assert.Contains(t, errs, msg, spec)
	}
}

func TestBenchCSVToStdout(t *testing.T) {
	t.Setenv(benchWorkerEnv, "1")
	code, out, errs := runWithBench(t, "bench", "--strategy", "lazy-gini", "--csv", "-", "../../testdata/bank.jsonl")
	require.Equal(t, 0, code, errs)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err, "only CSV on standard output")
	require.Len(t, recs, 2)
	assert.Equal(t, "satisfied", recs[1][4])
}

func TestBenchUsageErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"no path":          {"bench"},
		"unknown strategy": {"bench", "--strategy", "nope", "../../testdata/bank.jsonl"},
		"unknown level":    {"bench", "--level", "xx", "../../testdata/bank.jsonl"},
		"bad repeat":       {"bench", "--repeat", "0", "../../testdata/bank.jsonl"},
		"bad plot":         {"bench", "--plot", "x.gif", "../../testdata/bank.jsonl"},
		"missing file":     {"bench", "../../testdata/missing.jsonl"},
		"ablation base":    {"bench", "--strategy", "lazy-gini", "--ablation", "lazy-gophersat", "../../testdata/bank.jsonl"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errs := runWithBench(t, args...)
			assert.Equal(t, exitBadInput, code, errs)
			assert.NotEmpty(t, errs)
		})
	}
}

func TestBenchProgressBarOnlyOnATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	require.Nil(t, newBenchBar(f, 10), "a file is not a terminal")
	require.Nil(t, newBenchBar(&bytes.Buffer{}, 10))
}

func TestBenchScale(t *testing.T) {
	t.Setenv(benchWorkerEnv, "1")
	dir := t.TempDir()
	md, csvPath := filepath.Join(dir, "s.md"), filepath.Join(dir, "s.csv")
	code, out, errs := runWithBench(t, "bench", "--scale", "--scale-sizes", "100,50", "--scale-dir", dir,
		"--level", "ser,rc", "--timeout", "1m", "--max-memory", "2GiB", "--scale-variants", "unique,zipf", "--markdown", md, "--csv", csvPath, "-v")
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "**unique**")
	assert.Contains(t, out, "**zipf**")
	assert.Regexp(t, `(?m)^\| 100 \| [0-9.]+ms \| [0-9.]+m?s \([0-9.]+m?s\) \| [0-9]+MB \|`, out)
	assert.Contains(t, errs, "[8/8] zipf-100 rc - #1: satisfied in", "rc runs once, without a strategy")
	written, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Equal(t, out, string(written))
	for _, f := range []string{"unique-50.jsonl", "unique-100.jsonl", "zipf-50.jsonl", "zipf-100.jsonl"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
	}
	data, err := os.ReadFile(csvPath)
	require.NoError(t, err)
	assert.Contains(t, string(data), "zipf,100,rc,-,satisfied,")

	code, _, errs = runWithBench(t, "bench", "--scale", "--scale-sizes", "75")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "multiple of 50")
	code, _, errs = runWithBench(t, "bench", "--scale", "x.jsonl")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "give no PATH")
}

func TestBenchScaleVariantsAndFrom(t *testing.T) {
	t.Setenv(benchWorkerEnv, "1")
	dir := t.TempDir()
	js := filepath.Join(dir, "s.json")
	code, out, errs := runWithBench(t, "bench", "--scale", "--scale-sizes", "50", "--scale-variants", "zipf,unique-growing", "--scale-dir", dir,
		"--level", "cc", "--json", js)
	require.Equal(t, 0, code, out+errs)
	assert.NotContains(t, out, "**unique**")
	assert.Contains(t, out, "**zipf**")
	assert.Contains(t, out, "**unique-growing**")
	assert.FileExists(t, filepath.Join(dir, "unique-growing-50.jsonl"))
	code, again, errs := runWithBench(t, "bench", "--scale", "--from", js)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, out, again)
	code, _, errs = runWithBench(t, "bench", "--scale", "--scale-variants", "hd")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "not one of unique, zipf, unique-growing, zipf-growing")
}

// Each level runs its own strategies (issue 31: bench --level psi erred on
// every row with SER's): PSI and PC their whole tables, RC once without a
// strategy; a --strategy that does not decide a level asked is refused.
func TestBenchLevelStrategies(t *testing.T) {
	t.Setenv(benchWorkerEnv, "1")
	psi, pc, rc := history.PSI.String(), history.PC.String(), history.RC.String()
	code, out, errs := runWithBench(t, "bench", "--level", psi+","+pc+","+rc, "../../testdata/strong/long-fork.jsonl")
	require.Equal(t, 0, code, out+errs)
	for _, s := range check.StrategyNames(history.PSI) {
		assert.Regexp(t, `(?m)^long-fork\.jsonl\s+psi\s+`+s+`\s+satisfied\s`, out)
	}
	for _, s := range check.StrategyNames(history.PC) {
		assert.Regexp(t, `(?m)^long-fork\.jsonl\s+pc\s+`+s+`\s+violated\s`, out)
	}
	assert.Regexp(t, `(?m)^long-fork\.jsonl\s+rc\s+-\s+satisfied\s`, out)
	assert.NotContains(t, out, "error")
	assert.Len(t, regexp.MustCompile(`(?m)^long-fork\.jsonl\s`).FindAllString(out, -1), 5)

	code, _, errs = runWithBench(t, "bench", "--level", psi, "--strategy", check.StrategyNames(history.SER)[0], "../../testdata/bank.jsonl")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "decides psi")

	// --ablation without --strategy: the levels' whole tables; a level
	// that takes no strategy has no ablation row.
	base := check.StrategyNames(history.SER)[0]
	code, out, errs = runWithBench(t, "bench", "--level", history.SER.String()+","+rc, "--ablation", base, "../../testdata/bank.jsonl")
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, base+" (base) conflicts")
	assert.Regexp(t, `(?m)^bank\.jsonl\s+rc\s+-\s+satisfied\s`, out)
	assert.NotRegexp(t, `(?m)^bank\.jsonl\s+rc\s+-\s+-\s`, out)
}
