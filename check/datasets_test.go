package check

import (
	"bufio"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/hyperiso/hyperiso/strong"
)

var large = flag.Bool("large", false, "also check the 10k-transaction bench histories against expected.tsv (minutes)")

type expectation struct {
	path, level, verdict string
	// refMS is the reference checker's time, or -1 where it did not finish.
	refMS float64
}

func readExpected(t *testing.T) []expectation {
	f, err := os.Open(shared.Path(t, "expected.tsv"))
	require.NoError(t, err)
	defer f.Close()
	var out []expectation
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		require.GreaterOrEqual(t, len(cols), 4, sc.Text())
		ref := -1.0
		if len(cols) > 4 && cols[4] != "" {
			v, err := strconv.ParseFloat(cols[4], 64)
			require.NoError(t, err, sc.Text())
			ref = v
		}
		out = append(out, expectation{cols[0], cols[2], cols[3], ref})
	}
	require.NoError(t, sc.Err())
	return out
}

// TestSharedDatasets checks every history of ../shared/datasets with a known
// verdict, with every strategy. The 10k bench histories run only with -large.
func TestSharedDatasets(t *testing.T) {
	dir := shared.Datasets(t)
	exps := readExpected(t)
	loaded := map[string]*history.History{}
	checked := 0
	// Time of the default strategy against the reference, per group.
	type tally struct {
		n            int
		ours, theirs float64
	}
	times := map[string]*tally{}
	for _, e := range exps {
		if e.verdict == "unknown" {
			continue
		}
		if strings.Contains(e.path, "-10k") && !*large {
			continue
		}
		h, ok := loaded[e.path]
		if !ok {
			var err error
			h, err = formats.Read(filepath.Join(dir, e.path), formats.Options{})
			require.NoError(t, err, e.path)
			loaded[e.path] = h
		}
		level, ok := history.ParseLevel(e.level)
		require.True(t, ok)
		big := strings.HasPrefix(e.path, "bench/") || strings.Contains(e.path, "/cobra/") || strings.Contains(e.path, "/polysi/")
		for _, s := range strong.Strategies {
			if big && s.Name != "veristrong" && s.Name != "lazy-gini" {
				continue // ablations and the slower baseline: the small histories and the random tests cover them
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			start := time.Now()
			res, err := Check(ctx, h, level, Options{Strategy: s.Name})
			took := time.Since(start)
			cancel()
			if s.Name == strong.Strategies[0].Name && e.refMS >= 0 {
				group := strings.Join(strings.Split(e.path, "/")[:2], "/")
				tl := times[group]
				if tl == nil {
					tl = &tally{}
					times[group] = tl
				}
				tl.n++
				tl.ours += float64(took.Microseconds()) / 1000
				tl.theirs += e.refMS
			}
			require.NoError(t, err, "%s %s %s", e.path, e.level, s.Name)
			want := map[string]Verdict{"accept": Satisfied, "reject": Violated}[e.verdict]
			if res.Verdict != want {
				t.Errorf("%s at %s with %s: got %s, expected.tsv says %s; anomalies %+v", e.path, e.level, s.Name, res.Verdict, e.verdict, res.Anomalies)
			}
			checked++
		}
	}
	t.Logf("%d checks agree with expected.tsv", checked)
	for g, tl := range times {
		t.Logf("%s: %d checks, mean %.1f ms with %s (reading excluded) vs %.1f ms for the reference checker",
			g, tl.n, tl.ours/float64(tl.n), strong.Strategies[0].Name, tl.theirs/float64(tl.n))
	}
}
