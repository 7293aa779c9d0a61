package oracle

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// strong searches the total orders of C for SER and SI. It builds the order
// one transaction at a time, always taking the next unplaced member of some
// session (so the order respects SO), and admits a transaction only if its
// conditions, which mention only the transactions before it, hold.
type strong struct {
	p     *prep
	c     *cset
	si    bool
	next  []int // per session of c: how many of its members are placed
	order []history.TxnID
	snap  []int
	// lastW[k] is the last placed transaction that writes k, or -1 (SER).
	lastW []history.TxnID
	rf    []ReadFrom
}

func strongSearch(p *prep, c *cset, level history.Level) *Witness {
	for _, t := range c.txns {
		if !p.intOK[t] {
			return nil
		}
	}
	s := &strong{
		p:     p,
		c:     c,
		si:    level == history.SI,
		next:  make([]int, len(c.sess)),
		order: []history.TxnID{history.InitTxn},
		snap:  []int{0},
		lastW: make([]history.TxnID, p.h.NumKeys()),
	}
	for k := range s.lastW {
		s.lastW[k] = -1
		if p.writes(history.InitTxn, history.KeyID(k)) {
			s.lastW[k] = history.InitTxn
		}
	}
	if !s.search() {
		return nil
	}
	w := &Witness{
		Committed: slices.Clone(c.txns),
		Order:     s.order,
		ReadsFrom: s.rf,
	}
	slices.SortFunc(w.ReadsFrom, func(a, b ReadFrom) int {
		if a.Txn != b.Txn {
			return int(a.Txn - b.Txn)
		}
		return a.Op - b.Op
	})
	if s.si {
		w.Snapshot = s.snap
	}
	return w
}

func (s *strong) search() bool {
	if len(s.order) == len(s.c.txns) {
		return true
	}
	for si, list := range s.c.sess {
		if s.next[si] == len(list) {
			continue
		}
		t := list[s.next[si]]
		mark := len(s.rf)
		var pt int
		var ok bool
		if s.si {
			pt, ok = s.admitSI(t)
		} else {
			pt, ok = s.admitSER(t)
		}
		if !ok {
			s.rf = s.rf[:mark]
			continue
		}
		s.next[si]++
		s.order = append(s.order, t)
		s.snap = append(s.snap, pt)
		type saved struct {
			k history.KeyID
			w history.TxnID
		}
		var undo []saved
		for k, v := range s.p.final[t] {
			if v >= 0 {
				undo = append(undo, saved{history.KeyID(k), s.lastW[k]})
				s.lastW[k] = t
			}
		}
		if s.search() {
			return true
		}
		for _, u := range undo {
			s.lastW[u.k] = u.w
		}
		s.next[si]--
		s.order = s.order[:len(s.order)-1]
		s.snap = s.snap[:len(s.snap)-1]
		s.rf = s.rf[:mark]
	}
	return false
}

// admitSER checks t's external reads against the state the serial execution
// of the placed transactions leaves.
func (s *strong) admitSER(t history.TxnID) (int, bool) {
	for _, r := range s.p.ext[t] {
		w := s.lastW[r.key]
		if w < 0 || s.p.final[w][r.key] != r.val {
			return 0, false
		}
		s.rf = append(s.rf, ReadFrom{Txn: t, Op: r.op, Writer: w})
	}
	return len(s.order), true
}

// admitSI looks for a snapshot point for t placed at the end of the order:
// it must lie after every SO predecessor and every placed transaction that
// writes a key t writes (NOCONFLICT), and t's external reads must see the
// last writer before it.
func (s *strong) admitSI(t history.TxnID) (int, bool) {
	pos := len(s.order)
	lo := 1
	for j := 1; j < pos; j++ {
		u := s.order[j]
		if s.p.soBefore(u, t) || s.conflict(u, t) {
			lo = j + 1
		}
	}
	for pt := pos; pt >= lo; pt-- {
		mark := len(s.rf)
		ok := true
		for _, r := range s.p.ext[t] {
			w := s.lastWriter(pt, r.key)
			if w < 0 || s.p.final[w][r.key] != r.val {
				ok = false
				break
			}
			s.rf = append(s.rf, ReadFrom{Txn: t, Op: r.op, Writer: w})
		}
		if ok {
			return pt, true
		}
		s.rf = s.rf[:mark]
	}
	return 0, false
}

// lastWriter returns the last of order[:pt] that writes k, or -1.
func (s *strong) lastWriter(pt int, k history.KeyID) history.TxnID {
	for j := pt - 1; j >= 0; j-- {
		if s.p.writes(s.order[j], k) {
			return s.order[j]
		}
	}
	return -1
}

// conflict reports whether u and t write a common key.
func (s *strong) conflict(u, t history.TxnID) bool {
	for k, v := range s.p.final[t] {
		if v >= 0 && s.p.final[u][k] >= 0 {
			return true
		}
	}
	return false
}
