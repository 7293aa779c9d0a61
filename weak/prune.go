package weak

import "github.com/hyperiso/hyperiso/history"

// maxPruneBytes bounds the two reachability matrices pruning builds.
const maxPruneBytes = 96 << 20

// pruneRounds bounds the rounds of pruning: a round that leaves reads
// with one candidate makes them certain, which may prune more.
const pruneRounds = 4

// prune drops the candidate writers that close a cycle with the certain
// part of co′ alone (the reads with one writer left), before any search.
// Choosing w for a read of x in t adds w → t, so w is dropped if t already
// reaches w in co′; and it forces t2 → w for every other writer t2 of x
// that the level's premise certainly relates to t (CC: t2 reaches t in
// so ∪ wr; RA: t2 precedes t in its session or t read from t2; RC: t read
// from t2 earlier), so w is dropped if w reaches such a t2 in co′. Edges
// only grow with wr, so a dropped candidate is in no acyclic choice. A
// read keeps its candidates when all would go: the search then finds the
// cycles to report. It stops early when the certain part is cyclic
// already (the search reports it), and prunes nothing when the matrices
// exceed maxPruneBytes; Options.Fit's refusal is its error.
func (c *checker) prune() (pruned int, err error) {
	nw := (c.n + 63) / 64
	need := 2 * int64(c.n) * int64(nw) * 8
	if need > maxPruneBytes {
		return 0, nil
	}
	if c.fit != nil {
		// Refused like any other allocation: without pruning the search
		// would run far longer than the budget suggests.
		if err := c.fit(need, "the reachability matrices that prune candidate writers"); err != nil {
			return 0, err
		}
	}
	// byKey[x]: the transactions taken (T⊥ aside) that write x.
	byKey := make([][]history.TxnID, c.h.NumKeys())
	for t := 1; t < c.n; t++ {
		if c.in[t] {
			for _, w := range c.ix.Writes(history.TxnID(t)) {
				byKey[w.Key] = append(byKey[w.Key], history.TxnID(t))
			}
		}
	}
	co := make([]uint64, c.n*nw)
	hb := make([]uint64, c.n*nw)
	row := func(m []uint64, t history.TxnID) []uint64 { return m[int(t)*nw : int(t)*nw+nw] }
	has := func(m []uint64, a, b history.TxnID) bool { return m[int(a)*nw+int(b)/64]&(1<<(uint(b)%64)) != 0 }
	prem := make([]uint64, nw)
	for round := 0; round < pruneRounds; round++ {
		c.certainEvents()
		if err := c.resaturate(); err != nil {
			return pruned, err
		}
		if c.causalCycle {
			return pruned, nil
		}
		g := c.buildGraph(true)
		order, ok := g.topo(c)
		if !ok {
			return pruned, nil
		}
		clear(co)
		clear(hb)
		for i := len(order) - 1; i >= 0; i-- {
			u := order[i]
			ru, hu := row(co, u), row(hb, u)
			ru[int(u)/64] |= 1 << (uint(u) % 64)
			hu[int(u)/64] |= 1 << (uint(u) % 64)
			for e := g.start[u]; e < g.start[u+1]; e++ {
				v := g.to[e]
				for k, w := range row(co, v) {
					ru[k] |= w
				}
				if r := g.ref[e]; r == refSO || r == refWR {
					for k, w := range row(hb, v) {
						hu[k] |= w
					}
				}
			}
		}
		if err := c.ctx.Err(); err != nil {
			return pruned, err
		}
		newSingles := false
		for i := range c.amb {
			a := &c.amb[i]
			if len(a.cands) == 1 {
				continue
			}
			t := a.txn
			// prem: the other writers of a.key the premise relates to t.
			clear(prem)
			for _, t2 := range byKey[a.key] {
				if t2 == t {
					continue
				}
				var rel bool
				switch c.level {
				case history.CC:
					rel = has(hb, t2, t)
				case history.RA:
					rel = c.soBefore(t2, t) || c.readsFrom(t, t2, -1)
				case history.RC:
					rel = c.readsFrom(t, t2, a.op)
				}
				if rel {
					prem[int(t2)/64] |= 1 << (uint(t2) % 64)
				}
			}
			kept := a.cands[:0:0]
			for _, w := range a.cands {
				if l := c.likely[i]; has(hb, w, t) && (l < 0 || has(hb, l, w)) {
					// Reading from its causal past adds no causality:
					// the first guess, the latest such.
					c.likely[i] = w
				}
				bad := has(co, t, w)
				if !bad {
					rw := row(co, w)
					for k, p := range prem {
						// w itself is in its own row; it is no premise
						// of an ordering before itself.
						if p&rw[k]&^selfBit(w, k) != 0 {
							bad = true
							break
						}
					}
				}
				if !bad {
					kept = append(kept, w)
				}
			}
			n, single := a.narrow(kept)
			pruned += n
			newSingles = newSingles || single
		}
		if !newSingles {
			break
		}
	}
	return pruned, nil
}

// selfBit is w's bit if it falls in word k of a row.
func selfBit(w history.TxnID, k int) uint64 {
	if int(w)/64 == k {
		return 1 << (uint(w) % 64)
	}
	return 0
}

// readsFrom reports whether a certain read event of t (at a program point
// before op's when op ≥ 0) has writer w.
func (c *checker) readsFrom(t, w history.TxnID, op int32) bool {
	at := int32(-1)
	if op >= 0 {
		at = c.point(t, op)
	}
	for _, e := range c.events(t) {
		if e.writer == w && (op < 0 || c.point(t, e.op) < at) {
			return true
		}
	}
	return false
}

// certainEvents sets ev to the unique-writer events plus the ambiguous
// reads down to one candidate taken as committed.
func (c *checker) certainEvents() {
	ev := make([]event, 0, len(c.evAll))
	lo, hi := make([]int32, c.n), make([]int32, c.n)
	for t := range c.n {
		lo[t] = int32(len(ev))
		for k := c.allLo[t]; k < c.allHi[t]; k++ {
			e := c.evAll[k]
			if e.writer < 0 {
				if a := c.amb[c.ambAt[k]]; len(a.cands) == 1 && c.in[a.cands[0]] {
					e.writer = a.cands[0]
				} else {
					continue
				}
			}
			ev = append(ev, e)
		}
		hi[t] = int32(len(ev))
	}
	c.ev, c.evLo, c.evHi = ev, lo, hi
}

// resaturate computes co′ afresh for the current events.
func (c *checker) resaturate() error {
	c.inferred = c.inferred[:0]
	c.ww = c.ww[:0]
	c.causalCycle, c.causal, c.causalOmitted, c.nCausalSCCs = false, nil, 0, 0
	err := c.saturate()
	if err == nil && !c.causalCycle {
		c.addVersionOrders()
	}
	return err
}
