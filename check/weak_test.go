package check

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// hierarchy lists the levels strongest first: a history satisfying one
// satisfies every later one.
var hierarchy = []history.Level{history.SER, history.SI, history.CC, history.RA, history.RC}

var weakLevels = []history.Level{history.RC, history.RA, history.CC}

// TestWeakAgreesWithOracle runs Check (validation and the weak pipeline) on
// random small histories, mostly with unique values, compares RC, RA and CC
// with the oracle, and checks the hierarchy SER ⇒ SI ⇒ CC ⇒ RA ⇒ RC with
// the SER and SI verdicts of Check.
func TestWeakAgreesWithOracle(t *testing.T) {
	n := 11000
	if testing.Short() {
		n = 1500
	}
	unique := oracle.DefaultGenOptions()
	unique.Values = 1 << 20
	unique.PZero = 0
	rng := rand.New(rand.NewPCG(5, 17))
	counts := map[string]int{}
	decided := map[history.Level]int{}
	var hierarchyChecked int
	for i := range n {
		opt := unique
		if i%8 == 7 {
			opt = oracle.DefaultGenOptions() // duplicate values too
		}
		h := oracle.Generate(rng, opt)
		got := map[history.Level]Verdict{}
		results := map[history.Level]*Result{}
		for _, level := range hierarchy {
			res, err := Check(context.Background(), h, level, Options{})
			require.NoError(t, err)
			got[level] = res.Verdict
			results[level] = res
			if level == history.SER || level == history.SI {
				continue
			}
			want, err := oracle.Check(h, level)
			require.NoError(t, err)
			if res.Verdict == Unknown {
				// Only reads that could come from unknown-status
				// transactions no read needs are left undecided.
				require.Contains(t, res.Reason, "unknown-status", "history %d at %s", i, level)
				counts[level.String()+"=unknown"]++
				continue
			}
			decided[level]++
			if (res.Verdict == Satisfied) != want {
				t.Fatalf("history %d at %s: got %s, oracle says satisfied=%v\n%s\nanomalies %+v", i, level, res.Verdict, want, oracle.Format(h), res.Anomalies)
			}
			counts[fmt.Sprintf("%s=%s", level, res.Verdict)]++
			if res.Verdict == Violated {
				require.NotEmpty(t, res.Anomalies)
				counts[fmt.Sprintf("%s:%s", level, res.Anomalies[0].Type)]++
			}
		}
		// Each satisfied level implies every weaker decided one.
		for j, strong := range hierarchy {
			if got[strong] != Satisfied {
				continue
			}
			for _, weaker := range hierarchy[j+1:] {
				if got[weaker] == Unknown {
					continue
				}
				if got[weaker] != Satisfied {
					t.Fatalf("history %d: %s satisfied but %s %s\n%s", i, strong, weaker, got[weaker], oracle.Format(h))
				}
				hierarchyChecked++
			}
		}
		checkHierarchy(t, fmt.Sprintf("history %d\n%s", i, oracle.Format(h)), results)
		if got[history.RA] == Satisfied && got[history.CC] == Violated {
			counts["ra-but-not-cc"]++
		}
		if got[history.RC] == Satisfied && got[history.RA] == Violated {
			counts["rc-but-not-ra"]++
		}
		if got[history.CC] == Satisfied && got[history.SI] == Violated {
			counts["cc-but-not-si"]++
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s:%d", k, counts[k])
	}
	t.Logf("%d histories; decided %v; %d implications checked;%s", n, decided, hierarchyChecked, b.String())
	if !testing.Short() {
		for _, level := range weakLevels {
			require.GreaterOrEqual(t, decided[level], 10000, "decided histories at %s", level)
		}
	}
}

// expectations parses the "expect" metadata of a testdata/weak history:
// "rc=satisfied ra=violated:fractured-read …", the verdict per level and
// optionally the type of the first anomaly.
func expectations(t *testing.T, h *history.History) map[history.Level][2]string {
	out := map[history.Level][2]string{}
	for _, f := range strings.Fields(h.Meta["expect"]) {
		name, want, ok := strings.Cut(f, "=")
		require.True(t, ok, f)
		level, ok := history.ParseLevel(name)
		require.True(t, ok, f)
		verdict, typ, _ := strings.Cut(want, ":")
		out[level] = [2]string{verdict, typ}
	}
	return out
}

// TestWeakTestdata checks the hand-written histories of testdata/weak at
// every level against the verdicts (and anomaly types) their header names.
func TestWeakTestdata(t *testing.T) {
	files, err := filepath.Glob("../testdata/weak/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		h, err := formats.Read(path, formats.Options{})
		require.NoError(t, err, path)
		exp := expectations(t, h)
		require.Len(t, exp, len(hierarchy), "%s: expect names every level", path)
		for level, want := range exp {
			res, err := Check(context.Background(), h, level, Options{})
			require.NoError(t, err)
			require.Equal(t, want[0], res.Verdict.String(), "%s at %s: %s %+v", path, level, res.Reason, res.Anomalies)
			if want[1] != "" {
				require.NotEmpty(t, res.Anomalies, "%s at %s", path, level)
				require.Equal(t, want[1], res.Anomalies[0].Type, "%s at %s: %s", path, level, res.Anomalies[0].Description)
			}
			require.NotEqual(t, Unknown, res.Verdict, "%s at %s: %s", path, level, res.Reason)
			for _, a := range res.Anomalies {
				require.NotEmpty(t, a.Description)
				for _, e := range a.Edges {
					require.Contains(t, []string{"so", "wr", "co", "ww", "rw"}, e.Relation)
					require.NotEmpty(t, e.Reason)
					if e.Relation != "so" {
						require.NotNil(t, e.Key, "%s at %s: edge %+v", path, level, e)
					}
				}
			}
		}
	}
}

// TestWeakLabelled checks every history of the AWDIT-labelled dataset: its
// folder is the strongest of causal, read-atomic, read-committed it
// satisfies (none: it violates all three).
func TestWeakLabelled(t *testing.T) {
	root := shared.Path(t, "weak-labelled")
	strongest := map[string]int{"causal": 0, "read-atomic": 1, "read-committed": 2, "none": 3}
	order := []history.Level{history.CC, history.RA, history.RC} // strongest first
	checked := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		folder := strings.Split(rel, string(filepath.Separator))[0]
		first, ok := strongest[folder]
		require.True(t, ok, "unexpected folder %s", folder)
		// Lenient: AWDIT's hand-written tests lack the final newline the
		// reader requires (a cut inside the last number is otherwise
		// invisible).
		h, err := formats.Read(path, formats.Options{Lenient: true})
		require.NoError(t, err, path)
		for i, level := range order {
			res, err := Check(context.Background(), h, level, Options{})
			require.NoError(t, err)
			want := Violated
			if i >= first {
				want = Satisfied
			}
			if res.Verdict != want {
				t.Errorf("%s at %s: got %s, the folder says %s; %s %+v", rel, level, res.Verdict, want, res.Reason, res.Anomalies)
			}
			checked++
		}
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, checked)
	t.Logf("%d checks agree with the folders", checked)
}

