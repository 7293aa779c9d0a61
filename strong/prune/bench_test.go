package prune_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

var benchSets = []string{"BL-10k", "HD-10k", "RH-10k", "WH-10k"}

// reachFlag picks the reachability strategy of TestBenchReport and the
// benchmarks: auto, bitset or chains.
var reachFlag = flag.String("reach", "auto", "reachability strategy of the bench report and benchmarks: auto, bitset or chains")

func reachStrategy(tb testing.TB) prune.Strategy {
	for _, s := range []prune.Strategy{prune.Auto, prune.Bitset, prune.Chains} {
		if s.String() == *reachFlag {
			return s
		}
	}
	tb.Fatalf("-reach %q: want auto, bitset or chains", *reachFlag)
	return prune.Auto
}

func loadBench(tb testing.TB, name string) *history.History {
	tb.Helper()
	h, err := dbcop.Read(shared.Path(tb, "bench", name, "hist-00000"), dbcop.Options{DropAborted: true})
	if err != nil {
		tb.Fatal(err)
	}
	h.Index()
	return h
}

// TestBenchReport prints build, prune and encode figures for the 10k bench
// histories (run with -v -run BenchReport). Times are the best of three
// runs, wall and process CPU time, in milliseconds.
func TestBenchReport(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	type span struct{ wall, cpu time.Duration }
	best := func(b *span, wall, cpu time.Duration) {
		if b.wall == 0 || wall < b.wall {
			b.wall = wall
		}
		if b.cpu == 0 || cpu < b.cpu {
			b.cpu = cpu
		}
	}
	for _, name := range benchSets {
		h := loadBench(t, filepath.Base(name))
		for _, level := range []history.Level{history.SER, history.SI} {
			var tb, tp, te span
			var st prune.Stats
			var enc *encode.Encoding
			for range 3 {
				t0, c0 := time.Now(), cpu()
				g, viol := hyperpolygraph.Build(h, level, nil)
				require.Nil(t, viol)
				best(&tb, time.Since(t0), cpu()-c0)
				t1, c1 := time.Now(), cpu()
				var r *prune.Reach
				var c *prune.Conflict
				var err error
				st, r, c, err = prune.Prune(context.Background(), g, prune.Options{Reach: reachStrategy(t)})
				best(&tp, time.Since(t1), cpu()-c1)
				require.NoError(t, err)
				require.Nil(t, c, "the bench histories satisfy SER and SI")
				t2, c2 := time.Now(), cpu()
				enc = encode.Encode(g, r, encode.Options{TwoWidth: true})
				best(&te, time.Since(t2), cpu()-c2)
			}
			t.Logf("%-7s %-3v wall/cpu ms: build %.0f/%.0f prune %.0f/%.0f encode %.0f/%.0f; reach %v (%d chains, %d bytes) passes %d WW %d→%d WR %d→%d (cands %d→%d) known %d→%d vars %d clauses %d 2width %d",
				name, level, ms(tb.wall), ms(tb.cpu), ms(tp.wall), ms(tp.cpu), ms(te.wall), ms(te.cpu), st.ReachStrategy, st.ReachChains, st.ReachBytes, st.Passes, st.WWBefore, st.WWAfter, st.WRBefore, st.WRAfter, st.WRCandsBefore, st.WRCandsAfter, st.KnownBefore, st.KnownAfter, enc.NumVars, len(enc.Clauses), enc.TwoWidth)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func benchPipeline(b *testing.B, name string, level history.Level) {
	h := loadBench(b, name)
	b.ResetTimer()
	for b.Loop() {
		g, viol := hyperpolygraph.Build(h, level, nil)
		if viol != nil {
			b.Fatal("violation")
		}
		_, r, c, err := prune.Prune(context.Background(), g, prune.Options{Reach: reachStrategy(b)})
		if err != nil || c != nil {
			b.Fatal(err, c)
		}
		encode.Encode(g, r, encode.Options{TwoWidth: true})
	}
}

func BenchmarkBL10kSER(b *testing.B) { benchPipeline(b, "BL-10k", history.SER) }
func BenchmarkBL10kSI(b *testing.B)  { benchPipeline(b, "BL-10k", history.SI) }
func BenchmarkBL1kSER(b *testing.B)  { benchPipeline(b, "BL-1k", history.SER) }
func BenchmarkBL1kSI(b *testing.B)   { benchPipeline(b, "BL-1k", history.SI) }
