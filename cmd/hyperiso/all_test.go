package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"olympos.io/encoding/edn"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// up is a level as the text report names it.
func up(l history.Level) string { return strings.ToUpper(l.String()) }

// verdictLine matches l's line of a several-level text report.
func levelLine(l history.Level, v check.Verdict) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(up(l)) + `:\s+` + strings.ToUpper(v.String()) + `\b`)
}

// elleName is l's name among Elle's models, as an EDN keyword.
func elleName(l history.Level) edn.Keyword {
	r, _ := l.Row()
	return edn.Keyword(r.Elle)
}

// testLevels is the several-level JSON report, as a test reads it.
type testLevels struct {
	Levels []struct {
		check.Result
		ImpliedBy string `json:"implied_by"`
	} `json:"levels"`
	Skipped            []skippedLevel     `json:"skipped"`
	StrongestSatisfied []string           `json:"strongest_satisfied"`
	WeakestViolated    []string           `json:"weakest_violated"`
	TimingsMS          map[string]float64 `json:"timings_ms"`
}

func (r testLevels) entry(t *testing.T, l history.Level) (check.Result, string) {
	t.Helper()
	for _, e := range r.Levels {
		if e.Level == l.String() {
			return e.Result, e.ImpliedBy
		}
	}
	t.Fatalf("no level %s in the report", l)
	return check.Result{}, ""
}

// The acceptance test of issue 31: check --level all on PostgreSQL's
// serializability bug names SER violated and SI satisfied, in text, JSON
// and EDN.
func TestCheckAllOnPostgresSerBug(t *testing.T) {
	path := shared.Path(t, "real-bugs", "pg_ser_bug.txt")

	code, out, errs := runCLI(t, "check", "--level", allLevels, path)
	require.Equal(t, exitViolated, code, out+errs)
	require.Regexp(t, levelLine(history.SER, check.Violated), out)
	require.Regexp(t, levelLine(history.SI, check.Satisfied), out)
	require.Contains(t, out, "strongest satisfied: "+up(history.SI)+"\n")
	// The cycle SER and RR both find is named once, under RR, the weaker.
	require.Regexp(t, levelLine(history.RR, check.Violated), out)
	require.Contains(t, out, up(history.RR)+" violated:\n  G2-item (anti-dependency cycle): ")
	require.Regexp(t, `(?m)^`+up(history.StrictSER)+`:\s+VIOLATED\s+implied by `+up(history.SER)+`$`, out,
		"strict-ser, not checked without real time, is violated with SER")
	require.Regexp(t, `(?m)^`+up(history.Mixed)+`:\s+skipped\s+.*declares no level`, out)
	require.Equal(t, 1, strings.Count(out, "G2-item"), "each anomaly named once: %s", out)

	code, out, errs = runCLI(t, "check", "--level", allLevels, "--json", path)
	require.Equal(t, exitViolated, code, errs)
	var rep testLevels
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	ser, by := rep.entry(t, history.SER)
	require.Equal(t, check.Violated, ser.Verdict)
	require.Empty(t, by)
	require.Equal(t, "G2-item", ser.Anomalies[0].Type)
	si, by := rep.entry(t, history.SI)
	require.Equal(t, check.Satisfied, si.Verdict)
	require.Empty(t, by)
	require.NotEmpty(t, si.Witness)
	psi, by := rep.entry(t, history.PSI)
	require.Equal(t, check.Satisfied, psi.Verdict)
	require.Equal(t, history.SI.String(), by)
	require.Equal(t, []string{history.SI.String()}, rep.StrongestSatisfied)
	require.Equal(t, []string{history.RR.String()}, rep.WeakestViolated)
	require.Contains(t, rep.TimingsMS, "read")

	code, out, errs = runCLI(t, "check", "--level", allLevels, "--edn", path)
	require.Equal(t, exitViolated, code, errs)
	var res map[edn.Keyword]any
	require.NoError(t, edn.Unmarshal([]byte(out), &res), out)
	require.Equal(t, false, res["valid?"])
	require.Equal(t, map[any]bool{elleName(history.RR): true}, res["not"])
	require.Equal(t, map[any]bool{elleName(history.SER): true, elleName(history.StrictSER): true}, res["also-not"])
	levels := res["levels"].(map[any]any)
	require.Equal(t, false, levels[elleName(history.SER)])
	require.Equal(t, true, levels[elleName(history.SI)])
	require.Equal(t, map[any]bool{elleName(history.SI): true}, res["strongest-satisfied"])
	require.Equal(t, []any{edn.Keyword("G2-item")}, res["anomaly-types"])
}

