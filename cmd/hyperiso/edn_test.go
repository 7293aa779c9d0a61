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
