package weak

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/verdict"
)

// TestDuplicatesAgreeWithOracle compares Check with the brute-force oracle
// on random small histories whose reads often have several candidate
// writers, at RC, RA and CC. A satisfied verdict must come with a witness
// choice for every ambiguous read; Undecided is allowed only when some
// candidate is an unknown-status transaction no read needs.
func TestDuplicatesAgreeWithOracle(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 600
	}
	noUnknown := oracle.DupGenOptions()
	noUnknown.PUnknown = 0
	small := noUnknown
	small.MinSessions, small.MinTxns, small.MinOps, small.MinKeys = 1, 1, 1, 1
	sources := []struct {
		name string
		opt  oracle.GenOptions
		n    int
	}{{"dup", noUnknown, n}, {"small", small, n / 4}, {"dup+unknown", oracle.DupGenOptions(), n / 2}}
	for _, level := range weakLevels {
		counts := map[string]int{}
		for si, src := range sources {
			rng := rand.New(rand.NewPCG(uint64(level)+40, uint64(si)))
			for i := range src.n {
				h := oracle.Generate(rng, src.opt)
				res, want := checkAndOracle(t, h, level)
				dup := res.Duplicates != nil && res.Duplicates.Reads > 0
				if dup {
					// Pruning only drops candidates no acyclic choice uses;
					// the probe of the preferred writers only shortcuts the
					// search.
					for _, o := range []Options{{noProbe: true}, {noPrune: true, noProbe: true}} {
						np, err := Check(context.Background(), h, level, o)
						if err != nil {
							t.Fatal(err)
						}
						if np.Verdict != res.Verdict {
							t.Fatalf("%s %s #%d: %s by default, %s with %+v\n%s", level, src.name, i, res.Verdict, np.Verdict, o, oracle.Format(h))
						}
						if np.Counters["candidates_pruned"] > 0 {
							counts["pruned"]++
						}
					}
					if res.Counters["choice_probe"] > 0 {
						counts["probed"]++
					}
				}
				if res.Verdict == verdict.Unknown {
					t.Fatalf("%s %s #%d: undecided (%q)\n%s", level, src.name, i, res.Reason, oracle.Format(h))
				}
				if got := res.Verdict == verdict.Satisfied; got != want {
					t.Fatalf("%s %s #%d: got %s, oracle says satisfied=%v\n%s\nchosen %v\nviolations %s",
						level, src.name, i, res.Verdict, want, oracle.Format(h), res.Chosen, describeAll(h, res))
				}
				checkResult(t, h, res)
				if !dup {
					counts["unique"]++
					continue
				}
				counts[res.Verdict.String()]++
				if res.Verdict == verdict.Satisfied {
					checkChosen(t, h, res)
				} else if len(res.Findings) == 0 && len(res.Violations) == 0 {
					t.Fatalf("%s %s #%d: violated without a reason", level, src.name, i)
				}
			}
		}
		t.Logf("%s: %v", level, counts)
		if counts["satisfied"] == 0 || counts["violated"] == 0 {
			t.Errorf("%s: want both verdicts on ambiguous histories, got %v", level, counts)
		}
	}
}

// TestUnknownAgreesWithOracle compares Check with the brute-force oracle
// on 10,000 random small histories per level with duplicate values and
// unknown-status transactions (a fifth of them), which the search decides
// through inclusion variables: no verdict may be Undecided.
func TestUnknownAgreesWithOracle(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1500
	}
	opt := oracle.DupGenOptions()
	opt.PUnknown = 0.2
	for _, level := range weakLevels {
		counts := map[string]int{}
		rng := rand.New(rand.NewPCG(uint64(level)+90, 5))
		for i := range n {
			h := oracle.Generate(rng, opt)
			res, want := checkAndOracle(t, h, level)
			if res.Verdict == verdict.Unknown {
				t.Fatalf("%s #%d: undecided (%q)\n%s", level, i, res.Reason, oracle.Format(h))
			}
			if got := res.Verdict == verdict.Satisfied; got != want {
				t.Fatalf("%s #%d: got %s, oracle says satisfied=%v\n%s\nchosen %v\nincluded %v\nviolations %s",
					level, i, res.Verdict, want, oracle.Format(h), res.Chosen, res.Included, describeAll(h, res))
			}
			checkResult(t, h, res)
			if res.Verdict == verdict.Violated && len(res.Findings) == 0 && len(res.Violations) == 0 {
				t.Fatalf("%s #%d: violated without a reason\n%s", level, i, oracle.Format(h))
			}
			counts[res.Verdict.String()]++
			if res.Counters["unknown_optional"] > 0 {
				counts["optional"]++
				counts["optional-"+res.Verdict.String()]++
			}
		}
		t.Logf("%s: %v", level, counts)
		if counts["optional-satisfied"] == 0 || counts["optional-violated"] == 0 {
			t.Errorf("%s: want both verdicts with optional unknown-status transactions, got %v", level, counts)
		}
	}
}

// checkChosen checks the witness of a satisfied ambiguous history: one
// choice per ambiguous read, each a writer of the value read.
func checkChosen(t *testing.T, h *history.History, res *Result) {
	t.Helper()
	// The reads of unknown-status transactions included have choices too.
	if len(res.Chosen) < res.Duplicates.Reads {
		t.Fatalf("%d choices for %d ambiguous reads", len(res.Chosen), res.Duplicates.Reads)
	}
	for _, c := range res.Chosen {
		op := h.Txns[c.Txn].Ops[c.Op]
		if op.Key != c.Key || op.Value != c.Value || c.Writer == c.Txn || finalWrite(h, c.Writer, c.Key) != c.Value {
			t.Fatalf("bad choice %+v", c)
		}
	}
}

