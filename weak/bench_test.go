package weak

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

var (
	largeTxns  = flag.Int("weak.large", 0, "TestLarge: check a generated unique-value history of this many transactions (e.g. 1048576) at RC, RA and CC")
	largeKeys  = flag.Int("weak.keys", 0, "TestLarge: number of keys (default transactions/8)")
	largeOut   = flag.String("weak.write", "", "TestLarge: also write the generated history to this JSONL file")
	largeLvls  = flag.String("weak.levels", "rc,ra,cc", "TestLarge: the levels to check")
	largeStale = flag.Float64("weak.stale", 0, "TestLarge: probability of a stale read (makes violations)")
)

var (
	benchMu   sync.Mutex
	benchHist = map[int]*history.History{}
)

func benchHistory(n int) *history.History {
	benchMu.Lock()
	defer benchMu.Unlock()
	if h, ok := benchHist[n]; ok {
		return h
	}
	h := genUnique(rand.New(rand.NewPCG(uint64(n), 42)), defaultBig(n))
	benchHist[n] = h
	return h
}

// fresh returns a copy of h without its cached index, so that a
// measurement includes building it.
func fresh(h *history.History) *history.History {
	return &history.History{
		Source: h.Source, Format: h.Format, Sessions: h.Sessions, Txns: h.Txns, InitKind: h.InitKind,
		Keys: h.Keys, Values: h.Values, KeyNames: h.KeyNames, Lists: h.Lists,
		AbortedWrites: h.AbortedWrites, Warnings: h.Warnings, Meta: h.Meta,
	}
}

// BenchmarkCheck checks generated unique-value histories (100 sessions,
// about 8 operations per transaction, all levels satisfied) of 2^14 and
// 2^17 transactions; each iteration builds the history's index afresh.
func BenchmarkCheck(b *testing.B) {
	for _, exp := range []int{14, 17} {
		h := benchHistory(1 << exp)
		for _, level := range weakLevels {
			b.Run(fmt.Sprintf("%s/2^%d", level, exp), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					res, err := Check(context.Background(), fresh(h), level, Options{})
					if err != nil || res.Verdict != verdict.Satisfied {
						b.Fatalf("%v %v", err, res.Verdict)
					}
				}
			})
		}
	}
}

// TestLarge measures one check per level of a big generated history; it
// runs only with -weak.large=N.
func TestLarge(t *testing.T) {
	if *largeTxns == 0 {
		t.Skip("run with -weak.large=N")
	}
	o := defaultBig(*largeTxns)
	if *largeKeys > 0 {
		o.Keys = *largeKeys
	}
	o.PStale = *largeStale
	t0 := time.Now()
	h := genUnique(rand.New(rand.NewPCG(uint64(o.Txns), 42)), o)
	st := h.Stats()
	t.Logf("generated %d transactions, %d sessions, %d operations, %d keys in %s", st.Transactions, st.Sessions, st.Operations, st.Keys, time.Since(t0))
	if *largeOut != "" {
		f, err := os.Create(*largeOut)
		if err != nil {
			t.Fatal(err)
		}
		if err := jsonl.Write(f, h); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range strings.Split(*largeLvls, ",") {
		level, ok := history.ParseLevel(name)
		if !ok {
			t.Fatalf("bad level %q", name)
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		hf := fresh(h)
		start, cpu0 := time.Now(), cpuTime()
		res, err := Check(context.Background(), hf, level, Options{})
		el, cpu := time.Since(start), cpuTime()-cpu0
		if err != nil {
			t.Fatal(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		var stages []string
		for _, name := range []string{"prepare", "saturate", "cycles"} {
			stages = append(stages, fmt.Sprintf("%s %.2fs", name, res.Timings[name].Seconds()))
		}
		t.Logf("%s: %s in %.2fs, %.2fs CPU (%s); allocated %.0f MB; counters %v", level, res.Verdict, el.Seconds(), cpu.Seconds(),
			strings.Join(stages, ", "), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), res.Counters)
		if res.Verdict != verdict.Satisfied && o.PStale == 0 {
			t.Errorf("%s: %s", level, res.Verdict)
		}
		if len(res.Violations) > 0 {
			v := res.Violations[0]
			t.Logf("%s: %d cycles reported, %d omitted; first: %s: %s", level, len(res.Violations), res.CyclesOmitted, v.Kind, v.Describe(h))
		}
	}
}