// Without --level, check decides every level (README: the default level).
func TestCheckDefaultsToAll(t *testing.T) {
	path := "../../testdata/strong/write-skew.jsonl"
	code, out, errs := runCLI(t, "check", path)
	require.Equal(t, exitViolated, code, errs)
	_, all, _ := runCLI(t, "check", "--level", allLevels, path)
	require.Equal(t, all, out)
	for _, r := range history.Levels {
		require.Regexp(t, `(?m)^`+regexp.QuoteMeta(strings.ToUpper(r.Name))+`:`, out)
	}
}

// A list is decided level by level, reported strongest first, each once.
func TestCheckLevelList(t *testing.T) {
	path := "../../testdata/strong/write-skew.jsonl"
	list := strings.Join([]string{history.RC.String(), history.SER.String(), history.SI.String(), history.SER.String()}, ",")
	code, out, errs := runCLI(t, "check", "--level", list, path)
	require.Equal(t, exitViolated, code, errs)
	lines := regexp.MustCompile(`(?m)^[A-Z-]+:\s+[A-Z]+`).FindAllString(out, -1)
	require.Len(t, lines, 3, out)
	require.Regexp(t, levelLine(history.SER, check.Violated), lines[0])
	require.Regexp(t, levelLine(history.SI, check.Satisfied), lines[1])
	require.Regexp(t, levelLine(history.RC, check.Satisfied), lines[2])
	require.NotContains(t, out, up(history.PSI))

	// Every level of the list satisfied: exit 0.
	code, _, errs = runCLI(t, "check", "--level", history.SI.String()+","+history.RC.String(), path)
	require.Equal(t, exitSatisfied, code, errs)

	code, _, errs = runCLI(t, "check", "--level", history.SER.String()+",nope", path)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--level must be "+allLevels)
	// --strategy goes to the levels whose table holds it, and must fit one.
	psiOnly := check.StrategyNames(history.PSI)[1]
	code, _, errs = runCLI(t, "check", "--level", history.SER.String()+","+history.PSI.String(), "--strategy", psiOnly, path)
	require.Equal(t, exitViolated, code, errs)
	code, _, errs = runCLI(t, "check", "--level", history.SER.String()+","+history.RC.String(), "--strategy", psiOnly, path)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--strategy must be one of")
	// A level asked by name is checked, not skipped: strict-ser without
	// real time is bad input, as alone.
	code, _, errs = runCLI(t, "check", "--level", history.StrictSER.String()+","+history.SER.String(), path)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "needs real-time order")
}

// Verdicts follow by implication: a satisfied level decides every level
// it implies, a violated one every level that implies it; anomalies are
// named once, at the weakest level found to have them.
func TestCheckAllImplications(t *testing.T) {
	code, out, errs := runCLI(t, "check", "--json", "../../testdata/bank.jsonl")
	require.Equal(t, exitSatisfied, code, errs)
	var rep testLevels
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	for _, r := range history.Levels {
		if r.Level == history.StrictSER || r.Level == history.Mixed {
			continue
		}
		res, by := rep.entry(t, r.Level)
		require.Equal(t, check.Satisfied, res.Verdict, r.Name)
		if r.Engine == history.Weak && r.Level != history.CC {
			require.Equal(t, history.CC.String(), by, r.Name)
		} else if r.Level != history.CC && r.Level != history.SER {
			require.Equal(t, history.SER.String(), by, r.Name)
			require.Empty(t, res.Witness, "an implied verdict carries no witness of its own")
		}
	}
	var skipped []string
	for _, s := range rep.Skipped {
		skipped = append(skipped, s.Level)
		require.NotEmpty(t, s.Reason)
	}
	require.ElementsMatch(t, []string{history.StrictSER.String(), history.Mixed.String()}, skipped)
	require.Equal(t, []string{history.SER.String()}, rep.StrongestSatisfied)

	// A thin-air read violates every level: each weak level is checked,
	// the strong ones follow from CC, and the anomaly is named once.
	code, out, errs = runCLI(t, "check", "../../testdata/validation/thin-air.jsonl")
	require.Equal(t, exitViolated, code, errs)
	require.Equal(t, 1, strings.Count(out, "thin-air-read"), out)
	require.Contains(t, out, up(history.RC)+" violated:\n  thin-air-read: T2(s2#0) op 0 read key 1 = 2")
	require.Regexp(t, `(?m)^`+up(history.SER)+`:\s+VIOLATED\s+implied by `+up(history.CC)+`$`, out)
	require.Contains(t, out, "strongest satisfied: none\n")

	// PC and PSI are incomparable: both are the strongest satisfied.
	code, out, errs = runCLI(t, "check", "--json", "--level", allLevels, "../../testdata/strong/long-fork.jsonl")
	require.Equal(t, exitViolated, code, errs)
	rep = testLevels{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, []string{history.PSI.String()}, rep.StrongestSatisfied)
	// RR (no predicate reads: SER) and PC are incomparable.
	require.Equal(t, []string{history.RR.String(), history.PC.String()}, rep.WeakestViolated)
	// The same cycle found at SI and PC (from another transaction) is
	// named once, under PC.
	code, out, errs = runCLI(t, "check", "../../testdata/strong/long-fork.jsonl")
	require.Equal(t, exitViolated, code, errs)
	require.Regexp(t, `(?m)^`+up(history.SI)+`:\s+VIOLATED\s+anomalies as `+up(history.PC)+`$`, out)
	require.Equal(t, 1, strings.Count(out, "G2-item"), out)
	code, out, errs = runCLI(t, "check", "--edn", "../../testdata/strong/long-fork.jsonl")
	require.Equal(t, exitViolated, code, errs)
	var res map[edn.Keyword]any
	require.NoError(t, edn.Unmarshal([]byte(out), &res), out)
	require.Equal(t, map[any]bool{elleName(history.RR): true, elleName(history.PC): true}, res["not"])
	require.Equal(t, map[any]bool{elleName(history.SI): true, elleName(history.SER): true, elleName(history.StrictSER): true}, res["also-not"])
}

