package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"olympos.io/encoding/edn"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// elleModelOf is the elle-cli --model of an Elle history: rw-register for
// the files that say so in their name, list-append for the others (the
// shared datasets' and testdata/elle's).
func elleModelOf(path string) string {
	if strings.Contains(filepath.Base(path), "rw-register") {
		return "rw-register"
	}
	return "list-append"
}

// elleHistories are the Elle histories of the shared datasets (the
// acceptance test of issue 31) or of testdata/elle.
func elleHistories(t *testing.T, sharedSet bool) []string {
	t.Helper()
	dir := "../../testdata/elle"
	if sharedSet {
		dir = shared.Path(t, "elle")
	}
	var paths []string
	for _, ext := range []string{"*.edn", "*.json"} {
		m, err := filepath.Glob(filepath.Join(dir, ext))
		require.NoError(t, err)
		paths = append(paths, m...)
	}
	require.NotEmpty(t, paths, "no Elle history in %s", dir)
	return paths
}

// elleCLIJSON runs hyperiso elle-cli with --output json and returns its
// exit status and the result map.
func elleCLIJSON(t *testing.T, args ...string) (int, map[string]any) {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{elleCLIName, "--output", "json"}, args...)...)
	require.Contains(t, []int{elleExitValid, elleExitInvalid}, code, "elle-cli %v: %s", args, errs)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	return code, m
}

// The acceptance test of issue 31's elle-cli mode: on every Elle history,
// elle-cli with one consistency model gives the verdict check gives at the
// level whose Elle name it is, and with elle-cli's defaults (strict
// serializable, and G0) the verdict, :not and :also-not of check --level
// all --edn.
func TestElleCLIVerdictsMatchCheck(t *testing.T) {
	for _, set := range []struct {
		name   string
		shared bool
	}{{"shared", true}, {"testdata", false}} {
		t.Run(set.name, func(t *testing.T) {
			for _, path := range elleHistories(t, set.shared) {
				t.Run(filepath.Base(path), func(t *testing.T) {
					model := elleModelOf(path)
					for _, r := range elleModelRows() {
						code, res := elleCLIJSON(t, "-m", model, "-c", r.Elle, "-a", "", path)
						ccode, out, errs := runCLI(t, "check", "--level", r.Name, "--json", path)
						require.Contains(t, []int{exitSatisfied, exitViolated}, ccode, errs)
						var cres check.Result
						require.NoError(t, json.Unmarshal([]byte(out), &cres))
						want := cres.Verdict == check.Satisfied
						require.Equal(t, want, res["valid?"], "%s at %s: check says %s", path, r.Elle, cres.Verdict)
						require.Equal(t, ccode, code, "exit status at %s", r.Elle)
						if !want {
							// The level's own model is among those ruled out.
							require.Contains(t, append(jsonList(t, res["not"]), jsonList(t, res["also-not"])...), r.Elle)
						}
					}

					// elle-cli's defaults against check's default, --level all.
					code, res := elleCLIJSON(t, "-m", model, path)
					ccode, out, errs := runCLI(t, "check", "--edn", path)
					require.Contains(t, []int{exitSatisfied, exitViolated}, ccode, errs)
					require.Equal(t, ccode, code)
					var all map[edn.Keyword]any
					require.NoError(t, edn.UnmarshalString(out, &all), out)
					require.Equal(t, all[edn.Keyword("valid?")], res["valid?"])
					if res["valid?"] == false {
						require.Equal(t, ednSet(all[edn.Keyword("not")]), jsonList(t, res["not"]), ":not")
						require.Equal(t, ednSet(all[edn.Keyword("also-not")]), jsonList(t, res["also-not"]), ":also-not")
						require.Equal(t, ednList(all[edn.Keyword("anomaly-types")]), jsonList(t, res["anomaly-types"]), ":anomaly-types")
					}

					// The text line, the binary named elle-cli, and the
					// model's names before elle-cli 0.1.3.
					code, text, _ := runCLI(t, elleCLIArgs([]string{"/usr/local/bin/elle-cli", "-m", "elle-" + model, path})...)
					require.Equal(t, ccode, code)
					require.Equal(t, path+" \t "+map[bool]string{true: "true", false: "false"}[res["valid?"] == true]+"\n", text)
				})
			}
		})
	}
}

