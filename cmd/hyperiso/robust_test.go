package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/robust"
)

func TestRobustCommandFigure5(t *testing.T) {
	code, out, errs := runCLI(t, "robust", "../../robust/testdata/smallbank-fig5.json")
	require.Equal(t, exitSatisfied, code, errs)
	require.Contains(t, out, "ROBUST")

	code, out, errs = runCLI(t, "robust", "../../robust/testdata/smallbank-fig5-wc-si.json")
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "NOT ROBUST: 1 instance(s)")
	require.Contains(t, out, "form S4, middle WC(N1,V1)")
	require.Contains(t, out, "Bal(N1) at PC reads Checking[C1].balance that WC(N1,V1) at SI writes (rw)")
	require.Contains(t, out, "WC(N1,V1) at SI reads Savings[C1].balance that TS(N1,V1) at PSI writes (rw)")

	code, out, errs = runCLI(t, "robust", "--json", "../../robust/testdata/smallbank-fig5-wc-si.json")
	require.Equal(t, exitViolated, code, errs)
	var rep robust.RobustReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "not-robust", rep.Verdict)
	require.Equal(t, []string{"WC(N1,V1)"}, rep.Culprits)
	require.Equal(t, "S4", rep.Cycles[0].Form)
	// The cycle closes: each edge starts where the previous one ended.
	e := rep.Cycles[0].Edges
	for i := range e {
		require.Equal(t, e[i].To, e[(i+1)%len(e)].From)
	}
}

func TestRobustAllocateCommand(t *testing.T) {
	code, out, errs := runCLI(t, "allocate", "--list", "../../robust/testdata/smallbank-fig5.json")
	require.Equal(t, exitSatisfied, code, errs)
	require.Contains(t, out, "WC(N1,V1)            SER  A4: reads Savings[C1].balance that TS(N1,V1) writes")
	require.Contains(t, out, "Bal(N1)              PC   A2")

	code, out, errs = runCLI(t, "allocate", "--json", "--generate", "tpcc", "--seed", "3")
	require.Equal(t, exitSatisfied, code, errs)
	var rep robust.AllocationReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Allocation, 1000)
	got := map[string]int{}
	for _, l := range rep.Levels {
		got[l.Level] = l.Count
	}
	require.Equal(t, map[string]int{"psi": 920, "pc": 40, "ra": 40}, got)
}

func TestRobustFromHistory(t *testing.T) {
	code, out, errs := runCLI(t, "robust", "--history", "../../testdata/mixed/causality-violation.cc-cc-cc.violated.jsonl")
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "form S1")
	code, _, errs = runCLI(t, "allocate", "--history", "../../testdata/bank.jsonl")
	require.Equal(t, exitSatisfied, code, errs)
}

func TestRobustBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"level":       {`{"instances":[{"name":"a","reads":["x"],"level":"snapshotty"}]}`, `bad.json:1:41: instance "a": unknown level "snapshotty"`},
		"nokeys":      {"{\"instances\":[\n {\"name\":\"a\"}]}", `bad.json:2:2: instance "a" has no keys`},
		"cycle":       {`{"instances":[{"name":"a","reads":["x"],"after":"b"},{"name":"b","reads":["x"],"after":"a"}]}`, "cycle in session order"},
		"field":       {"{\"instances\":[{\"name\":\"a\",\n\"reads\":[\"x\"],\"reeds\":[]}]}", `bad.json:2:15: unknown field "reeds"`},
		"default":     {`{"instances":[{"name":"a","reads":["x"]}]}`, `instance "a" declares no level`},
		"yaml-level":  {"instances:\n  - name: a\n    reads: [x]\n    level: snapshotty\n", `bad.json:4:5: instance "a": unknown level "snapshotty"`},
		"yaml-nokeys": {"instances:\n  - name: a\n    level: ra\n", `bad.json:2:5: instance "a" has no keys`},
		"yaml-cycle":  {"instances:\n  - {name: a, reads: [x], after: b}\n  - {name: b, reads: [x], after: a}\n", "bad.json:2:27: cycle in session order"},
		"pattern":     {`{"instances":[{"name":"a","reads":["x{"]}]}`, `instance "a": key "x{": { without }`},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.json")
			require.NoError(t, os.WriteFile(path, []byte(c.body), 0o644))
			code, _, errs := runCLI(t, "robust", path)
			require.Equal(t, exitBadInput, code)
			require.Contains(t, errs, c.want)
			require.True(t, strings.HasPrefix(errs, "hyperiso: "), errs)
		})
	}
	code, _, errs := runCLI(t, "robust", "--generate", "nope")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "unknown generator")
	code, _, _ = runCLI(t, "allocate")
	require.Equal(t, exitBadInput, code)
}

func TestRobustCounterexample(t *testing.T) {
	for _, in := range []string{"smallbank-fig5-wc-si.json", "sessions.json"} {
		cex := filepath.Join(t.TempDir(), "cex.jsonl")
		code, out, errs := runCLI(t, "robust", "--counterexample", cex, "../../robust/testdata/"+in)
		require.Equal(t, exitViolated, code, errs)
		require.Contains(t, out, "confirmed: this execution of")
		code, _, errs = runCLI(t, "check", "--level", "mixed", cex)
		require.Equal(t, exitSatisfied, code, errs)
		code, _, errs = runCLI(t, "check", "--level", "ser", cex)
		require.Equal(t, exitViolated, code, errs)
	}
}

func TestRobustExactCommand(t *testing.T) {
	in := "../../robust/testdata/static-false-alarm.json"
	code, out, errs := runCLI(t, "robust", in)
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "not confirmed")
	code, out, errs = runCLI(t, "robust", "--exact", in)
	require.Equal(t, exitSatisfied, code, errs)
	require.Contains(t, out, "exact search: ROBUST after all")

	cex := filepath.Join(t.TempDir(), "cex.jsonl")
	code, out, errs = runCLI(t, "robust", "--exact", "--counterexample", cex, "../../robust/testdata/sessions.json")
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "exact search: NOT ROBUST")

	code, out, errs = runCLI(t, "allocate", "--exact", "--list", "../../robust/testdata/sessions.json")
	require.Equal(t, exitSatisfied, code, errs)
	require.Contains(t, out, "(refined: CC)")
}

// TestRobustExactTimeout: past --timeout the exact search answers nothing
// and the static answer stands (robust: not robust, exit 1; allocate: the
// refined allocation, nothing lowered further).
func TestRobustExactTimeout(t *testing.T) {
	in := "../../robust/testdata/static-false-alarm.json"
	code, out, errs := runCLI(t, "robust", "--exact", "--timeout", "1ns", in)
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "exact search: undecided")
	require.NotContains(t, out, "confirmed: this execution")

	code, out, errs = runCLI(t, "allocate", "--exact", "--timeout", "1ns", "--generate", "smallbank")
	require.Equal(t, exitSatisfied, code, errs)
	require.Contains(t, out, "0 instances lower still")
	code, out, errs = runCLI(t, "allocate", "--exact", "--generate", "smallbank", "--instances", "200")
	require.Equal(t, exitSatisfied, code, errs)
	require.NotContains(t, out, " 0 instances lower still")
}
