package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"olympos.io/encoding/edn"

	"github.com/hyperiso/hyperiso/history"
)

// elleBoundaryCase is one history of Elle's tests, what Elle says it rules
// out, and what hyperiso says (README "How :not and :also-not compare with
// Elle's").
type elleBoundaryCase struct {
	// name is the test of jepsen-io/elle that has the history: a testing
	// block of test/elle/list_append_test.clj (whose result maps drop
	// :also-not) or of friendly-boundary-test in
	// test/elle/consistency_model_test.clj.
	name string
	// history is the list-append history in Jepsen EDN, keys x=1, y=2.
	// Elle's tests run every transaction on process 0, one after another;
	// Elle's plain models ignore both, but every hyperiso level orders a
	// process's transactions and strict-ser follows real time, so here
	// each transaction has a process of its own and no time, except in
	// the rows about process or real-time order, which keep Elle's.
	history string
	// elleNot is Elle's :not as its test expects it, in Elle's names.
	elleNot []string
	// elleRuledOut are those of hyperiso's models (the level table's Elle
	// column) that Elle's :not or :also-not name, in Elle's spelling
	// (strong-serializable for PL-SS): Elle's friendly-boundary of the
	// anomalies its test reports, through the model and anomaly graphs of
	// src/elle/consistency_model.clj.
	elleRuledOut []string
	// not and alsoNot are hyperiso's.
	not, alsoNot []string
	// differs names each of hyperiso's models that hyperiso rules out and
	// Elle does not, and why (on these histories Elle never rules out one
	// that hyperiso does not).
	differs map[string]string
}

// Why hyperiso's models and Elle's part on a history.
const (
	diffPSI = "hyperiso's PSI forbids every cycle with at most one rw edge (Cerone and Gotsman); Elle's parallel-snapshot-isolation adds only internal, G1a and lost updates to causal, so no G-single rules it out"
	diffInt = "hyperiso's RC, and RR above it, hold a transaction's reads to its own writes; Elle's read-committed (PL-2) and repeatable-read (PL-2.99) say nothing of reads inside one transaction, and its internal check starts at read-atomic"
	diffPC  = "a long fork breaks prefix consistency (no one order has both readers' snapshots as prefixes); Elle's prefix has no cycle check of its own"
	diffSes = "every hyperiso level orders a process's transactions; Elle has strong-session variants only of SI, SER, RC and RU"
)

