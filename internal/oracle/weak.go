package oracle

import (
	"math/bits"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// weakEv is a read event of transaction t.
type weakEv struct {
	t history.TxnID
	readEv
}

// weak searches the read-from choices for RC, RA and CC. Transactions are
// named by their index in C (at most 64 of them, so relations are arrays of
// successor bitsets).
//
// Given some of the choices, relation builds the pairs they force on co: T⊥
// before all, SO, wr and the pairs the axiom demands. Every pair forced by
// some choices is forced by any extension of them (the premises only grow
// with wr), so once that relation is cyclic no extension can succeed. The
// search uses this twice: a candidate writer whose choice makes the relation
// cyclic is dropped, and a branch where some read event has no candidate
// left is abandoned. It then branches on the read event with the fewest
// candidates left.
type weak struct {
	p     *prep
	c     *cset
	level history.Level
	ev    []weakEv
	rd    []int    // local index of each event's reader
	cands [][]int  // local indices of each event's candidate writers
	wmask []uint64 // per key: the members of C that write it
	so    []uint64 // per member: its SO predecessors (T⊥ included)
	// choice[i] is event i's writer (local index), or -1 if not chosen yet.
	choice []int
}

func weakSearch(p *prep, c *cset, level history.Level) *Witness {
	m := len(c.txns)
	s := &weak{p: p, c: c, level: level, wmask: make([]uint64, p.h.NumKeys()), so: make([]uint64, m)}
	for li, t := range c.txns {
		for k := range s.wmask {
			if p.writes(t, history.KeyID(k)) {
				s.wmask[k] |= 1 << li
			}
		}
		for lj, u := range c.txns {
			if p.soBefore(u, t) {
				s.so[li] |= 1 << lj
			}
		}
	}
	for li, t := range c.txns {
		ok, reads := p.intOK[t], p.ext[t]
		if level == history.RC {
			ok, reads = p.rcOK[t], p.rcReads[t]
		}
		if !ok {
			return nil
		}
		for _, r := range reads {
			var cands []int
			for lw, w := range c.txns {
				if w != t && p.final[w][r.key] == r.val {
					cands = append(cands, lw)
				}
			}
			if len(cands) == 0 {
				return nil
			}
			s.ev = append(s.ev, weakEv{t, r})
			s.rd = append(s.rd, li)
			s.cands = append(s.cands, cands)
		}
	}
	s.choice = make([]int, len(s.ev))
	for i := range s.choice {
		s.choice[i] = -1
	}
	if !acyclic(s.relation()) || !s.search() {
		return nil
	}
	w := &Witness{
		Committed: slices.Clone(c.txns),
		Order:     s.topo(s.relation()),
	}
	for i, e := range s.ev {
		w.ReadsFrom = append(w.ReadsFrom, ReadFrom{Txn: e.t, Op: e.op, Writer: c.txns[s.choice[i]]})
	}
	return w
}

// search extends the current choices, which force an acyclic relation, to
// all read events; it reports whether it succeeded (leaving the choices in
// place) or restores them.
func (s *weak) search() bool {
	best, bestLeft := -1, []int(nil)
	for i := range s.ev {
		if s.choice[i] >= 0 {
			continue
		}
		var left []int
		for _, w := range s.cands[i] {
			s.choice[i] = w
			if acyclic(s.relation()) {
				left = append(left, w)
			}
		}
		s.choice[i] = -1
		if len(left) == 0 {
			return false
		}
		if best < 0 || len(left) < len(bestLeft) {
			best, bestLeft = i, left
		}
	}
	if best < 0 {
		return true
	}
	for _, w := range bestLeft {
		s.choice[best] = w
		if s.search() {
			return true
		}
	}
	s.choice[best] = -1
	return false
}

// relation returns the pairs co must contain given the choices made so far:
// T⊥ before all, SO, wr, the orders list reads state, and the pairs the
// level's axiom demands.
func (s *weak) relation() []uint64 {
	m := len(s.c.txns)
	rel := make([]uint64, m)
	for li := range m {
		for pre := s.so[li]; pre != 0; pre &= pre - 1 {
			rel[bits.TrailingZeros64(pre)] |= 1 << li
		}
	}
	// readFrom[li]: the chosen writers of li's read events (RA).
	readFrom := make([]uint64, m)
	for i, w := range s.choice {
		if w >= 0 {
			rel[w] |= 1 << s.rd[i]
			readFrom[s.rd[i]] |= 1 << w
		}
	}
	var causal []uint64
	if s.level == history.CC {
		causal = closure(rel) // (SO ∪ wr)⁺, T⊥ before all
	}
	out := slices.Clone(rel)
	for i, t1 := range s.choice {
		if t1 < 0 {
			continue
		}
		r := s.ev[i]
		// premise: the members t2 whose write of r.key must precede t1.
		var premise uint64
		switch s.level {
		case history.RC:
			for j, w := range s.choice {
				if w >= 0 && s.ev[j].t == r.t && s.ev[j].op < r.op {
					premise |= 1 << w
				}
			}
		case history.RA:
			premise = s.so[s.rd[i]] | readFrom[s.rd[i]]
		case history.CC:
			for lj := range m {
				if causal[lj]&(1<<s.rd[i]) != 0 {
					premise |= 1 << lj
				}
			}
		}
		for t2 := premise & s.wmask[r.key] &^ (1 << t1); t2 != 0; t2 &= t2 - 1 {
			out[bits.TrailingZeros64(t2)] |= 1 << t1
		}
	}
	return out
}

// closure returns the transitive closure of a relation given as successor
// bitsets.
func closure(rel []uint64) []uint64 {
	c := slices.Clone(rel)
	for k := range c {
		for i := range c {
			if c[i]&(1<<k) != 0 {
				c[i] |= c[k]
			}
		}
	}
	return c
}

func acyclic(rel []uint64) bool {
	for i, row := range closure(rel) {
		if row&(1<<i) != 0 {
			return false
		}
	}
	return true
}

// topo returns a topological order of an acyclic relation on C, taking the
// smallest available index first.
func (s *weak) topo(rel []uint64) []history.TxnID {
	m := len(rel)
	indeg := make([]int, m)
	for _, row := range rel {
		for ; row != 0; row &= row - 1 {
			indeg[bits.TrailingZeros64(row)]++
		}
	}
	var order []history.TxnID
	done := make([]bool, m)
	for progress := true; progress; {
		progress = false
		for i := range m {
			if !done[i] && indeg[i] == 0 {
				done[i] = true
				order = append(order, s.c.txns[i])
				for row := rel[i]; row != 0; row &= row - 1 {
					indeg[bits.TrailingZeros64(row)]--
				}
				progress = true
				break
			}
		}
	}
	return order
}