// jsonList is a JSON array of strings, sorted.
func jsonList(t *testing.T, v any) []string {
	t.Helper()
	xs, ok := v.([]any)
	require.True(t, ok, "%v is not an array", v)
	out := []string{}
	for _, x := range xs {
		s, ok := x.(string)
		require.True(t, ok, "%v is not a string", x)
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// ednSet is an EDN set of keywords (nil: none), as sorted names.
func ednSet(v any) []string {
	out := []string{}
	if m, ok := v.(map[any]bool); ok {
		for k := range m {
			out = append(out, string(k.(edn.Keyword)))
		}
	}
	sort.Strings(out)
	return out
}

// ednList is an EDN vector of keywords, as sorted names.
func ednList(v any) []string {
	out := []string{}
	xs, _ := v.([]any)
	for _, x := range xs {
		out = append(out, string(x.(edn.Keyword)))
	}
	sort.Strings(out)
	return out
}

// elleCLIShape is the shape of elle-cli's result map, as elle-cli
// documents it: its README (ligurio/elle-cli: "--verbose" prints the
// analysis, else the file, a tab and true, false or :unknown), the maps its
// tests expect (test/test-data/*-result.json: {"valid?": true} alone for a
// valid history; otherwise "valid?" false or "unknown", "anomaly-types" a
// sorted array of names, "anomalies" an object from each of those names to
// its anomalies, "not" and "also-not" arrays of model names, empty or not),
// and Elle's elle.txn/result-map and elle.consistency-model/friendly-boundary
// which build it. The kinds are JSON's: bool, string, array, object.
var elleCLIShape = struct {
	valid, invalid map[string][]string
}{
	valid: map[string][]string{"valid?": {"bool"}},
	invalid: map[string][]string{
		"valid?":        {"bool", "string"},
		"anomaly-types": {"array"},
		"anomalies":     {"object"},
		"not":           {"array"},
		"also-not":      {"array"},
	},
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case float64:
		return "number"
	}
	return "null"
}

// requireElleShape checks m against elle-cli's documented result map:
// the keys and the kind of each value, the anomaly types those of the
// anomalies, each model one of Elle's names that hyperiso checks.
// hyperiso's "error" (why :unknown) is the one key it adds.
func requireElleShape(t *testing.T, m map[string]any) {
	t.Helper()
	shape := elleCLIShape.invalid
	if m["valid?"] == true {
		shape = elleCLIShape.valid
	}
	for k, v := range m {
		if k == "error" && m["valid?"] == "unknown" {
			require.IsType(t, "", v)
			continue
		}
		kinds, ok := shape[k]
		require.True(t, ok, "key %q is not in elle-cli's result map: %v", k, m)
		require.Contains(t, kinds, jsonKind(v), "key %q", k)
	}
	for k := range shape {
		require.Contains(t, m, k, "elle-cli's result map has %q", k)
	}
	if m["valid?"] == true {
		return
	}
	if s, ok := m["valid?"].(string); ok {
		require.Equal(t, "unknown", s)
	} else {
		require.Equal(t, false, m["valid?"])
	}
	types := jsonList(t, m["anomaly-types"])
	require.True(t, slices.IsSorted(types))
	var keys []string
	for k, v := range m["anomalies"].(map[string]any) {
		keys = append(keys, k)
		if v == true {
			continue // Elle's empty-transaction-graph
		}
		as, ok := v.([]any)
		require.True(t, ok, "anomalies of %s: %v", k, v)
		require.NotEmpty(t, as)
		for _, a := range as {
			require.Equal(t, k, a.(map[string]any)["type"], "each anomaly names its type")
		}
	}
	sort.Strings(keys)
	require.Equal(t, types, keys, "anomaly-types are the keys of anomalies")
	var elleNames []string
	for _, r := range elleModelRows() {
		elleNames = append(elleNames, r.Elle)
	}
	for _, k := range []string{"not", "also-not"} {
		for _, n := range jsonList(t, m[k]) {
			require.Contains(t, elleNames, n, "%s names Elle's models", k)
		}
	}
}

// TestElleCLIOutputShape: what elle-cli mode prints has the shape elle-cli
// documents, for a valid, an invalid and an :unknown history, as a line,
// as JSON (--output json and -v) and as EDN, with the same keys.
func TestElleCLIOutputShape(t *testing.T) {
	dir := t.TempDir()
	valid := filepath.Join(dir, "valid.json")
	require.NoError(t, os.WriteFile(valid, []byte(`[
{"index": 0, "type": "invoke", "process": 0, "value": [["append", 1, 1]]},
{"index": 1, "type": "ok", "process": 0, "value": [["append", 1, 1]]},
{"index": 2, "type": "invoke", "process": 1, "value": [["r", 1, null]]},
{"index": 3, "type": "ok", "process": 1, "value": [["r", 1, [1]]]}
]`), 0o644))
	empty := filepath.Join(dir, "empty.edn")
	require.NoError(t, os.WriteFile(empty, []byte("{:index 0 :type :invoke :process 0 :value [[:append 1 1]]}\n{:index 1 :type :fail :process 0 :value [[:append 1 1]]}\n"), 0o644))
	invalid := "../../testdata/elle/realtime-stale-read.edn" // strict serializability broken

	cases := []struct {
		path, valid string
		code        int
	}{{valid, "true", elleExitValid}, {invalid, "false", elleExitInvalid}, {empty, ":unknown", elleExitValid}}
	line := regexp.MustCompile(`^(.*) \t (true|false|:unknown)\n$`)
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			code, out, errs := runCLI(t, elleCLIName, "-m", "list-append", c.path)
			require.Equal(t, c.code, code, errs)
			m := line.FindStringSubmatch(out)
			require.NotNil(t, m, "elle-cli's line: %q", out)
			require.Equal(t, c.path, m[1])
			require.Equal(t, c.valid, m[2])

			for _, flag := range []string{"--output=json", "-v", "--verbose"} {
				code, out, errs = runCLI(t, elleCLIName, "-m", "list-append", flag, c.path)
				require.Equal(t, c.code, code, errs)
				var res map[string]any
				require.NoError(t, json.Unmarshal([]byte(out), &res), out)
				requireElleShape(t, res)
			}
			var res map[string]any
			_, out, _ = runCLI(t, elleCLIName, "-m", "list-append", "-v", c.path)
			require.NoError(t, json.Unmarshal([]byte(out), &res))

			// EDN: the same keys, as keywords; sets for the models.
			code, out, errs = runCLI(t, elleCLIName, "-m", "list-append", "--output", "edn", c.path)
			require.Equal(t, c.code, code, errs)
			var em map[edn.Keyword]any
			require.NoError(t, edn.UnmarshalString(out, &em), out)
			var ekeys, jkeys []string
			for k := range em {
				ekeys = append(ekeys, string(k))
			}
			for k := range res {
				jkeys = append(jkeys, k)
			}
			sort.Strings(ekeys)
			sort.Strings(jkeys)
			require.Equal(t, jkeys, ekeys)
			switch c.valid {
			case "true":
				require.Equal(t, true, em["valid?"])
			case "false":
				require.Equal(t, false, em["valid?"])
			default:
				require.Equal(t, edn.Keyword("unknown"), em["valid?"])
			}
			if c.valid != "true" {
				require.IsType(t, map[any]bool{}, em["not"], ":not is a set")
				require.IsType(t, map[any]bool{}, em["also-not"], ":also-not is a set")
				require.Equal(t, jsonList(t, res["not"]), ednSet(em["not"]))
				require.Equal(t, jsonList(t, res["anomaly-types"]), ednList(em["anomaly-types"]))
			}
		})
	}

	// The JSON syntax, forced or recognised (as elle-cli, --format is
	// every file's); several files, one line each.
	code, out, errs := runCLI(t, elleCLIName, "-m", "list-append", "-f", "json", valid)
	require.Equal(t, elleExitValid, code, errs)
	require.Equal(t, valid+" \t true\n", out)
	code, out, errs = runCLI(t, elleCLIName, "-m", "list-append", valid, invalid, empty)
	require.Equal(t, elleExitInvalid, code, errs)
	require.Equal(t, valid+" \t true\n"+invalid+" \t false\n"+empty+" \t :unknown\n", out)
	// A file that cannot be read stops the run, as elle-cli's exception:
	// the files before it were reported.
	code, out, _ = runCLI(t, elleCLIName, "-m", "list-append", "-f", "edn", valid, invalid)
	require.Equal(t, elleExitCrash, code)
	require.Empty(t, out)
}

