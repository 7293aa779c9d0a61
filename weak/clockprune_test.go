package weak

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// TestPruneBruteForce checks the pruning of candidate writers against an
// exhaustive search independent of Check, on thousands of small random
// histories with duplicate values and unknown-status transactions: for
// every subset of the unknown-status transactions taken as committed and
// every choice of a writer per read event, naive saturation (naiveWith)
// decides acyclicity, and no candidate a pruning dropped may be the writer
// of its read in any acyclic choice. The clocks alone (pruneByClocks) and
// the clocks with the reachability matrices (prune) are checked apart. The
// exhaustive search must agree with the oracle's verdict.
func TestPruneBruteForce(t *testing.T) {
	n := 2500
	if testing.Short() {
		n = 400
	}
	opt := oracle.DupGenOptions()
	opt.PUnknown = 0.2
	opt.PDuplicate = 0.5
	for _, level := range weakLevels {
		counts := map[string]int{}
		rng := rand.New(rand.NewPCG(uint64(level)+300, 17))
		for i := range n {
			h := oracle.Generate(rng, opt)
			used, sat, ok := acyclicReadsFrom(h, level, 1<<9)
			if !ok {
				counts["too-big"]++
				continue
			}
			want, err := oracle.Check(h, level)
			if err != nil {
				t.Fatal(err)
			}
			if want != sat {
				t.Fatalf("%s #%d: oracle says %v, exhaustive search %v\n%s", level, i, want, sat, oracle.Format(h))
			}
			for _, clocksOnly := range []bool{true, false} {
				var dropped []readFrom
				testHook = func(ch *chooser) {
					c := ch.c
					for _, a := range c.amb {
						for _, w := range c.ix.Candidates(a.txn, history.ExtRead{Key: a.key, Value: a.value, Op: a.op}) {
							if !slices.Contains(a.cands, w) {
								dropped = append(dropped, readFrom{int(a.txn), int(a.op), int(w)})
							}
						}
					}
				}
				_, err := Check(context.Background(), h, level, Options{clocksOnly: clocksOnly, noProbe: true})
				testHook = nil
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range dropped {
					if used[d] {
						t.Fatalf("%s #%d (clocks only: %v): pruned writer T%d of T%d op %d is the writer in an acyclic choice\n%s", level, i, clocksOnly, d.w, d.t, d.op, oracle.Format(h))
					}
				}
				if clocksOnly && len(dropped) > 0 {
					counts["pruned-by-clocks"]++
					counts["dropped-by-clocks"] += len(dropped)
				}
			}
			counts["checked"]++
		}
		t.Logf("%s: %v", level, counts)
		if counts["pruned-by-clocks"] < n/20 || counts["checked"] < n/2 {
			t.Errorf("%s: too few histories exercise the pruning: %v", level, counts)
		}
	}
}

// readFrom is "the read event of t at op reads from w".
type readFrom struct{ t, op, w int }

// acyclicReadsFrom enumerates, for every subset of the unknown-status
// transactions taken as committed (the aborted ones and the others are
// emptied of operations, which leaves only their session order, itself
// transitive) and every choice of a writer among the candidates of each
// read event, whether naive saturation finds co′ acyclic, and returns the
// reads-from pairs of the acyclic choices, and whether there is one. ok is false when some subset
// has more than limit choices.
func acyclicReadsFrom(h *history.History, level history.Level, limit int) (used map[readFrom]bool, sat, ok bool) {
	var unknown []int
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status == history.Unknown {
			unknown = append(unknown, t)
		}
	}
	used = map[readFrom]bool{}
	for mask := range 1 << len(unknown) {
		hs := fresh(h)
		hs.Txns = slices.Clone(h.Txns)
		for t := 1; t < len(hs.Txns); t++ {
			switch st := hs.Txns[t].Status; {
			case st == history.Aborted:
				hs.Txns[t].Ops = nil
			case st == history.Unknown && mask&(1<<slices.Index(unknown, t)) == 0:
				hs.Txns[t].Ops = nil
			}
		}
		// The read events and their candidates, as naiveWith meets them.
		type ev struct {
			t, op int
			cands []history.TxnID
		}
		var evs []ev
		naiveWith(hs, level, func(t, op int) int {
			o := hs.Txns[t].Ops[op]
			cs := candidates(hs, t, o.Key, o.Value)
			evs = append(evs, ev{t, op, cs})
			if len(cs) == 0 {
				return -1
			}
			return int(cs[0])
		})
		total := 1
		for _, e := range evs {
			total *= max(len(e.cands), 1)
			if total > limit {
				return nil, false, false
			}
		}
		choice := make([]int, len(evs))
		at := map[[2]int]int{}
		for k, e := range evs {
			at[[2]int{e.t, e.op}] = k
		}
		pick := func(t, op int) int {
			k, ok := at[[2]int{t, op}]
			if !ok || len(evs[k].cands) == 0 {
				return -3 // not met before: no writer, unsatisfiable
			}
			return int(evs[k].cands[choice[k]])
		}
		var rec func(k int)
		rec = func(k int) {
			if k == len(evs) {
				if naiveWith(hs, level, pick) {
					sat = true
					for j, e := range evs {
						used[readFrom{e.t, e.op, int(e.cands[choice[j]])}] = true
					}
				}
				return
			}
			if len(evs[k].cands) == 0 {
				return // a read nobody wrote: no acyclic choice
			}
			for j := range evs[k].cands {
				choice[k] = j
				rec(k + 1)
			}
		}
		rec(0)
	}
	return used, sat, true
}
