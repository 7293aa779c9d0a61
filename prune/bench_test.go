package prune_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/hyperiso/hyperiso/prune"
)

var benchSets = []string{"BL-10k", "HD-10k", "RH-10k", "WH-10k"}

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
// histories (run with -v -run BenchReport).
func TestBenchReport(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, name := range benchSets {
		h := loadBench(t, filepath.Base(name))
		for _, level := range []history.Level{history.SER, history.SI} {
			t0 := time.Now()
			g, viol := hyperpolygraph.Build(h, level, nil)
			if viol != nil {
				t.Logf("%s %v: violation at build", name, level)
				continue
			}
			tb := time.Since(t0)
			t1 := time.Now()
			st, r, c, err := prune.Prune(context.Background(), g, prune.Options{})
			tp := time.Since(t1)
			if err != nil {
				t.Fatal(err)
			}
			if c != nil {
				t.Logf("%-12s %-3v build %6.1fms prune %7.1fms passes %d CONFLICT len %d", name, level, ms(tb), ms(tp), st.Passes, len(c.Cycle))
				continue
			}
			t2 := time.Now()
			enc := encode.Encode(g, r, encode.Options{TwoWidth: true})
			te := time.Since(t2)
			t.Logf("%-12s %-3v build %6.1fms prune %7.1fms encode %7.1fms passes %d WW %d→%d WR %d→%d (cands %d→%d) known %d→%d vars %d clauses %d 2width %d",
				name, level, ms(tb), ms(tp), ms(te), st.Passes, st.WWBefore, st.WWAfter, st.WRBefore, st.WRAfter, st.WRCandsBefore, st.WRCandsAfter, st.KnownBefore, st.KnownAfter, enc.NumVars, len(enc.Clauses), enc.TwoWidth)
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
		_, r, c, err := prune.Prune(context.Background(), g, prune.Options{})
		if err != nil || c != nil {
			b.Fatal(err, c)
		}
		encode.Encode(g, r, encode.Options{TwoWidth: true})
	}
}

func BenchmarkBL10kSER(b *testing.B) { benchPipeline(b, "BL-10k", history.SER) }
func BenchmarkBL10kSI(b *testing.B)  { benchPipeline(b, "BL-10k", history.SI) }