// TestWeakAnomalies checks every dbcop history of ../shared/datasets/anomalies
// at RC, RA and CC: the hierarchy must hold with the SER and SI verdicts
// of expected.tsv (accept at SI implies CC, RA and RC) and among the weak
// levels; the verdict counts are logged.
func TestWeakAnomalies(t *testing.T) {
	dir := shared.Datasets(t)
	exps := readExpected(t)
	accepted := map[string]history.Level{} // path → strongest accepted level
	for _, e := range exps {
		if !strings.HasPrefix(e.path, "anomalies/") || !strings.HasSuffix(e.path, ".bincode") || e.verdict != "accept" {
			continue
		}
		level, _ := history.ParseLevel(e.level)
		if level > accepted[e.path] {
			accepted[e.path] = level
		}
	}
	counts := map[string]int{}
	// perGroup counts the satisfied verdicts per dataset group and level;
	// total is the group's size.
	perGroup := map[string]map[history.Level]int{}
	total := map[string]int{}
	files := 0
	err := filepath.WalkDir(filepath.Join(dir, "anomalies"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".bincode") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h, err := formats.Read(path, formats.Options{})
		require.NoError(t, err, rel)
		if h.Stats().MultiWriterReads > 0 {
			counts["not unique-value"]++
			return nil
		}
		files++
		group := strings.Join(strings.Split(rel, string(filepath.Separator))[:4], "/")
		if perGroup[group] == nil {
			perGroup[group] = map[history.Level]int{}
		}
		total[group]++
		got := map[history.Level]Verdict{}
		for _, level := range weakLevels {
			res, err := Check(context.Background(), h, level, Options{})
			require.NoError(t, err)
			got[level] = res.Verdict
			counts[fmt.Sprintf("%s=%s", level, res.Verdict)]++
			if res.Verdict == Satisfied {
				perGroup[group][level]++
			}
			if res.Verdict == Violated {
				counts[fmt.Sprintf("%s:%s", level, res.Anomalies[0].Type)]++
			}
		}
		if strong := accepted[rel]; strong >= history.SI {
			for _, level := range weakLevels {
				if got[level] != Satisfied {
					t.Errorf("%s: %s accepted by expected.tsv but %s at %s", rel, strong, got[level], level)
				}
			}
		}
		if (got[history.CC] == Satisfied && got[history.RA] != Satisfied) || (got[history.RA] == Satisfied && got[history.RC] != Satisfied) {
			t.Errorf("%s: weak hierarchy broken: %v", rel, got)
		}
		return nil
	})
	require.NoError(t, err)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s:%d", k, counts[k])
	}
	t.Logf("%d unique-value dbcop histories;%s", files, b.String())
	groups := make([]string, 0, len(total))
	for g := range total {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		t.Logf("%s: %d histories; satisfied at rc %d, ra %d, cc %d", g, total[g], perGroup[g][history.RC], perGroup[g][history.RA], perGroup[g][history.CC])
	}
}

// TestWeakReadCore checks the minimal core of read-from choices reported
// on testdata/weak/duplicate-values-core.jsonl at RC, RA and CC: T3's read
// of key 1, from T1 or T2, first anomaly, with its cycle.
func TestWeakReadCore(t *testing.T) {
	h, err := formats.Read("../testdata/weak/duplicate-values-core.jsonl", formats.Options{})
	require.NoError(t, err)
	for _, level := range []history.Level{history.RC, history.RA, history.CC} {
		res, err := Check(context.Background(), h, level, Options{})
		require.NoError(t, err)
		require.Equal(t, Violated, res.Verdict)
		require.NotEmpty(t, res.Anomalies)
		a := res.Anomalies[0]
		require.NotNil(t, a.ReadCore, "%s: %+v", level, a)
		require.True(t, a.ReadCore.Minimal)
		require.Len(t, a.ReadCore.Reads, 1)
		r := a.ReadCore.Reads[0]
		require.Equal(t, int64(3), r.Txn.ID)
		require.Equal(t, 0, r.Op)
		require.Len(t, r.Writers, 2)
		require.Equal(t, []int64{1, 2}, []int64{r.Writers[0].ID, r.Writers[1].ID})
		require.NotEmpty(t, a.Edges)
		require.Contains(t, a.Description, "every choice of writer for these reads closes a cycle")
	}
}
