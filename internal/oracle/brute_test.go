package oracle

// Literal, unpruned versions of the definitions in the package doc, used to
// test the pruned searches: every total order is enumerated and every
// condition is checked after the whole order is known.

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// permute calls f with every permutation of xs (in place) until f returns
// true; it reports whether f did.
func permute[T any](xs []T, f func([]T) bool) bool {
	var rec func(int) bool
	rec = func(i int) bool {
		if i == len(xs) {
			return f(xs)
		}
		for j := i; j < len(xs); j++ {
			xs[i], xs[j] = xs[j], xs[i]
			ok := rec(i + 1)
			xs[i], xs[j] = xs[j], xs[i]
			if ok {
				return true
			}
		}
		return false
	}
	return rec(0)
}

// orders calls f with every total order of c that starts with T⊥.
func orders(c *cset, f func([]history.TxnID) bool) bool {
	rest := slices.Clone(c.txns[1:])
	return permute(rest, func(r []history.TxnID) bool {
		return f(append([]history.TxnID{history.InitTxn}, r...))
	})
}

func positions(p *prep, order []history.TxnID) []int {
	pos := make([]int, len(p.h.Txns))
	for i := range pos {
		pos[i] = -1
	}
	for i, t := range order {
		pos[t] = i
	}
	return pos
}

// isOrderOf reports whether order is a total order of c, T⊥ first,
// respecting SO.
func isOrderOf(p *prep, c *cset, order []history.TxnID) bool {
	if len(order) != len(c.txns) || order[0] != history.InitTxn {
		return false
	}
	if !slices.Equal(slices.Sorted(slices.Values(order)), c.txns) {
		return false
	}
	pos := positions(p, order)
	for _, a := range c.txns {
		for _, b := range c.txns {
			if p.soBefore(a, b) && pos[a] > pos[b] {
				return false
			}
		}
	}
	return true
}

func allINT(p *prep, c *cset, rc bool) bool {
	for _, t := range c.txns {
		if (rc && !p.rcOK[t]) || (!rc && !p.intOK[t]) {
			return false
		}
	}
	return true
}

// lastWriterIn returns the last transaction of seq that writes k, or -1.
func lastWriterIn(p *prep, seq []history.TxnID, k history.KeyID) history.TxnID {
	w := history.TxnID(-1)
	for _, t := range seq {
		if p.writes(t, k) {
			w = t
		}
	}
	return w
}

func serOrderOK(p *prep, c *cset, order []history.TxnID) bool {
	if !isOrderOf(p, c, order) || !allINT(p, c, false) {
		return false
	}
	for i, t := range order {
		for _, r := range p.ext[t] {
			w := lastWriterIn(p, order[:i], r.key)
			if w < 0 || p.final[w][r.key] != r.val {
				return false
			}
		}
	}
	return true
}

// siSnapshotOK reports whether the transaction at position i of order may
// have snapshot point pt.
func siSnapshotOK(p *prep, order []history.TxnID, i, pt int) bool {
	t := order[i]
	if pt < 1 || pt > i {
		return false
	}
	for j := range i {
		u := order[j]
		conflict := false
		for k := range p.final[t] {
			if p.writes(t, history.KeyID(k)) && p.writes(u, history.KeyID(k)) {
				conflict = true
			}
		}
		if (p.soBefore(u, t) || conflict) && j >= pt {
			return false
		}
	}
	for _, r := range p.ext[t] {
		w := lastWriterIn(p, order[:pt], r.key)
		if w < 0 || p.final[w][r.key] != r.val {
			return false
		}
	}
	return true
}

