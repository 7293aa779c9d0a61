package explain

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong"
)

// maxGrowRounds bounds how often the candidate set grows by the writers
// of its reads before the whole history is used.
const maxGrowRounds = 3

// minimize finds a small violating sub-history around s0, the transactions
// of the reported anomaly.
func (r *run) minimize(ce *Counterexample, s0 []history.TxnID) outcome {
	h := r.h
	n := len(h.Txns)
	keep := make([]bool, n)
	keep[history.InitTxn] = true
	for _, t := range s0 {
		keep[t] = true
	}
	ce.Method = "anomaly"
	best := r.test(keep, nil)
	if !best.violated {
		// Grow: the writers every kept read could have read from, so that
		// no read of the candidate set is left out.
		ix := h.Index()
		for round := 0; round < maxGrowRounds && !best.violated && !r.exhausted; round++ {
			grown := slices.Clone(keep)
			changed := false
			for t := 1; t < n; t++ {
				if !keep[t] {
					continue
				}
				for _, rd := range ix.Reads(history.TxnID(t)) {
					for _, w := range ix.Writers(rd.Key, rd.Value) {
						if !grown[w] {
							grown[w], changed = true, true
						}
					}
				}
			}
			if !changed {
				break
			}
			keep = grown
			ce.Method = "grown"
			best = r.test(keep, nil)
		}
	}
	if !best.violated {
		// The whole history is the anomaly's own evidence.
		for t := range keep {
			keep[t] = h.Txns[t].Status != history.Aborted || t == int(history.InitTxn)
		}
		ce.Method = "whole-history"
		best = r.test(keep, nil)
		if !best.violated {
			for t := range keep {
				keep[t] = true
			}
			best = outcome{violated: true, definitive: true}
		}
	}
	r.core(ce, keep, &best)
	return r.shrink(ce, keep, s0, best)
}

// The UNSAT-core shortcut's time: coreCostFactor re-checks of the whole
// candidate set, at least coreMinTime.
// Below coreMinCost per re-check, deletion alone is faster.
const (
	coreCostFactor = 8
	coreMinTime    = 20 * time.Millisecond
	coreMinCost    = time.Millisecond
)

// core narrows a large violating keep to an UNSAT core (strong.Core), when the
// core, re-checked, still violates.
func (r *run) core(ce *Counterexample, keep []bool, best *outcome) {
	n := 0
	for t := 1; t < len(keep); t++ {
		if keep[t] {
			n++
		}
	}
	if n < strong.CoreMinTxns || r.exhausted || r.opt.NoCore || r.lastCost < coreMinCost {
		return
	}
	// The shortcut pays where re-checks are dear: it gets a few re-checks'
	// worth of time (the encoding is unpruned, so it can be slow to prove).
	slice := min(max(coreCostFactor*r.lastCost, coreMinTime), time.Until(r.deadline))
	ctx, cancel := context.WithTimeout(r.ctx, slice)
	defer cancel()
	c := strong.Core(ctx, r.h, r.level, keep)
	if len(c) == 0 || len(c) >= n {
		return
	}
	k := make([]bool, len(keep))
	k[history.InitTxn] = true
	for _, t := range c {
		k[t] = true
	}
	if o := r.test(k, nil); o.violated {
		copy(keep, k)
		*best = o
		ce.Core = fmt.Sprintf("an UNSAT core over per-transaction assumptions narrowed %d transactions to %d before deletion", n, len(c))
	}
}

