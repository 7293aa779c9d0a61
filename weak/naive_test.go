package weak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

// naive decides RC, RA or CC for a history of committed transactions by
// the definitions, with cubic-time closures: it resolves every read event
// to its writer by value, builds the relation of session order, wr and
// every ordering the axiom asks for, and tests it for cycles. It is
// independent of Check and meant for histories of up to a hundred or so
// transactions.
func naive(h *history.History, level history.Level) bool { return naiveWith(h, level, nil) }

// naiveWith is naive with the writers of some read events given: pick, if
// not nil, is asked for each read event (transaction, op index) and
// returns its writer, -1 to leave the event out (it reads nothing), or -2
// to resolve it by value.
func naiveWith(h *history.History, level history.Level, pick func(t, op int) int) bool {
	n := len(h.Txns)
	type rd struct {
		op, key int
		writer  int
	}
	final := make([]map[history.KeyID]history.ValueID, n)
	for t := range n {
		final[t] = map[history.KeyID]history.ValueID{}
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() {
				final[t][op.Key] = op.Value
			}
		}
	}
	writerOf := func(t int, k history.KeyID, v history.ValueID) int {
		w := -1
		for u := range n {
			if u != t {
				if fv, ok := final[u][k]; ok && fv == v {
					if w >= 0 {
						panic("duplicate values")
					}
					w = u
				}
			}
		}
		return w
	}
	reads := make([][]rd, n)
	for t := 1; t < n; t++ {
		last := map[history.KeyID]history.ValueID{}
		wrote := map[history.KeyID]history.ValueID{}
		for i, op := range h.Txns[t].Ops {
			k := op.Key
			if op.Kind.IsWrite() {
				last[k], wrote[k] = op.Value, op.Value
				continue
			}
			if v, ok := wrote[k]; ok {
				if v != op.Value {
					return false // reads an overwritten or foreign value after its own write
				}
				continue
			}
			prev, seen := last[k]
			last[k] = op.Value
			if seen && level != history.RC {
				if prev != op.Value {
					return false // non-repeatable read
				}
				continue // internal read
			}
			w := -2
			if pick != nil {
				w = pick(t, i)
			}
			if w == -1 {
				continue
			}
			if w == -2 {
				w = writerOf(t, k, op.Value) // never t: no future reads
			}
			if w < 0 {
				return false // no other transaction wrote it finally
			}
			reads[t] = append(reads[t], rd{i, int(k), w})
		}
	}
	rel := make([][]bool, n)
	for i := range rel {
		rel[i] = make([]bool, n)
	}
	for t := 1; t < n; t++ {
		rel[0][t] = true
		for u := 1; u < n; u++ {
			if h.Txns[u].Session == h.Txns[t].Session && h.Txns[u].Index < h.Txns[t].Index {
				rel[u][t] = true
			}
		}
		for _, r := range reads[t] {
			rel[r.writer][t] = true
		}
	}
	hb := closure(rel)
	out := closure(rel)
	writes := func(t, k int) bool { _, ok := final[t][history.KeyID(k)]; return ok }
	for t3 := 1; t3 < n; t3++ {
		for _, r := range reads[t3] {
			t1 := r.writer
			for t2 := range n {
				if t2 == t1 || !writes(t2, r.key) {
					continue
				}
				premise := false
				switch level {
				case history.RC:
					for _, q := range reads[t3] {
						if q.op < r.op && q.writer == t2 {
							premise = true
						}
					}
				case history.RA:
					premise = rel[t2][t3] // so or wr (T⊥ → all included)
				case history.CC:
					premise = hb[t2][t3]
				}
				if premise {
					out[t2][t1] = true
				}
			}
		}
	}
	c := closure(out)
	for i := range n {
		if c[i][i] {
			return false
		}
	}
	return true
}

func closure(rel [][]bool) [][]bool {
	n := len(rel)
	c := make([][]bool, n)
	for i := range c {
		c[i] = append([]bool(nil), rel[i]...)
	}
	for k := range n {
		for i := range n {
			if !c[i][k] {
				continue
			}
			for j := range n {
				if c[k][j] {
					c[i][j] = true
				}
			}
		}
	}
	return c
}

// TestAgreesWithNaive compares Check with the naive saturation on medium
// histories (tens of transactions, several sessions, few keys) with stale
// and repeated reads, where the algorithms' bookkeeping (the two-element
// stacks, last writers, monotone pointers, clocks) is exercised far more
// than on the oracle's tiny histories.
func TestAgreesWithNaive(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 150
	}
	for _, level := range weakLevels {
		rng := rand.New(rand.NewPCG(uint64(level), 99))
		counts := map[string]int{}
		for i := range n {
			o := bigOptions{
				Txns:     10 + rng.IntN(60),
				Sessions: 1 + rng.IntN(6),
				Ops:      2 + rng.IntN(6),
				Keys:     2 + rng.IntN(8),
				Lag:      rng.IntN(12),
				PStale:   []float64{0, 0.01, 0.03, 0.1}[rng.IntN(4)],
				PRepeat:  []float64{0, 0.05, 0.2}[rng.IntN(3)],
			}
			h := genUnique(rng, o)
			res, err := Check(context.Background(), h, level, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := naive(h, level)
			if (res.Verdict == verdict.Satisfied) != want {
				t.Fatalf("%s #%d %+v: got %s, naive says satisfied=%v; findings %v%s", level, i, o, res.Verdict, want, res.Findings, describeAll(h, res))
			}
			checkResult(t, h, res)
			counts[res.Verdict.String()]++
			if res.Verdict == verdict.Violated && len(res.Violations) > 0 {
				counts[res.Violations[0].Kind.String()]++
			}
		}
		t.Logf("%s: %v", level, fmt.Sprint(counts))
	}
}