func siOrderOK(p *prep, c *cset, order []history.TxnID) bool {
	if !isOrderOf(p, c, order) || !allINT(p, c, false) {
		return false
	}
	for i := 1; i < len(order); i++ {
		found := false
		for pt := 1; pt <= i; pt++ {
			if siSnapshotOK(p, order, i, pt) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// events returns the read events of the members of c for level.
func events(p *prep, c *cset, level history.Level) []weakEv {
	var evs []weakEv
	for _, t := range c.txns {
		reads := p.ext[t]
		if level == history.RC {
			reads = p.rcReads[t]
		}
		for _, r := range reads {
			evs = append(evs, weakEv{t, r})
		}
	}
	return evs
}

// weakOK checks the weak-level definition literally for read events evs
// with writers wr and commit order co.
func weakOK(p *prep, c *cset, level history.Level, evs []weakEv, wr []history.TxnID, co []history.TxnID) bool {
	if !allINT(p, c, level == history.RC) || !isOrderOf(p, c, co) {
		return false
	}
	pos := positions(p, co)
	inC := func(t history.TxnID) bool { return pos[t] >= 0 }
	for i, e := range evs {
		w := wr[i]
		if !inC(w) || w == e.t || p.final[w][e.key] != e.val || pos[w] > pos[e.t] {
			return false
		}
	}
	// causal[a][b]: a (so ∪ wr)⁺ b, by a naive fixpoint.
	n := len(p.h.Txns)
	causal := make([][]bool, n)
	for a := range causal {
		causal[a] = make([]bool, n)
	}
	for _, a := range c.txns {
		for _, b := range c.txns {
			causal[a][b] = p.soBefore(a, b)
		}
	}
	for i, e := range evs {
		causal[wr[i]][e.t] = true
	}
	for changed := true; changed; {
		changed = false
		for _, a := range c.txns {
			for _, b := range c.txns {
				for _, d := range c.txns {
					if causal[a][b] && causal[b][d] && !causal[a][d] {
						causal[a][d] = true
						changed = true
					}
				}
			}
		}
	}
	for i, r := range evs {
		t1 := wr[i]
		for _, t2 := range c.txns {
			if t2 == t1 || !p.writes(t2, r.key) {
				continue
			}
			premise := false
			switch level {
			case history.RC:
				for j, r2 := range evs {
					if r2.t == r.t && r2.op < r.op && wr[j] == t2 {
						premise = true
					}
				}
			case history.RA:
				premise = p.soBefore(t2, r.t)
				for j, r2 := range evs {
					if r2.t == r.t && wr[j] == t2 {
						premise = true
					}
				}
			case history.CC:
				premise = causal[t2][r.t]
			}
			if premise && pos[t2] > pos[t1] {
				return false
			}
		}
	}
	return true
}

// assignments calls f with every choice of a writer in c (other than the
// reader) for each event, until f returns true.
func assignments(c *cset, evs []weakEv, f func([]history.TxnID) bool) bool {
	wr := make([]history.TxnID, len(evs))
	var rec func(int) bool
	rec = func(i int) bool {
		if i == len(evs) {
			return f(wr)
		}
		for _, w := range c.txns {
			if w != evs[i].t {
				wr[i] = w
				if rec(i + 1) {
					return true
				}
			}
		}
		return false
	}
	return rec(0)
}

// bruteCheck decides level by enumerating subsets, orders and (for the weak
// levels) every assignment of writers, checking the definitions literally.
func bruteCheck(h *history.History, level history.Level) bool {
	p, err := prepare(h)
	if err != nil {
		panic(err)
	}
	for mask := 0; mask < 1<<len(p.unknown); mask++ {
		c := p.members(mask)
		var ok bool
		switch level {
		case history.SER:
			ok = orders(c, func(o []history.TxnID) bool { return serOrderOK(p, c, o) })
		case history.SI:
			ok = orders(c, func(o []history.TxnID) bool { return siOrderOK(p, c, o) })
		default:
			evs := events(p, c, level)
			ok = assignments(c, evs, func(wr []history.TxnID) bool {
				// Cheap necessary conditions first, to keep the test fast.
				for i, e := range evs {
					if p.final[wr[i]][e.key] != e.val {
						return false
					}
				}
				return orders(c, func(o []history.TxnID) bool { return weakOK(p, c, level, evs, wr, o) })
			})
		}
		if ok {
			return true
		}
	}
	return false
}

// witnessOK checks a witness Find returned against the literal definitions.
func witnessOK(h *history.History, w *Witness) bool {
	p, err := prepare(h)
	if err != nil {
		return false
	}
	var c *cset
	for mask := 0; mask < 1<<len(p.unknown); mask++ {
		if m := p.members(mask); slices.Equal(m.txns, w.Committed) {
			c = m
		}
	}
	if c == nil {
		return false
	}
	switch w.Level {
	case history.SER:
		if !serOrderOK(p, c, w.Order) {
			return false
		}
	case history.SI:
		if !siOrderOK(p, c, w.Order) || len(w.Snapshot) != len(w.Order) {
			return false
		}
		for i := 1; i < len(w.Order); i++ {
			if !siSnapshotOK(p, w.Order, i, w.Snapshot[i]) {
				return false
			}
		}
	}
	// ReadsFrom must list every read event once, in order, with writers that
	// satisfy the definition.
	evs := events(p, c, w.Level)
	if len(w.ReadsFrom) != len(evs) {
		return false
	}
	wr := make([]history.TxnID, len(evs))
	for i, e := range evs {
		rf := w.ReadsFrom[i]
		if rf.Txn != e.t || rf.Op != e.op {
			return false
		}
		wr[i] = rf.Writer
	}
	switch w.Level {
	case history.SER, history.SI:
		pos := positions(p, w.Order)
		for i, e := range evs {
			pt := pos[e.t]
			if w.Level == history.SI {
				pt = w.Snapshot[pos[e.t]]
			}
			if lastWriterIn(p, w.Order[:pt], e.key) != wr[i] {
				return false
			}
		}
		return true
	default:
		return weakOK(p, c, w.Level, evs, wr, w.Order)
	}
}
