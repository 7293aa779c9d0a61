package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chain writes a serial history of n transactions on one key: each reads
// the previous one's value and writes its own.
func chain(_ context.Context, n int, out io.Writer) error {
	fmt.Fprintln(out, `{"hyperiso":1,"init":"zero"}`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(out, `{"session":%d,"ops":[["r",1,%d],["w",1,%d]]}`+"\n", 1+i%3, i-1, i)
	}
	return nil
}

func TestRunScale(t *testing.T) {
	dir := t.TempDir()
	cfg := config("serve")
	cfg.Strategies, cfg.Levels = []string{"veristrong"}, []string{"ser", "rc"}
	sc := ScaleConfig{Sizes: []int{20, 60}, Variants: []ScaleVariant{{Name: "chain", Write: chain}, {Name: "two-chain", Write: chain}}, Dir: dir}
	var events []Event
	cfg.Progress = func(ev Event) { events = append(events, ev) }
	rep, err := RunScale(context.Background(), sc, cfg)
	require.NoError(t, err)
	require.Equal(t, []string{"chain-20", "two-chain-20", "chain-60", "two-chain-60"}, rep.Histories)
	require.Len(t, rep.Measurements, 8)
	last := events[len(events)-1]
	require.Equal(t, 8, last.Done)
	require.Equal(t, 8, last.Total)
	for _, n := range []string{"chain-20", "chain-60"} {
		_, err := os.Stat(filepath.Join(dir, n+".jsonl"))
		require.NoError(t, err)
	}

	points := ScalePoints(rep)
	require.Len(t, points, 8)
	require.Equal(t, ScalePoint{Variant: "chain", N: 20, Level: "ser", M: rep.Find("chain-20", "ser", "veristrong")}, points[0])
	require.Equal(t, "two-chain", points[4].Variant)
	for _, p := range points {
		require.Equal(t, "satisfied", p.M.Verdict)
		require.Equal(t, p.N, p.M.Transactions)
	}

	var csv, md, svg bytes.Buffer
	require.NoError(t, WriteScaleCSV(&csv, rep))
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	require.Len(t, lines, 9)
	require.True(t, strings.HasPrefix(lines[1], "chain,20,ser,veristrong,satisfied,"), lines[1])
	require.NoError(t, WriteScaleMarkdown(&md, rep))
	require.Contains(t, md.String(), "**two-chain**")
	require.Contains(t, md.String(), "| 1M (extrapolated) |")
	require.NoError(t, DrawScalePlot(&svg, "svg", rep))
	require.Contains(t, svg.String(), "<svg")

	// A second run reuses the files.
	before, err := os.Stat(filepath.Join(dir, "chain-20.jsonl"))
	require.NoError(t, err)
	sc.Sizes = []int{20}
	_, err = RunScale(context.Background(), sc, cfg)
	require.NoError(t, err)
	after, err := os.Stat(filepath.Join(dir, "chain-20.jsonl"))
	require.NoError(t, err)
	require.Equal(t, before.ModTime(), after.ModTime())
}

func TestScaleName(t *testing.T) {
	v, n, ok := parseScaleName(ScaleName("zipf-hd", 300000))
	require.True(t, ok)
	require.Equal(t, "zipf-hd", v)
	require.Equal(t, 300000, n)
	_, _, ok = parseScaleName("RH-10k/hist-00000")
	require.False(t, ok)
	require.Equal(t, "1M", formatCount(1_000_000))
	require.Equal(t, "30k", formatCount(30_000))
	require.Equal(t, "1500", formatCount(1500))
}

// The growth row divides each level's CPU time and memory at the largest
// size by those at a tenth of it; the plot draws the target from there.
func TestScaleGrowthRow(t *testing.T) {
	m := func(h string, cpuMS float64, rss int64, read float64) Measurement {
		return Measurement{History: h, Level: "ser", Strategy: "veristrong", Verdict: "satisfied", PeakRSS: rss,
			Samples: []Sample{{Verdict: "satisfied", UserMS: cpuMS, TimingsMS: map[string]float64{"read": read}}}}
	}
	rep := &Report{Levels: []string{"ser"}, Strategies: []string{"veristrong"}, Measurements: []Measurement{
		m("u-1000", 100, 10<<20, 10), m("u-3000", 400, 30<<20, 30), m("u-10000", 1200, 80<<20, 140),
		m("v-1000", 100, 10<<20, 10), m("v-3000", 400, 30<<20, 30),
	}}
	var md bytes.Buffer
	require.NoError(t, WriteScaleMarkdown(&md, rep))
	require.Contains(t, md.String(), "| growth 1k → 10k | ×14.0 | ×12.0 cpu | ×8.0 |")
	require.Equal(t, 1, strings.Count(md.String(), "growth"), "v has no size ten times another")
	var svg bytes.Buffer
	require.NoError(t, DrawScalePlot(&svg, "svg", rep))
	require.Equal(t, 2, strings.Count(svg.String(), "(target)"), "u's CPU and memory panels, not v's")
}
