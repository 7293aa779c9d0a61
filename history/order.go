package history

import (
	"cmp"
	"slices"
)

// Interleaved reports whether the file interleaves its sessions: the
// session changes from one transaction to the next far more often than
// once per session. A file that lists one session after another (dbcop,
// Cobra's per-thread logs) says nothing of time by its order.
func (h *History) Interleaved() bool {
	switches := 0
	for x := 2; x < len(h.Txns); x++ {
		if h.Txns[x].Session != h.Txns[x-1].Session {
			switches++
		}
	}
	return switches >= 4*len(h.Sessions)
}

// EvenProgress ranks the transactions (pos[t] for TxnID t, T⊥ first) as
// if the sessions had run side by side at even speed: by how far through
// its session each one is. For a file listed session by session it is a
// far better first guess at the commit order than the file's order, which
// runs each session before the next: a solver starting from that order
// decided nearly every version order backwards (1,000 sessions of 50
// transactions at SI: 4.2 million decisions for 539 conflicts, against
// 1.0 million for 295).
func (h *History) EvenProgress() []int32 {
	type placed struct {
		at float64
		t  TxnID
	}
	ps := make([]placed, 0, len(h.Txns))
	for _, s := range h.Sessions {
		n := float64(len(s.Txns))
		for j, t := range s.Txns {
			ps = append(ps, placed{(float64(j) + 0.5) / n, t})
		}
	}
	slices.SortStableFunc(ps, func(a, b placed) int { return cmp.Compare(a.at, b.at) })
	pos := make([]int32, len(h.Txns))
	for i := range pos {
		pos[i] = -1
	}
	pos[InitTxn] = 0
	next := int32(1)
	for _, p := range ps {
		if pos[p.t] < 0 {
			pos[p.t] = next
			next++
		}
	}
	for t := range pos {
		if pos[t] < 0 {
			pos[t] = next
			next++
		}
	}
	return pos
}
