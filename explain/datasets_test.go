package explain

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

var (
	allDatasets = flag.Bool("explain.all", false, "also explain the Cobra and PolySI anomaly histories and the dbcop ones at both levels (minutes)")
	dsBudget    = flag.String("explain.budget", "300,20s", "explain budget per history in the dataset test")
	dsNoCore    = flag.Bool("explain.nocore", false, "minimise by deletion with re-checks alone, without the UNSAT-core shortcut")
)

type violating struct {
	path  string
	level history.Level
}

// violatingHistories lists the histories expected.tsv rejects under
// anomalies/: by default the dbcop ones at the level of their folder.
func violatingHistories(t *testing.T) []violating {
	f, err := os.Open(shared.Path(t, "expected.tsv"))
	require.NoError(t, err)
	defer f.Close()
	var out []violating
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		require.GreaterOrEqual(t, len(cols), 4)
		path, lv, verdict := cols[0], cols[2], cols[3]
		if !strings.HasPrefix(path, "anomalies/") || verdict != "reject" {
			continue
		}
		if !*allDatasets && (!strings.Contains(path, "/dbcop/") || !strings.HasPrefix(path, "anomalies/"+lv+"/")) {
			continue
		}
		level, ok := history.ParseLevel(lv)
		require.True(t, ok)
		out = append(out, violating{path, level})
	}
	require.NoError(t, sc.Err())
	return out
}

// TestDatasetCounterexamples explains every violating history of the
// anomalies datasets and re-checks each counterexample alone, read back from
// its JSON Lines, at the same level; it logs the distributions of sizes and
// classes.
func TestDatasetCounterexamples(t *testing.T) {
	dir := shared.Datasets(t)
	cases := violatingHistories(t)
	require.NotEmpty(t, cases)
	budget, err := ParseBudget(*dsBudget)
	require.NoError(t, err)
	type result struct {
		v       violating
		size    int
		class   string
		minimal bool
		method  string
		checks  int
		core    bool
		elapsed time.Duration
		txns    int
		err     string
	}
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				c := cases[i]
				results[i] = result{v: c}
				r := &results[i]
				h, err := formats.Read(filepath.Join(dir, c.path), formats.Options{})
				if err != nil {
					r.err = err.Error()
					continue
				}
				r.txns = len(h.Txns) - 1
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				t0 := time.Now()
				rep, err := Explain(ctx, h, c.level, Options{Budget: budget, NoCore: *dsNoCore})
				cancel()
				r.elapsed = time.Since(t0)
				if err != nil {
					r.err = err.Error()
					continue
				}
				if rep.Verdict != check.Violated || len(rep.Explanation.Counterexamples) == 0 {
					r.err = fmt.Sprintf("verdict %s, %d counterexamples", rep.Verdict, len(rep.Explanation.Counterexamples))
					continue
				}
				ce := rep.Explanation.Counterexamples[0]
				r.size, r.class, r.minimal, r.method = ce.Size, ce.Class, ce.Minimal, ce.Method
				r.checks, r.core = ce.Checks, ce.Core != ""
				if r.class == "" {
					r.class = ce.Type
				}
				if c.level == history.SI {
					if err := siForbidden(ce); err != "" {
						r.err = err
						continue
					}
				}
				sub, err := jsonl.Parse(strings.NewReader(ce.History), "counterexample", jsonl.Options{})
				if err != nil {
					r.err = "counterexample does not read back: " + err.Error()
					continue
				}
				res, err := check.Check(context.Background(), sub, c.level, check.Options{})
				if err != nil || res.Verdict != check.Violated {
					r.err = fmt.Sprintf("counterexample alone: %v %v", res.Verdict, err)
				}
				if len(sub.Txns)-1 != ce.Size {
					r.err = fmt.Sprintf("counterexample has %d transactions, reported %d", len(sub.Txns)-1, ce.Size)
				}
			}
		}()
	}
	for i := range cases {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	sizes := map[int]int{}
	classes := map[string]int{}
	methods := map[string]int{}
	minimal, checks, cores := 0, 0, 0
	for _, r := range results {
		if r.err != "" {
			t.Errorf("%s at %s: %s", r.v.path, r.v.level, r.err)
			continue
		}
		sizes[r.size]++
		classes[fmt.Sprintf("%s %s", strings.ToUpper(r.v.level.String()), r.class)]++
		methods[r.method]++
		if r.minimal {
			minimal++
		}
		checks += r.checks
		if r.core {
			cores++
		}
		if strings.Contains(r.v.path, "/cobra/") || strings.Contains(r.v.path, "/polysi/") {
			t.Logf("%s at %s: %s, %d of %d transactions, minimal %v, from %s, core %v, %d re-checks, %s (check and explain)",
				r.v.path, r.v.level, r.class, r.size, r.txns, r.minimal, r.method, r.core, r.checks, r.elapsed.Round(time.Millisecond))
		}
	}
	t.Logf("%d violating histories explained; %d counterexamples proven minimal", len(results), minimal)
	t.Logf("sizes (transactions: histories): %s", formatCounts(sizes))
	t.Logf("classes: %s", formatCounts(classes))
	t.Logf("search started from: %s; an UNSAT core narrowed %d searches; %d re-checks in all", formatCounts(methods), cores, checks)
}

func formatCounts[K int | string](m map[K]int) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%v: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// siForbidden reports a cycle of ce that SI would allow on its own: one
// with two rw edges in a row.
func siForbidden(ce *Counterexample) string {
	cycles := [][]check.Edge{ce.Edges}
	for _, c := range ce.Cases {
		cycles = append(cycles, c.Edges)
	}
	for _, cyc := range cycles {
		for i, e := range cyc {
			if e.Relation == "rw" && cyc[(i+1)%len(cyc)].Relation == "rw" {
				return fmt.Sprintf("cycle with adjacent rw edges reported at SI: %+v", cyc)
			}
		}
	}
	return ""
}
