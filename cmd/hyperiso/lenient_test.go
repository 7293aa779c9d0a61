package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestLenientVerdictSaysWhatWasDropped: a history that violates SER, and
// the same with the violating transaction or operation malformed. Strict
// reading refuses the malformed one; lenient reading drops that part and
// finds no violation, and the verdict line, the --json report and the
// explain and stats output say what was dropped.
func TestLenientVerdictSaysWhatWasDropped(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, clean, malformed string
		dropped                history.Dropped
		note                   string
	}{
		{"lost-update.jsonl",
			`{"hyperiso": 1, "init": "zero"}` + "\n" + `{"session": 1, "id": 1, "ops": [["r", 1, 0], ["w", 1, 1]]}` + "\n" + `{"session": 2, "id": 2, "ops": [["r", 1, 0], ["w", 1, 2]]}` + "\n",
			`{"hyperiso": 1, "init": "zero"}` + "\n" + `{"session": 1, "id": 1, "ops": [["r", 1, 0], ["w", 1, 1]]}` + "\n" + `{"session": 2, "id": 1, "ops": [["r", 1, 0], ["w", 1, 2]]}` + "\n",
			history.Dropped{Txns: 1, Ops: 2}, "1 transaction and 2 operations"},
		{"lost-update-garbled.jsonl",
			`{"hyperiso": 1, "init": "zero"}` + "\n" + `{"session": 1, "id": 1, "ops": [["r", 1, 0], ["w", 1, 1]]}` + "\n" + `{"session": 2, "id": 2, "ops": [["r", 1, 0], ["w", 1, 2]]}` + "\n",
			`{"hyperiso": 1, "init": "zero"}` + "\n" + `{"session": 1, "id": 1, "ops": [["r", 1, 0], ["w", 1, 1]]}` + "\n" + `{"session": 2, "id": 2, "ops": [["r", 1, 0], ["w", 1, 2]]` + "\n",
			history.Dropped{Other: 1}, "1 other input item"},
		{"lost-update.txt",
			"r(1,0,1,1)\nw(1,1,1,1)\nr(1,0,2,2)\nw(1,2,2,2)\n",
			"r(1,0,1,1)\nw(1,1,1,1)\nr(1,0,2,2)\nw(1,2,2,2)x\n",
			history.Dropped{Ops: 1}, "1 operation"},
		{"lost-update.awdit",
			"w 1 0\n=\nr 1 0\nw 1 1\n=\nr 1 0\nw 1 2\n",
			"w 1 0\n=\nr 1 0\nw 1 1\n=\nr 1 0\nw 1 two\n",
			history.Dropped{Ops: 1}, "1 operation"},
		{"write-skew.edn",
			`{:type :invoke, :f :txn, :value [[:append 1 1] [:r 2 nil]], :process 0, :index 0}
{:type :invoke, :f :txn, :value [[:append 2 1] [:r 1 nil]], :process 1, :index 1}
{:type :ok, :f :txn, :value [[:append 1 1] [:r 2 nil]], :process 0, :index 2}
{:type :ok, :f :txn, :value [[:append 2 1] [:r 1 nil]], :process 1, :index 3}
`,
			`{:type :invoke, :f :txn, :value [[:append 1 1] [:r 2 nil]], :process 0, :index 0}
{:type :invoke, :f :txn, :value [[:append 2 1] [:r 1 nil]], :process 1, :index 1}
{:type :ok, :f :txn, :value [[:append 1 1] [:r 2 nil]], :process 0, :index 2}
{:type :ok, :f :txn, :value [[:append 2 1] [:r 1 :bogus]], :process 1, :index 3}
`,
			history.Dropped{Ops: 1}, "1 operation"},
	} {
		clean, bad := filepath.Join(dir, "clean-"+c.name), filepath.Join(dir, c.name)
		require.NoError(t, os.WriteFile(clean, []byte(c.clean), 0o644))
		require.NoError(t, os.WriteFile(bad, []byte(c.malformed), 0o644))
		code, out, errs := runCLI(t, "check", "--level", "ser", clean)
		require.Equal(t, exitViolated, code, "%s: %s%s", c.name, out, errs)
		require.NotContains(t, out, "lenient")
		code, _, _ = runCLI(t, "check", "--level", "ser", bad)
		require.Equal(t, exitBadInput, code, c.name)

		note := "lenient reading dropped " + c.note + "; see warnings"
		code, out, errs = runCLI(t, "check", "--level", "ser", "--lenient", bad)
		require.Equal(t, exitSatisfied, code, "%s: %s%s", c.name, out, errs)
		require.Contains(t, out, "\nSER: SATISFIED ("+note+")\n", c.name)
		require.Contains(t, errs, bad+": "+note, c.name)

		code, out, _ = runCLI(t, "check", "--level", "ser", "--lenient", "--json", bad)
		require.Equal(t, exitSatisfied, code)
		var res struct {
			Verdict string           `json:"verdict"`
			Dropped *history.Dropped `json:"dropped"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.Equal(t, "satisfied", res.Verdict)
		require.NotNil(t, res.Dropped, c.name)
		require.Equal(t, c.dropped, *res.Dropped, c.name)

		code, out, errs = runCLI(t, "explain", "--level", "ser", "--lenient", bad)
		require.Equal(t, exitSatisfied, code, "%s: %s%s", c.name, out, errs)
		require.Contains(t, errs, bad+": "+note, c.name)
		code, out, _ = runCLI(t, "explain", "--level", "ser", "--lenient", "--json", bad)
		require.Equal(t, exitSatisfied, code)
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.Equal(t, c.dropped, *res.Dropped, c.name)

		_, out, _ = runCLI(t, "stats", "--lenient", bad)
		require.Contains(t, out, "lenient drops       "+c.note+"\n", c.name)
		_, out, _ = runCLI(t, "stats", "--lenient", "--json", bad)
		require.True(t, strings.Contains(out, `"dropped": {`), out)
		_, _, errs = runCLI(t, "convert", "--lenient", bad)
		require.Contains(t, errs, bad+": "+note, c.name)

		// Nothing dropped, nothing said.
		code, out, _ = runCLI(t, "check", "--level", "ser", "--lenient", "--json", clean)
		require.Equal(t, exitViolated, code)
		require.NotContains(t, out, `"dropped"`)
	}

	// A violation that survives lenient reading: explain's exit message
	// says what was dropped too.
	path := filepath.Join(dir, "lost-update-and-garbage.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"hyperiso": 1, "init": "zero"}
{"session": 1, "id": 1, "ops": [["r", 1, 0], ["w", 1, 1]]}
{"session": 2, "id": 2, "ops": [["r", 1, 0], ["w", 1, 2]]}
garbage
`), 0o644))
	code, out, errs := runCLI(t, "check", "--level", "ser", "--lenient", path)
	require.Equal(t, exitViolated, code, out+errs)
	require.Contains(t, out, "\nSER: VIOLATED (lenient reading dropped 1 other input item; see warnings)\n")
	code, out, errs = runCLI(t, "explain", "--level", "ser", "--lenient", path)
	require.Equal(t, exitViolated, code, out+errs)
	require.Contains(t, errs, "SER violated: lost-update, minimal counterexample of 2 transaction(s) (lenient reading dropped 1 other input item; see warnings)")
}
