package weak

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

// saturateCC adds the orderings of the CC axiom (AWDIT Algorithm 3). It
// first orders so ∪ wr topologically (a cycle there is a causality cycle:
// reported, and CC stops), computes each transaction's happens-before
// clock, and then walks each session in session order. For a read event of
// x in T3 from T1 and each session s′ that writes x, a pointer into s′'s
// writers of x advances monotonically to the last one T2 that happens
// before T3; T2 → T1 is added unless T2 = T1 or T2 already happens before
// T1. Earlier writers of s′ follow by session order.
func (c *checker) saturateCC() error {
	k := len(c.sess)
	c.k = k
	base := c.buildGraph(false)
	order, ok := base.topo(c)
	if !ok {
		c.causalCycle = true
		return c.causalCycles(base)
	}

	if err := c.clocks(order); err != nil {
		return err
	}
	h := c.h
	// Per key, the writers taken, grouped by session in session order:
	// runs[runLo[x]:runLo[x+1]] are the sessions that write x, each with
	// its writers wtx[lo:hi] (and their Txn.Index in widx).
	nk := h.NumKeys()
	runLo := make([]int32, nk+1)
	count := make([]int32, nk+1)
	lastSess := make([]int32, nk)
	for i := range lastSess {
		lastSess[i] = -1
	}
	nw := 0
	for s, txs := range c.sess {
		for _, t := range txs {
			for _, w := range c.ix.Writes(t) {
				count[w.Key+1]++
				nw++
				if lastSess[w.Key] != int32(s) {
					lastSess[w.Key] = int32(s)
					runLo[w.Key+1]++
				}
			}
		}
	}
	for x := range nk {
		count[x+1] += count[x]
		runLo[x+1] += runLo[x]
	}
	type run struct{ sess, lo, hi int32 }
	runs := make([]run, runLo[nk])
	wtx := make([]history.TxnID, nw)
	widx := make([]int32, nw)
	fillW := count[:nk:nk]
	fillR := append([]int32(nil), runLo[:nk]...)
	for i := range lastSess {
		lastSess[i] = -1
	}
	for s, txs := range c.sess {
		for _, t := range txs {
			for _, w := range c.ix.Writes(t) {
				x := w.Key
				if lastSess[x] != int32(s) {
					lastSess[x] = int32(s)
					runs[fillR[x]] = run{sess: int32(s), lo: fillW[x], hi: fillW[x]}
					fillR[x]++
				}
				wtx[fillW[x]], widx[fillW[x]] = t, c.loc[t].idx
				fillW[x]++
				runs[fillR[x]-1].hi++
			}
		}
	}
	lastSess = nil

	ptr := make([]int32, len(runs))
	pst := make([]int32, len(runs)) // == s+1: ptr belongs to session s
	for s, txs := range c.sess {
		sst := int32(s + 1)
		for _, t3 := range txs {
			if err := c.poll(); err != nil {
				return err
			}
			row := c.hb[int(t3)*k : int(t3)*k+k]
			for _, e := range c.events(t3) {
				x, t1 := e.key, e.writer
				// t2 already happens before t1 iff its index is at most
				// row1[its session] (for t1's own session: below t1's).
				var row1 []int32
				s1, i1 := int32(-1), int32(0)
				if t1 != history.InitTxn {
					row1 = c.hb[int(t1)*k : int(t1)*k+k]
					s1, i1 = c.loc[t1].sess, c.loc[t1].idx
				}
				for ri := runLo[x]; ri < runLo[x+1]; ri++ {
					r := &runs[ri]
					bound := row[r.sess]
					// Nothing to infer when every writer of r.sess that t3
					// sees t1 sees too (or, in t1's session, precedes t1):
					// decided on the clocks alone, without touching the
					// run's writers, which are cold in large histories.
					switch {
					case bound < 0:
						continue
					case row1 == nil:
					case r.sess == s1:
						if bound < i1 {
							continue
						}
					case bound <= row1[r.sess]:
						continue
					}
					p := ptr[ri]
					if pst[ri] != sst {
						pst[ri], p = sst, r.lo-1
					}
					for p+1 < r.hi && widx[p+1] <= bound {
						p++
					}
					ptr[ri] = p
					if p < r.lo {
						continue
					}
					t2 := wtx[p]
					switch {
					case t2 == t1:
						continue
					case row1 == nil:
					case r.sess == s1:
						if widx[p] < i1 {
							continue
						}
					case widx[p] <= row1[r.sess]:
						continue
					}
					ed := Edge{From: t2, To: t1, Key: x, Rule: RuleCausal, Reader: t3, Via: -1}
					if r.sess == int32(s) {
						ed.Rule = RuleSession
					} else {
						for _, f := range c.events(t3) {
							if f.writer == t2 {
								ed.Rule, ed.Via = RuleReadFrom, f.key
								break
							}
						}
					}
					c.infer(ed)
				}
			}
		}
	}
	return nil
}

// clocks computes the happens-before clock of every transaction taken
// (c.hb, c.k, c.loc) along order, a topological order of so ∪ wr over the
// current read events.
func (c *checker) clocks(order []history.TxnID) error {
	k := len(c.sess)
	c.k = k
	h := c.h
	// prev[t]: t's predecessor in its session among the transactions
	// taken, or -1.
	prev := make([]history.TxnID, c.n)
	for _, txs := range c.sess {
		p := history.TxnID(-1)
		for _, t := range txs {
			prev[t] = p
			p = t
		}
	}
	// loc[t]: t's session and Txn.Index, packed for locality.
	c.loc = make([]sessIdx, c.n)
	for t := range c.n {
		c.loc[t] = sessIdx{h.Txns[t].Session, h.Txns[t].Index}
	}
	if len(c.hb) != c.n*k {
		if c.fit != nil {
			if err := c.fit(int64(c.n)*int64(k)*4, fmt.Sprintf("the happens-before clocks (%d transactions × %d sessions)", c.n, k)); err != nil {
				return err
			}
		}
		c.hb = make([]int32, c.n*k)
	}
	seen := make([]int32, c.n)
	for _, t := range order {
		if t == history.InitTxn {
			continue
		}
		if err := c.poll(); err != nil {
			return err
		}
		row := c.hb[int(t)*k : int(t)*k+k]
		if p := prev[t]; p >= 0 {
			copy(row, c.hb[int(p)*k:int(p)*k+k])
			row[c.loc[p].sess] = c.loc[p].idx
		} else {
			for i := range row {
				row[i] = -1
			}
		}
		for _, e := range c.events(t) {
			if w := e.writer; w != history.InitTxn && seen[w] != int32(t+1) {
				seen[w] = int32(t + 1)
				c.joinWriter(row, w)
			}
		}
	}
	return nil
}

// joinWriter joins into row the clock of w, a transaction row's owner read
// from, and w itself. The printed ComputeHB joins only the clocks of the
// wr-sources, which hold their strict past: w would be missing.
func (c *checker) joinWriter(row []int32, w history.TxnID) {
	k := c.k
	wr := c.hb[int(w)*k : int(w)*k+k]
	for i, v := range wr {
		if v > row[i] {
			row[i] = v
		}
	}
	if l := c.loc[w]; l.idx > row[l.sess] {
		row[l.sess] = l.idx
	}
}