// shrink removes transactions from a violating keep while the rest still
// violates: first in chunks (delta debugging), then one at a time until a
// full pass removes nothing, which proves every remaining transaction
// needed. After each success it also tries the transactions of the anomaly
// the re-check reported, a shortcut that often jumps to the core at once.
func (r *run) shrink(ce *Counterexample, keep []bool, s0 []history.TxnID, best outcome) outcome {
	inS0 := map[history.TxnID]bool{}
	for _, t := range s0 {
		inS0[t] = true
	}
	// Transactions of the reported anomaly go last, so that among several
	// minimal counterexamples the one closest to the report is found.
	var items []history.TxnID
	for pass := 0; pass < 2; pass++ {
		for t := 1; t < len(keep); t++ {
			if keep[t] && inS0[history.TxnID(t)] == (pass == 1) {
				items = append(items, history.TxnID(t))
			}
		}
	}
	mk := func(ts []history.TxnID) []bool {
		k := make([]bool, len(keep))
		k[history.InitTxn] = true
		for _, t := range ts {
			k[t] = true
		}
		return k
	}
	// accept records a violating candidate and tries the shortcut.
	accept := func(ts []history.TxnID, out outcome) []history.TxnID {
		best = out
		if out.res == nil || len(out.res.Anomalies) == 0 {
			return ts
		}
		core := subTxns(out.sub, out.res.Anomalies[0])
		if len(core) == 0 || len(core) >= len(ts) {
			return ts
		}
		var cand []history.TxnID
		for _, t := range ts {
			if slices.Contains(core, t) {
				cand = append(cand, t)
			}
		}
		if len(cand) == 0 || len(cand) == len(ts) {
			return ts
		}
		if o := r.test(mk(cand), nil); o.violated {
			best = o
			return cand
		}
		return ts
	}
	if best.res != nil {
		items = accept(items, best)
	}
	// Delta debugging over chunks while the set is large.
	k := 2
	for len(items) > 8 && !r.exhausted {
		chunks := split(items, k)
		removed := false
		for _, c := range chunks {
			cand := without(items, c)
			if len(cand) == 0 {
				continue
			}
			if o := r.test(mk(cand), nil); o.violated {
				items = accept(cand, o)
				k = max(k-1, 2)
				removed = true
				break
			}
			if r.exhausted {
				break
			}
		}
		if !removed {
			if k >= len(items) {
				break
			}
			k = min(2*k, len(items))
		}
	}
	// One at a time until a full pass removes nothing.
	proven := false
	for !r.exhausted {
		changed, undecided := false, false
		for i := 0; i < len(items) && !r.exhausted; {
			cand := slices.Delete(slices.Clone(items), i, i+1)
			if len(cand) == 0 {
				i++
				continue
			}
			o := r.test(mk(cand), nil)
			if o.violated {
				items = accept(cand, o)
				changed = true
				continue
			}
			if !o.definitive {
				undecided = true
			}
			i++
		}
		if !changed {
			proven = !undecided && !r.exhausted
			break
		}
	}
	if best.sub == nil || best.res == nil {
		// The whole history stood in without a re-check; check the final set.
		if o := r.test(mk(items), nil); o.violated {
			best = o
		}
	}
	ce.Minimal = proven
	switch {
	case proven:
		ce.Minimality = fmt.Sprintf("proven minimal: removing any one of the %d transactions and re-checking at %s gives a history that satisfies it", len(items), levelName(r.level))
	case r.exhausted:
		ce.Minimality = fmt.Sprintf("small but not proven minimal: the explain budget ran out (%d re-checks used) before every transaction was tried for removal", r.checks)
	default:
		ce.Minimality = "small but not proven minimal: some re-check without a transaction gave no answer"
	}
	return best
}

// split cuts items into k chunks of nearly equal size.
func split(items []history.TxnID, k int) [][]history.TxnID {
	var out [][]history.TxnID
	for i := range k {
		lo, hi := i*len(items)/k, (i+1)*len(items)/k
		if lo < hi {
			out = append(out, items[lo:hi])
		}
	}
	return out
}

func without(items, drop []history.TxnID) []history.TxnID {
	d := map[history.TxnID]bool{}
	for _, t := range drop {
		d[t] = true
	}
	var out []history.TxnID
	for _, t := range items {
		if !d[t] {
			out = append(out, t)
		}
	}
	return out
}
