package execoracle

import (
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"
)

// rrGraph decides RR for a history of rows and registers (no lists) by the
// dependency-graph statement in doc.go, not by visible sets: some fates, a
// total order AR of the committed transactions containing session order
// (which is also every key's version order, WW), and a choice of the
// version each read observed, such that every edge points forward in AR:
//
//   - WR: a read observes a version installed before its reader (item and
//     predicate read-from);
//   - item RW: a point read, or a row a predicate read returned, observes
//     the last version installed before its reader;
//   - RC's edges: if a read of T observed a version installed by t2 (of any
//     key), t2 writes x, and a later read of T (not the same predicate
//     read) observed x's version installed by t1, then t2 = t1 or t2 is
//     before t1.
//
// Predicate anti-dependencies (rows a predicate read did not return) may
// point anywhere.
func rrGraph(h *History) bool {
	rows := literalRows(h)
	isRow := func(k int64) bool { return slices.Contains(rows, k) }
	var unknown []int
	for i, t := range h.Txns {
		if t.Status == Unknown {
			unknown = append(unknown, i)
		}
	}
	// effect: the version t installs of k, if it writes k.
	effect := func(t int, k int64) (live bool, val int64, ok bool) {
		return rowEffect(&h.Txns[t], k)
	}
	type obs struct {
		read int   // index among t's store reads
		key  int64 //
		item bool  // a point read or a returned row
		want func(live bool, val int64) bool
	}
	// observations lists t's store observations, or ok = false if its
	// reads contradict its own writes or its results are malformed.
	observations := func(t int) (out []obs, ok bool) {
		own := map[int64][2]int64{} // key → {live, val}
		read := 0
		for _, op := range h.Txns[t].Ops {
			switch op.Kind {
			case Write, Insert:
				own[op.Key] = [2]int64{1, op.Value}
			case Delete:
				own[op.Key] = [2]int64{0, 0}
			case Read, ReadAbsent:
				want := func(live bool, val int64) bool {
					return live == (op.Kind == Read) && (!live || val == op.Value)
				}
				if o, in := own[op.Key]; in {
					if !want(o[0] == 1, o[1]) {
						return nil, false
					}
					continue
				}
				out = append(out, obs{read, op.Key, true, want})
				read++
			case PredRead:
				ret := map[int64]int64{}
				for _, r := range op.Rows {
					if _, dup := ret[r.Key]; dup || !op.Pred.Match(r.Key, r.Value) {
						return nil, false
					}
					ret[r.Key] = r.Value
				}
				for _, k := range rows {
					if !op.Pred.Covers(k) {
						continue
					}
					v, in := ret[k]
					p := op.Pred
					match := func(live bool, val int64) bool { return live && p.Match(k, val) }
					want := func(live bool, val int64) bool { return !match(live, val) }
					if in {
						want = func(live bool, val int64) bool { return match(live, val) && val == v }
					}
					if o, mine := own[k]; mine {
						if !want(o[0] == 1, o[1]) {
							return nil, false
						}
						continue
					}
					out = append(out, obs{read, k, in, want})
				}
				read++
			default:
				panic("rrGraph: lists are not handled")
			}
		}
		return out, true
	}
	for mask := 0; mask < 1<<len(unknown); mask++ {
		inC := make([]bool, len(h.Txns))
		var members []int
		for i, t := range h.Txns {
			inC[i] = t.Status == Committed
		}
		for j, u := range unknown {
			inC[u] = mask&(1<<j) != 0
		}
		for i := range h.Txns {
			if inC[i] {
				members = append(members, i)
			}
		}
		ok := permute(members, func(order []int) bool {
			pos := map[int]int{-1: -1} // T⊥ is -1
			for d, t := range order {
				pos[t] = d
			}
			for _, a := range order {
				for _, b := range order {
					if a < b && h.Txns[a].Session == h.Txns[b].Session && pos[a] > pos[b] {
						return false // SO ⊄ AR
					}
				}
			}
			for _, t := range order {
				os, good := observations(t)
				if !good {
					return false
				}
				// writers[i]: the candidate writers of observation i (-1 for T⊥).
				chosen := make([]int, len(os))
				writes := func(u int, k int64) bool {
					if u < 0 {
						return true
					}
					_, _, w := effect(u, k)
					return w
				}
				var pick func(i int) bool
				pick = func(i int) bool {
					if i == len(os) {
						return true
					}
					o := os[i]
					cands := []int{-1}
					for _, u := range order[:pos[t]] {
						if writes(u, o.key) {
							cands = append(cands, u)
						}
					}
					if o.item {
						cands = cands[len(cands)-1:] // item RW: the last one before t
					}
					for _, w := range cands {
						live, val := !isRow(o.key), int64(0)
						if w >= 0 {
							live, val, _ = effect(w, o.key)
						}
						if !o.want(live, val) {
							continue
						}
						good := true
						for j := range i { // RC's edges from earlier reads
							if os[j].read < o.read && writes(chosen[j], o.key) && chosen[j] != w && pos[chosen[j]] > pos[w] {
								good = false
								break
							}
						}
						if good {
							chosen[i] = w
							if pick(i + 1) {
								return true
							}
						}
					}
					return false
				}
				if !pick(0) {
					return false
				}
			}
			return true
		})
		if ok {
			return true
		}
	}
	return false
}

// The two statements of RR in doc.go, visible sets (Decide) and the
// dependency graph (rrGraph), agree on random row histories.
func TestRRGraphAgrees(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	sat := 0
	n := 1500 // HYPERISO_PRED_N overrides
	if v, err := strconv.Atoi(os.Getenv("HYPERISO_PRED_N")); err == nil && v > 0 {
		n = v
	}
	for i := range n {
		o := PredicateGenOptions([]Level{RR, RC, SER, SI}[i%4])
		o.MaxTxns = 5
		h := Generate(rng, o)
		want := rrGraph(h)
		if got := decideGen(t, h, RR); got != want {
			t.Fatalf("RR: Decide says %v, the graph statement %v\n%s", got, want, h.JSONL())
		}
		if want {
			sat++
		}
	}
	// And on the examples.
	for _, ex := range predExamples() {
		if got, want := rrGraph(ex.h), slices.Contains(ex.sat, RR); got != want {
			t.Errorf("%s: graph statement says %v, want %v", ex.name, got, want)
		}
	}
	t.Logf("%d histories, %d satisfy RR", n, sat)
}