// elleBoundaryCases are Elle's test histories whose :not and :also-not
// hyperiso's are compared with.
var elleBoundaryCases = []elleBoundaryCase{
	{
		name: `list_append_test checker-test "G0"`,
		history: `{:type :ok, :process 0, :value [[:append 1 1] [:append 2 1]]}
{:type :ok, :process 1, :value [[:append 1 2] [:append 2 2]]}
{:type :ok, :process 2, :value [[:r 1 [1 2]] [:r 2 [2 1]]]}`,
		elleNot:      []string{"read-uncommitted"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read", "strong-session-snapshot-isolation", "parallel-snapshot-isolation", "prefix", "causal-cerone", "read-atomic", "read-committed"},
		not:          []string{"read-committed"},
		alsoNot:      []string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
	},
	{
		name: `list_append_test checker-test "G1a"; friendly-boundary-test "G1a"`,
		history: `{:type :fail, :process 0, :value [[:append 1 1]]}
{:type :ok, :process 1, :value [[:r 1 [1]]]}`,
		elleNot:      []string{"read-committed"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read", "strong-session-snapshot-isolation", "parallel-snapshot-isolation", "prefix", "causal-cerone", "read-atomic", "read-committed"},
		not:          []string{"read-committed"},
		alsoNot:      []string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
	},
	{
		name: `list_append_test checker-test "G1b"`,
		history: `{:type :ok, :process 0, :value [[:append 1 1] [:append 1 2]]}
{:type :ok, :process 1, :value [[:r 1 [1]]]}`,
		elleNot:      []string{"read-committed"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read", "strong-session-snapshot-isolation", "parallel-snapshot-isolation", "prefix", "causal-cerone", "read-atomic", "read-committed"},
		not:          []string{"read-committed"},
		alsoNot:      []string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
	},
	{
		name: `list_append_test checker-test "G1c"`,
		history: `{:type :ok, :process 0, :value [[:append 1 1] [:r 2 [1]]]}
{:type :ok, :process 1, :value [[:append 1 2] [:append 2 1]]}
{:type :ok, :process 2, :value [[:r 1 [1 2]] [:r 2 [1]]]}`,
		elleNot:      []string{"read-committed"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read", "strong-session-snapshot-isolation", "parallel-snapshot-isolation", "prefix", "causal-cerone", "read-atomic", "read-committed"},
		not:          []string{"read-committed"},
		alsoNot:      []string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
	},
	{
		// Elle reports G-single-item: T2 missed T1's append to y, yet
		// appended to x after T1.
		name: `list_append_test checker-test "G-single"`,
		history: `{:type :ok, :process 0, :value [[:append 1 1] [:append 2 1]]}
{:type :ok, :process 1, :value [[:append 1 2] [:r 2 nil]]}
{:type :ok, :process 2, :value [[:r 1 [1 2]]]}`,
		elleNot:      []string{"consistent-view", "repeatable-read"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read", "strong-session-snapshot-isolation"},
		not:          []string{"parallel-snapshot-isolation", "repeatable-read"},
		alsoNot:      []string{"strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
		differs:      map[string]string{"parallel-snapshot-isolation": diffPSI},
	},
	{
		name: `list_append_test checker-test "G2"`,
		history: `{:type :ok, :process 0, :value [[:append 1 1] [:r 2 nil]]}
{:type :ok, :process 1, :value [[:append 2 1] [:r 1 nil]]}`,
		elleNot:      []string{"repeatable-read"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read"},
		not:          []string{"repeatable-read"},
		alsoNot:      []string{"strict-serializable", "strong-session-serializable"},
	},
	{
		// A long fork: T2 saw T1 but not T3, T4 saw T3 but not T1.
		name: `list_append_test G-nonadjacent-test`,
		history: `{:type :ok, :process 0, :value [[:append 1 1]]}
{:type :ok, :process 1, :value [[:r 1 [1]] [:r 2 nil]]}
{:type :ok, :process 2, :value [[:append 2 1]]}
{:type :ok, :process 3, :value [[:r 2 [1]] [:r 1 nil]]}`,
		elleNot:      []string{"snapshot-isolation", "repeatable-read"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read", "strong-session-snapshot-isolation"},
		not:          []string{"prefix", "repeatable-read"},
		alsoNot:      []string{"strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
		differs:      map[string]string{"prefix": diffPC},
	},
	{
		name: `list_append_test lost-update-test`,
		history: `{:type :ok, :process 0, :value [[:append 1 0]]}
{:type :ok, :process 1, :value [[:r 1 [0]] [:append 1 1]]}
{:type :ok, :process 2, :value [[:r 1 [0]] [:append 1 2]]}`,
		elleNot:      []string{"update-atomic", "cursor-stability"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "repeatable-read", "strong-session-snapshot-isolation", "parallel-snapshot-isolation"},
		not:          []string{"parallel-snapshot-isolation", "repeatable-read"},
		alsoNot:      []string{"strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
	},
	{
		// A read that misses the transaction's own append (as
		// list_append_test internal-cases-test "append-read").
		name:         `consistency_model_test friendly-boundary-test "internal"`,
		history:      `{:type :ok, :process 0, :value [[:append 1 3] [:r 1 []]]}`,
		elleNot:      []string{"read-atomic"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "parallel-snapshot-isolation", "prefix", "causal-cerone", "read-atomic"},
		not:          []string{"read-committed"},
		alsoNot:      []string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
		differs:      map[string]string{"read-committed": diffInt, "repeatable-read": diffInt},
	},
	{
		// T2 read [1] after T1's append of 2 had completed.
		name: `list_append_test checker-test "Strong SI violation"`,
		history: `{:index 0, :type :invoke, :process 0, :value [[:append 1 1]]}
{:index 1, :type :ok, :process 0, :value [[:append 1 1]]}
{:index 2, :type :invoke, :process 1, :value [[:append 1 2]]}
{:index 3, :type :ok, :process 1, :value [[:append 1 2]]}
{:index 4, :type :invoke, :process 2, :value [[:r 1 nil]]}
{:index 5, :type :ok, :process 2, :value [[:r 1 [1]]]}
{:index 6, :type :invoke, :process 3, :value [[:r 1 nil]]}
{:index 7, :type :ok, :process 3, :value [[:r 1 [1 2]]]}`,
		elleNot:      []string{"strong-snapshot-isolation"},
		elleRuledOut: []string{"strong-serializable"},
		not:          []string{"strict-serializable"},
	},
	{
		// The read of process 1 misses its own earlier append of 2.
		name: `list_append_test checker-test "Strong Session SI violation"`,
		history: `{:index 0, :type :invoke, :process 0, :value [[:append 1 1]]}
{:index 1, :type :ok, :process 0, :value [[:append 1 1]]}
{:index 2, :type :invoke, :process 1, :value [[:append 1 2]]}
{:index 3, :type :ok, :process 1, :value [[:append 1 2]]}
{:index 4, :type :invoke, :process 1, :value [[:r 1 nil]]}
{:index 5, :type :ok, :process 1, :value [[:r 1 [1]]]}
{:index 6, :type :invoke, :process 2, :value [[:r 1 nil]]}
{:index 7, :type :ok, :process 2, :value [[:r 1 [1 2]]]}`,
		elleNot:      []string{"strong-session-snapshot-isolation"},
		elleRuledOut: []string{"strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
		not:          []string{"read-atomic", "repeatable-read"},
		alsoNot:      []string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation"},
		differs: map[string]string{
			"read-atomic": diffSes, "causal-cerone": diffSes, "prefix": diffSes,
			"parallel-snapshot-isolation": diffSes, "repeatable-read": diffSes,
		},
	},
}

// hyperisoModel is the level table's Elle name of Elle's model name, and
// whether hyperiso has the model; it fails the test on a name that is none
// of Elle's.
func hyperisoModel(t *testing.T, name string) (string, bool) {
	t.Helper()
	l, err := elleModelLevel(name)
	if err != nil {
		require.NotContains(t, err.Error(), "unknown consistency model", "%q is not one of Elle's models", name)
		return "", false
	}
	return rowOf(l).Elle, true
}

// TestElleCLIBoundaryMatchesElle: on Elle's own test histories, hyperiso's
// :not and :also-not (elle-cli's and check --level all --edn's) are those
// the table gives, and rule out the models Elle rules out, of those both
// have, but where the table says why they differ.
func TestElleCLIBoundaryMatchesElle(t *testing.T) {
	dir := t.TempDir()
	for i, c := range elleBoundaryCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("h%d.edn", i))
			require.NoError(t, os.WriteFile(path, []byte(c.history+"\n"), 0o644))

			code, res := elleCLIJSON(t, "-m", "list-append", path)
			require.Equal(t, elleExitInvalid, code)
			require.Equal(t, false, res["valid?"])
			not, alsoNot := jsonList(t, res["not"]), jsonList(t, res["also-not"])
			want := func(s []string) []string { out := append([]string{}, s...); slices.Sort(out); return out }
			require.Equal(t, want(c.not), not, ":not")
			require.Equal(t, want(c.alsoNot), alsoNot, ":also-not")

			ccode, out, errs := runCLI(t, "check", "--level", "all", "--edn", path)
			require.Equal(t, exitViolated, ccode, errs)
			var all map[edn.Keyword]any
			require.NoError(t, edn.UnmarshalString(out, &all), out)
			require.Equal(t, not, ednSet(all["not"]), "check's :not")
			require.Equal(t, alsoNot, ednSet(all["also-not"]), "check's :also-not")

			ruledOut := append(slices.Clone(not), alsoNot...)
			elleOut := map[string]bool{}
			for _, n := range c.elleRuledOut {
				m, ok := hyperisoModel(t, n)
				require.True(t, ok, "%s is not hyperiso's", n)
				elleOut[m] = true
			}
			for d := range c.differs {
				_, err := elleModelLevel(d)
				require.NoError(t, err, "differs names hyperiso's models")
			}
			for _, r := range elleModelRows() {
				m := r.Elle
				if _, ok := c.differs[m]; ok {
					require.True(t, slices.Contains(ruledOut, m) && !elleOut[m], "%s is listed as ruled out by hyperiso only", m)
					continue
				}
				require.Equal(t, elleOut[m], slices.Contains(ruledOut, m), "Elle and hyperiso disagree on %s, and the table does not say why", m)
			}

			// Elle's weakest models that hyperiso has are its weakest too,
			// unless hyperiso found a weaker one the table explains.
			var elleOwn []string // Elle's :not models that hyperiso lacks
			for _, n := range c.elleNot {
				m, ok := hyperisoModel(t, n)
				if !ok {
					elleOwn = append(elleOwn, n)
					continue
				}
				if slices.Contains(not, m) {
					continue
				}
				require.True(t, slices.ContainsFunc(not, func(w string) bool {
					_, explained := c.differs[w]
					return explained && levelOfElle(t, m).AtLeast(levelOfElle(t, w))
				}), "Elle's weakest %s is not hyperiso's, and no weaker difference explains it", m)
			}
			// hyperiso's weakest are Elle's, a difference, or stand for a
			// weaker model of Elle's that hyperiso lacks.
			for _, m := range not {
				_, explained := c.differs[m]
				require.True(t, explained || len(elleOwn) > 0 || slices.ContainsFunc(c.elleNot, func(n string) bool {
					h, ok := hyperisoModel(t, n)
					return ok && h == m
				}), "hyperiso's weakest %s is not Elle's", m)
			}
		})
	}
}

func levelOfElle(t *testing.T, name string) history.Level {
	t.Helper()
	l, err := elleModelLevel(name)
	require.NoError(t, err)
	return l
}
