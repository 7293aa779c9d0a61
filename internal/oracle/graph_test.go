package oracle

// An independent characterisation of SER and SI through dependency graphs
// (DESIGN.md §3): some choice of WR (among the candidates) and of a version
// order WW per key makes SO ∪ WR ∪ WW ∪ RW acyclic (SER), or
// (SO ∪ WR ∪ WW) ; RW? acyclic (SI).

import (
	"github.com/hyperiso/hyperiso/history"
)

// graphCheck decides SER or SI by dependency graphs. It gives up (big) when
// some choice of C has more than limit combinations of WR and WW.
func graphCheck(h *history.History, level history.Level, limit int) (ok, big bool) {
	p, err := prepare(h)
	if err != nil {
		panic(err)
	}
	for mask := 0; mask < 1<<len(p.unknown); mask++ {
		c := p.members(mask)
		if !allINT(p, c, false) {
			continue
		}
		evs := events(p, c, history.SER)
		cands := make([][]history.TxnID, len(evs))
		work := 1
		for i, e := range evs {
			for _, w := range c.txns {
				if w != e.t && p.final[w][e.key] == e.val {
					cands[i] = append(cands[i], w)
				}
			}
			work *= len(cands[i])
		}
		if work == 0 {
			continue
		}
		nk := p.h.NumKeys()
		writers := make([][]history.TxnID, nk)
		for k := range nk {
			for _, t := range c.txns {
				if p.writes(t, history.KeyID(k)) {
					writers[k] = append(writers[k], t)
				}
			}
			for i := 2; i <= len(writers[k]); i++ {
				work *= i
			}
		}
		if work > limit {
			return false, true
		}
		if graphSearch(p, c, level, evs, cands, writers) {
			return true, false
		}
	}
	return false, false
}

func graphSearch(p *prep, c *cset, level history.Level, evs []weakEv, cands, writers [][]history.TxnID) bool {
	L := c.local
	m := len(c.txns)
	wr := make([]history.TxnID, len(evs))
	// wwPos[k][t]: t's place in the version order of k.
	wwPos := make([]map[history.TxnID]int, len(writers))
	test := func() bool {
		d := make([]uint64, m) // SO ∪ WR ∪ WW
		for _, a := range c.txns {
			for _, b := range c.txns {
				if p.soBefore(a, b) {
					d[L[a]] |= 1 << L[b]
				}
			}
		}
		for i, e := range evs {
			d[L[wr[i]]] |= 1 << L[e.t]
		}
		for k := range writers {
			for _, a := range writers[k] {
				for _, b := range writers[k] {
					if wwPos[k][a] < wwPos[k][b] {
						d[L[a]] |= 1 << L[b]
					}
				}
			}
		}
		rw := make([]uint64, m)
		for i, e := range evs {
			for _, s := range writers[e.key] {
				if s != e.t && wwPos[e.key][wr[i]] < wwPos[e.key][s] {
					rw[L[e.t]] |= 1 << L[s]
				}
			}
		}
		g := make([]uint64, m)
		for a := range m {
			g[a] = d[a]
			if level == history.SER {
				g[a] |= rw[a]
				continue
			}
			for b := range m {
				if d[a]&(1<<b) != 0 {
					g[a] |= rw[b]
				}
			}
		}
		return acyclic(g)
	}
	var ww func(k int) bool
	ww = func(k int) bool {
		if k == len(writers) {
			return test()
		}
		return permute(writers[k], func(o []history.TxnID) bool {
			wwPos[k] = map[history.TxnID]int{}
			for i, t := range o {
				wwPos[k][t] = i
			}
			return ww(k + 1)
		})
	}
	var rf func(i int) bool
	rf = func(i int) bool {
		if i == len(evs) {
			return ww(0)
		}
		for _, w := range cands[i] {
			wr[i] = w
			if rf(i + 1) {
				return true
			}
		}
		return false
	}
	return rf(0)
}