// TestElleCLIUsage: elle-cli's usage errors exit 1 with a message that
// says what hyperiso takes; a file that cannot be read or checked exits
// 255; without --model the usage is printed and the status is 0.
func TestElleCLIUsage(t *testing.T) {
	path := "../../testdata/elle/realtime-stale-read.edn"
	models := strings.Join(func() []string {
		var out []string
		for _, r := range elleModelRows() {
			out = append(out, r.Elle)
		}
		return out
	}(), ", ")
	ser, _ := history.SER.Row()
	// Without :index or :time: no real time.
	untimed := filepath.Join(t.TempDir(), "untimed.edn")
	require.NoError(t, os.WriteFile(untimed, []byte("{:type :invoke :process 0 :value [[:append 1 1]]}\n{:type :ok :process 0 :value [[:append 1 1]]}\n"), 0o644))
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unknown model", []string{"-m", "list-append", "-c", "bogus", path}, elleExitUsage, []string{`unknown consistency model "bogus"`, models}},
		{"model hyperiso lacks", []string{"-m", "list-append", "-c", "cursor-stability", path}, elleExitUsage, []string{"hyperiso has no model cursor-stability", models}},
		{"a model hyperiso lacks in a list", []string{"-m", "list-append", "-c", "strong-session-serializable,monotonic-view", path}, elleExitUsage, []string{"hyperiso has no model monotonic-view"}},
		{"Elle's serializable", []string{"-m", "list-append", "-c", "serializable", path}, elleExitUsage, []string{"hyperiso has no model serializable among Elle's", "--consistency-models " + ser.Elle}},
		{"mixed", []string{"-m", "list-append", "-c", history.Mixed.String(), path}, elleExitUsage, []string{"unknown consistency model", models}},
		{"checker hyperiso lacks", []string{"-m", "bank", path}, elleExitUsage, []string{"list-append or rw-register", `"bank"`}},
		{"format", []string{"-m", "list-append", "-f", "yaml", path}, elleExitUsage, []string{"--format must be one of edn, json"}},
		{"output", []string{"-m", "list-append", "--output", "html", path}, elleExitUsage, []string{"--output must be one of text, json, edn"}},
		{"anomaly", []string{"-m", "list-append", "-a", "G-nonadjacent", path}, elleExitUsage, []string{`which level forbids "G-nonadjacent"`, history.G2Item}},
		{"unknown flag", []string{"-m", "list-append", "--bogus", path}, elleExitUsage, []string{"unknown flag: --bogus", "Usage:"}},
		{"not a number", []string{"-m", "list-append", "-s", "soon", path}, elleExitUsage, []string{"--cycle-search-timeout"}},
		{"no file", []string{"-m", "list-append", filepath.Join(t.TempDir(), "none.edn")}, elleExitCrash, []string{"no such file"}},
		{"wrong workload", []string{"-m", "rw-register", path}, elleExitCrash, []string{":append in a rw-register history"}},
		{"strict-ser without real time", []string{"-m", "list-append", "-c", rowOf(history.StrictSER).Elle, untimed}, elleExitCrash, []string{"needs real-time order"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{elleCLIName}, c.args...)...)
			require.Equal(t, c.code, code, "stdout %q stderr %q", out, errs)
			require.Empty(t, out)
			for _, w := range c.want {
				require.Contains(t, errs, w)
			}
		})
	}

	// No --model: elle-cli's usage, exit 0; as the binary's name too.
	code, out, _ := runCLI(t, elleCLIArgs([]string{"elle-cli"})...)
	require.Equal(t, 0, code)
	require.Contains(t, out, "Usage:")
	require.Contains(t, out, "--consistency-models")
	require.Equal(t, []string{"check", "x"}, elleCLIArgs([]string{"/usr/bin/hyperiso", "check", "x"}))
	require.Equal(t, []string{elleCLIName, "-m", "x"}, elleCLIArgs([]string{"/opt/elle-cli.exe", "-m", "x"}))

	// elle-cli's default model on a history without real time: strict
	// serializability is not checked, as check's default, and it says so.
	code, out, errs := runCLI(t, elleCLIName, "-m", "list-append", untimed)
	require.Equal(t, elleExitValid, code, errs)
	require.Equal(t, untimed+" \t true\n", out)
	require.Contains(t, errs, rowOf(history.StrictSER).Elle+" not checked")

	// Plots are not written, and it says so; the verdict stands.
	code, out, errs = runCLI(t, elleCLIName, "-m", "list-append", "-d", t.TempDir(), "-p", "png", "-t", "10", "-b", "1", "-s", "5", path)
	require.Equal(t, elleExitInvalid, code)
	require.Equal(t, path+" \t false\n", out)
	require.Contains(t, errs, "writes no plots")

	// Empty models and anomalies ask nothing: valid, as elle-cli.
	code, out, _ = runCLI(t, elleCLIName, "-m", "list-append", "-c", "", "-a", "", path)
	require.Equal(t, elleExitValid, code)
	require.Equal(t, path+" \t true\n", out)

	// An anomaly class is checked at the weakest level that forbids it:
	// G2-item at SER, which this history satisfies; Elle's synonym of
	// strict serializability does not.
	code, _, _ = runCLI(t, elleCLIName, "-m", "list-append", "-c", "", "-a", history.G2Item+","+history.G0, path)
	require.Equal(t, elleExitValid, code)
	code, _, _ = runCLI(t, elleCLIName, "-m", "list-append", "-c", "strong-serializable", path)
	require.Equal(t, elleExitInvalid, code)

	code, out, _ = runCLI(t, elleCLIName, "--version")
	require.Equal(t, 0, code)
	require.Contains(t, out, "hyperiso")
}

// TestElleCLIModelNames: the names of Elle's models that hyperiso lacks,
// and Elle's other names of its own, are none of the level table's
// (names, aliases, Elle column): the table decides first, and a level's
// name is never hard-coded.
func TestElleCLIModelNames(t *testing.T) {
	taken := func(n string) bool {
		if _, ok := history.ParseLevel(n); ok {
			return true
		}
		return slices.ContainsFunc(history.Levels, func(r history.LevelRow) bool { return r.Elle == n })
	}
	for _, n := range elleOnlyModels {
		require.False(t, taken(n), n)
		_, err := elleModelLevel(n)
		require.ErrorContains(t, err, "hyperiso has no model "+n)
	}
	for n, l := range elleSynonyms {
		require.False(t, taken(n), n)
		got, err := elleModelLevel(n)
		require.NoError(t, err)
		require.Equal(t, l, got)
	}
	for _, r := range elleModelRows() {
		got, err := elleModelLevel(r.Elle)
		require.NoError(t, err)
		require.Equal(t, r.Level, got)
	}
}
