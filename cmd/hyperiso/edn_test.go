package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"olympos.io/encoding/edn"
)

// check --edn prints an Elle-style result map that an EDN reader takes:
// :valid? false with the anomaly types, their cycles' steps and the model
// ruled out; true when satisfied.
func TestCheckEDN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skew.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"session":0,"id":1,"ops":[["append",2,5],["append",1,1]]}
{"session":1,"id":2,"ops":[["append",1,2],["r",2,[]]]}
{"session":2,"id":3,"ops":[["r",1,[1,2]]]}
`), 0o644))
	code, out, errs := runCLI(t, "check", "--level", "ser", "--edn", path)
	require.Equal(t, exitViolated, code, errs)
	var res map[edn.Keyword]any
	require.NoError(t, edn.Unmarshal([]byte(out), &res), out)
	require.Equal(t, false, res["valid?"])
	require.Equal(t, []any{edn.Keyword("G-single")}, res["anomaly-types"])
	require.Equal(t, map[any]bool{edn.Keyword("strong-session-serializable"): true}, res["not"])
	single := res["anomalies"].(map[any]any)[edn.Keyword("G-single")].([]any)[0].(map[any]any)
	steps := single[edn.Keyword("steps")].([]any)
	require.Len(t, steps, 2)
	require.Equal(t, edn.Keyword("ww"), steps[0].(map[any]any)[edn.Keyword("type")])

	code, out, errs = runCLI(t, "check", "--level", "rc", "--edn", path)
	require.Equal(t, exitSatisfied, code, errs)
	res = nil
	require.NoError(t, edn.Unmarshal([]byte(out), &res), out)
	require.Equal(t, true, res["valid?"])
	require.Equal(t, edn.Keyword("read-committed"), res["level"])

	code, _, _ = runCLI(t, "check", "--level", "rc", "--edn", "--json", path)
	require.Equal(t, exitBadInput, code, "--edn and --json exclude each other")
}

// Keys and values that are names (EDN keywords, strings, vectors) come out
// as read: in the text report, in --edn steps (as EDN), and through convert.
func TestNamesThroughCLI(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.edn")
	// G1c in completion-only form: each reads the other's write.
	require.NoError(t, os.WriteFile(path, []byte(`{:type :ok, :f :txn, :process 0, :value [[:w :x "one"] [:r [:k 2] :b]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:w [:k 2] :b] [:r :x "one"]], :index 1}
`), 0o644))
	code, out, errs := runCLI(t, "check", "--level", "rc", path)
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, `read key :x = "one"`)
	require.Contains(t, out, `read key [:k 2] = :b`)

	code, out, errs = runCLI(t, "check", "--level", "rc", "--edn", path)
	require.Equal(t, exitViolated, code, errs)
	var res map[edn.Keyword]any
	require.NoError(t, edn.Unmarshal([]byte(out), &res), out)
	g1c := res["anomalies"].(map[any]any)[edn.Keyword("G1c")].([]any)[0].(map[any]any)
	var keys []any
	for _, s := range g1c[edn.Keyword("steps")].([]any) {
		keys = append(keys, s.(map[any]any)[edn.Keyword("key")])
	}
	require.ElementsMatch(t, []any{edn.Keyword("x"), []any{edn.Keyword("k"), int64(2)}}, keys)

	conv := filepath.Join(dir, "h.jsonl")
	code, _, errs = runCLI(t, "convert", "--to", "jsonl", "-o", conv, path)
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(conv)
	require.NoError(t, err)
	require.Contains(t, string(b), `["w",":x","\"one\""]`)
	code, out, errs = runCLI(t, "check", "--level", "rc", conv)
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, `read key :x = "one"`)

	code, _, errs = runCLI(t, "convert", "--to", "dbcop", "-o", filepath.Join(dir, "h.bincode"), path)
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "keys that are names, not integers")
}