// all checks mixed when every transaction has a level, declared or by
// --default-level.
func TestCheckAllMixed(t *testing.T) {
	code, out, errs := runCLI(t, "check", "../../testdata/mixed/long-fork.psi-psi-psi-psi.satisfied.jsonl")
	require.Equal(t, exitViolated, code, errs) // SI and PC are violated
	require.Regexp(t, levelLine(history.Mixed, check.Satisfied), out)
	require.Contains(t, out, "strongest satisfied: "+up(history.PSI)+"\n", "mixed is no level of the order")

	code, out, errs = runCLI(t, "check", "--default-level", history.SI.String(), "../../testdata/bank.jsonl")
	require.Equal(t, exitSatisfied, code, errs)
	require.Regexp(t, levelLine(history.Mixed, check.Satisfied), out)
	code, _, errs = runCLI(t, "check", "--level", history.SER.String(), "--default-level", history.SI.String(), "../../testdata/bank.jsonl")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--default-level goes with --level mixed")
}

// Several files: a report each, then a table of verdicts; the exit status
// is the worst, a file that cannot be read counting as bad input.
func TestCheckSeveralFiles(t *testing.T) {
	bank, skew := "../../testdata/bank.jsonl", "../../testdata/strong/write-skew.jsonl"
	code, out, errs := runCLI(t, "check", "--level", history.SER.String()+","+history.SI.String(), bank, skew)
	require.Equal(t, exitViolated, code, errs)
	require.Regexp(t, `(?m)^file\s+ser\s+si\s+strongest satisfied$`, out)
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(bank)+`\s+satisfied\s+satisfied\s+ser$`, out)
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(skew)+`\s+violated\s+satisfied\s+si$`, out)

	code, out, errs = runCLI(t, "check", "--level", history.SER.String(), bank, bank)
	require.Equal(t, exitSatisfied, code, errs)
	require.Equal(t, 2, strings.Count(out, "SER: SATISFIED"))
	require.Regexp(t, `(?m)^file\s+ser$`, out)

	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	code, out, errs = runCLI(t, "check", "--level", history.SER.String(), skew, missing)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "missing.jsonl")
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(missing)+`\s+error$`, out)
	require.Contains(t, out, "SER: VIOLATED", "the other files are checked")

	code, out, errs = runCLI(t, "check", "--json", bank, skew)
	require.Equal(t, exitViolated, code, errs)
	var all struct {
		Files []struct {
			Source string     `json:"source"`
			Report testLevels `json:"report"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &all), out)
	require.Len(t, all.Files, 2)
	require.Equal(t, []string{history.SI.String()}, all.Files[1].Report.StrongestSatisfied)

	code, out, errs = runCLI(t, "check", "--edn", "--level", history.SER.String(), bank, skew)
	require.Equal(t, exitViolated, code, errs)
	r := edn.NewDecoder(strings.NewReader(out))
	for _, want := range []any{true, false} {
		var m map[edn.Keyword]any
		require.NoError(t, r.Decode(&m))
		require.Equal(t, want, m["valid?"])
		require.NotEmpty(t, m["source"])
	}
	code, _, _ = runCLI(t, "check", "-", "-")
	require.Equal(t, exitBadInput, code)
}

// The text report is quiet: the verdict in one line, each anomaly named
// once, timings and counters only with -v.
func TestQuietTextReport(t *testing.T) {
	path := "../../testdata/strong/write-skew.jsonl"
	code, out, errs := runCLI(t, "check", "--level", history.SER.String(), path)
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "\nSER: VIOLATED\n  G2-item (anti-dependency cycle): a cycle with 2 rw edges;")
	require.Equal(t, 1, strings.Count(out, "G2-item"), out)
	require.NotContains(t, out, "violation:")
	require.NotContains(t, out, "timings:")
	require.NotContains(t, out, "counters:")
	code, out, errs = runCLI(t, "check", "--level", history.SER.String(), "-v", path)
	require.Equal(t, exitViolated, code, errs)
	require.Regexp(t, `(?m)^timings: .*read `, out)
	require.Regexp(t, `(?m)^counters: .*known_edges `, out)

	// Validation findings: the type, the class when it differs, once.
	code, out, _ = runCLI(t, "check", "--level", history.SER.String(), "../../testdata/validation/aborted-read.jsonl")
	require.Equal(t, exitViolated, code)
	require.Contains(t, out, "\n  aborted-read (G1a): T2(s2#0) op 0 read key 1 = 1, written only by aborted transaction(s) (T1(s1#0))\n")
	// A weak level's cycle, and a mixed check's culprit on a line of its own.
	code, out, _ = runCLI(t, "check", "--level", history.CC.String(), "../../testdata/weak/causality-violation.jsonl")
	require.Equal(t, exitViolated, code, out)
	require.Contains(t, out, "\nCC: VIOLATED\n  causality-violation: T1(s1#0) happens before T3(s3#0)")
	require.Equal(t, 1, strings.Count(out, "causality-violation:"), out)
	require.NotContains(t, out, "causality violation", out)
	code, out, _ = runCLI(t, "check", "--level", history.Mixed.String(), "../../testdata/mixed/long-fork.pc-pc-pc-pc.violated.jsonl")
	require.Equal(t, exitViolated, code, out)
	require.Regexp(t, `\n  G2-item \(anti-dependency cycle\): .*\n    T3\(s3#0\) ran at PREFIX CONSISTENCY, so it sees`, out)

	// Reader warnings show with text (standard error).
	dir := t.TempDir()
	warned := filepath.Join(dir, "w.jsonl")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(warned, append(data, "garbage\n"...), 0o644))
	_, _, errs = runCLI(t, "check", "--lenient", warned)
	require.Contains(t, errs, "1 warning(s) reading "+warned)
}

func TestWorseExitStatus(t *testing.T) {
	require.Equal(t, exitViolated, worse(exitUnknown, exitViolated))
	require.Equal(t, exitViolated, worse(exitViolated, exitUnknown))
	require.Equal(t, exitUnknown, worse(exitSatisfied, exitUnknown))
	require.Equal(t, exitBadInput, worse(exitViolated, exitBadInput))
	rep := &levelsReport{Levels: []levelEntry{
		{Result: &check.Result{Level: history.SER.String(), Verdict: check.Unknown}},
		{Result: &check.Result{Level: history.SI.String(), Verdict: check.Satisfied}},
	}}
	require.Equal(t, exitUnknown, rep.exitCode())
	rep.Levels = append(rep.Levels, levelEntry{Result: &check.Result{Level: history.RC.String(), Verdict: check.Violated}})
	require.Equal(t, exitViolated, rep.exitCode())
}

// A deadline leaves the levels not yet decided unknown: exit status 3
// when none is violated.
func TestCheckAllTimeout(t *testing.T) {
	code, out, errs := runCLI(t, "check", "--timeout", "1ns", "../../testdata/bank.jsonl")
	require.Equal(t, exitUnknown, code, out+errs)
	require.Regexp(t, `(?m)^`+up(history.SER)+`:\s+UNKNOWN\s+\(timeout after 1ns during read\)$`, out)
	code, out, errs = runCLI(t, "check", "--timeout", "1ns", "--edn", "../../testdata/bank.jsonl")
	require.Equal(t, exitUnknown, code, errs)
	var res map[edn.Keyword]any
	require.NoError(t, edn.Unmarshal([]byte(out), &res), out)
	require.Equal(t, edn.Keyword("unknown"), res["valid?"])
	require.Contains(t, res["error"], "timeout after 1ns")
}