// TestBlockingClausesSound enumerates every writer choice of small
// ambiguous histories, saturating each, and checks that no blocking clause
// the search adds excludes a choice whose saturation is acyclic, and that
// the verdict is Satisfied iff such a choice exists.
func TestBlockingClausesSound(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	opt := oracle.DupGenOptions()
	opt.PUnknown = 0
	opt.PDuplicate = 0.6
	checked, clauses := 0, 0
	for _, level := range weakLevels {
		rng := rand.New(rand.NewPCG(uint64(level)+77, 3))
		for i := range n {
			h := oracle.Generate(rng, opt)
			var good [][]int32 // the acyclic choices
			enumerated := false
			testHook = func(ch *chooser) {
				total := 1
				for _, a := range ch.c.amb {
					total *= len(a.cands)
				}
				if total > 512 {
					return
				}
				enumerated = true
				var rec func(i int)
				rec = func(i int) {
					if i == len(ch.choice) {
						v, _, err := ch.saturate(1)
						if err != nil {
							t.Fatal(err)
						}
						if len(v) == 0 {
							good = append(good, append([]int32(nil), ch.choice...))
						}
						return
					}
					for j := range ch.c.amb[i].cands {
						ch.choice[i] = int32(j)
						rec(i + 1)
					}
				}
				rec(0)
				ch.onBlock = func(reads, cands []int32) {
					clauses++
					for _, g := range good {
						all := true
						for k, r := range reads {
							if g[r] != cands[k] {
								all = false
								break
							}
						}
						if all {
							t.Fatalf("%s #%d: blocking clause %v=%v excludes the acyclic choice %v\n%s", level, i, reads, cands, g, oracle.Format(h))
						}
					}
				}
			}
			res, err := Check(context.Background(), h, level, Options{noPrune: true, noProbe: true})
			testHook = nil
			if err != nil {
				t.Fatal(err)
			}
			if !enumerated {
				continue
			}
			checked++
			if (res.Verdict == verdict.Satisfied) != (len(good) > 0) {
				t.Fatalf("%s #%d: verdict %s, %d acyclic choices\n%s", level, i, res.Verdict, len(good), oracle.Format(h))
			}
		}
	}
	t.Logf("%d histories enumerated, %d blocking clauses checked", checked, clauses)
	if checked < n/2 || clauses == 0 {
		t.Errorf("only %d histories enumerated, %d clauses", checked, clauses)
	}
}

// TestLatestBeforeAgreesWithScan checks the binary search of
// versionsByPos against a pass over each ambiguous read's candidates: the
// candidate with the largest theory position below the reader's.
func TestLatestBeforeAgreesWithScan(t *testing.T) {
	opt := oracle.DupGenOptions()
	compared := 0
	for _, level := range weakLevels {
		rng := rand.New(rand.NewPCG(uint64(level)+5, 8))
		for i := range 1500 {
			h := oracle.Generate(rng, opt)
			testHook = func(ch *chooser) {
				if ch.th == nil {
					return
				}
				ids := ch.th.ids
				vb := newVersionsByPos(ch.c, ids)
				for _, a := range ch.c.amb {
					want := history.TxnID(-1)
					for _, w := range ch.c.ix.Candidates(a.txn, history.ExtRead{Key: a.key, Value: a.value, Op: a.op}) {
						if ids[w] < ids[a.txn] && (want < 0 || ids[w] > ids[want]) {
							want = w
						}
					}
					if got := vb.latestBefore(ch.c.ix, a, ids); got != want {
						t.Fatalf("%s #%d: latest writer before T%d: %d, a pass says %d\n%s", level, i, a.txn, got, want, oracle.Format(h))
					}
					compared++
				}
			}
			_, err := Check(context.Background(), h, level, Options{noProbe: true})
			testHook = nil
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if compared < 1000 {
		t.Errorf("only %d reads compared", compared)
	}
}

// TestTheoryCompleteAtRCRA checks that at RC and RA the theory holds all
// of co′: a model it accepts saturates without a cycle, so the search
// never needs a second model (when the certain part is acyclic, without
// unknown-status transactions). It fails when the theory misses edges,
// e.g. those of the reads that keep their first guess without variables.
func TestTheoryCompleteAtRCRA(t *testing.T) {
	opt := oracle.DupGenOptions()
	opt.PUnknown = 0
	opt.PDuplicate = 0.5
	searched := 0
	for _, level := range []history.Level{history.RC, history.RA} {
		rng := rand.New(rand.NewPCG(uint64(level)+11, 12))
		for i := range 3000 {
			h := oracle.Generate(rng, opt)
			theory := false
			testHook = func(ch *chooser) { theory = ch.th != nil }
			for _, o := range []Options{{noProbe: true}, {noProbe: true, noPrune: true}} {
				res, err := Check(context.Background(), h, level, o)
				if err != nil {
					t.Fatal(err)
				}
				if !theory {
					continue
				}
				searched++
				if res.Counters["choice_cycles"] > 0 {
					t.Fatalf("%s #%d %+v: a model the theory accepted has %d cycles\n%s", level, i, o, res.Counters["choice_cycles"], oracle.Format(h))
				}
			}
			testHook = nil
		}
	}
	if searched < 1000 {
		t.Errorf("only %d searches with the theory", searched)
	}
}
