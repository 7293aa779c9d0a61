package weak

import "github.com/hyperiso/hyperiso/history"

// saturateRC adds the orderings of the RC axiom (AWDIT Algorithm 1). For
// each transaction T3 it marks the first read event from each writer, then
// walks the read events backwards keeping, per key, the writers of the
// earliest later read and of the next one from a different writer (a stack
// of two). At the first read event from T2 (the only one that matters: any
// later one has fewer reads after it), every key x that T2 writes and T3
// reads later yields T2 → T1 for the earliest later writer T1 ≠ T2 of x;
// orderings towards still later writers of x follow by transitivity, since
// each of them is ordered after its predecessor in the same way.
func (c *checker) saturateRC() error {
	c.buildWriteKeys()
	nk := c.h.NumKeys()
	top := make([]history.TxnID, nk)
	second := make([]history.TxnID, nk)
	keyStamp := make([]int32, nk) // == t+1: key read after the current event
	seen := make([]int32, c.n)    // == t+1: t read from this writer already
	var first []bool
	var readKeys []history.KeyID
	for t := history.TxnID(1); int(t) < c.n; t++ {
		if !c.in[t] {
			continue
		}
		if err := c.poll(); err != nil {
			return err
		}
		stamp := int32(t + 1)
		evs := c.events(t)
		first = first[:0]
		for _, e := range evs {
			f := seen[e.writer] != stamp
			if f {
				seen[e.writer] = stamp
			}
			first = append(first, f)
		}
		readKeys = readKeys[:0]
		// Backwards, one program point at a time: the rows of a predicate
		// read share one (history.ReadPoint), so each of them orders only
		// the reads of later points, and they enter the stacks together.
		for hi := len(evs); hi > 0; {
			lo := hi - 1
			for at := c.point(t, evs[lo].op); lo > 0 && c.point(t, evs[lo-1].op) == at; {
				lo--
			}
			for i := lo; i < hi; i++ {
				e := evs[i]
				t2 := e.writer
				if !first[i] || t2 == history.InitTxn || len(readKeys) == 0 {
					continue
				}
				order := func(x history.KeyID) {
					t1 := top[x]
					if t1 == t2 {
						t1 = second[x]
					}
					if t1 >= 0 && !c.soBefore(t2, t1) {
						c.infer(Edge{From: t2, To: t1, Key: x, Rule: RuleRC, Reader: t, Via: e.key})
					}
				}
				// Intersect over the smaller of the two sets.
				if wk := c.writeKeys(t2); len(wk) <= len(readKeys) {
					for _, x := range wk {
						if keyStamp[x] == stamp {
							order(x)
						}
					}
				} else {
					for _, x := range readKeys {
						if c.writes(t2, x) {
							order(x)
						}
					}
				}
			}
			// A point's events read distinct keys (a predicate read names
			// each key once), so their order here does not matter.
			for i := lo; i < hi; i++ {
				e := evs[i]
				switch y, t2 := e.key, e.writer; {
				case keyStamp[y] != stamp:
					keyStamp[y] = stamp
					top[y], second[y] = t2, -1
					readKeys = append(readKeys, y)
				case top[y] != t2:
					top[y], second[y] = t2, top[y]
				}
			}
			hi = lo
		}
	}
	return nil
}

// saturateRA adds the orderings of the RA axiom (AWDIT Algorithm 2), per
// session in session order. The so case orders only the session's latest
// earlier writer of the key before the writer read (earlier writers follow
// by session order); the wr case intersects the keys each writer T2 read by
// T3 writes with the keys T3 read, over the smaller set. Repeatable reads
// are validation's non-repeatable-read findings.
func (c *checker) saturateRA() error {
	c.buildWriteKeys()
	nk := c.h.NumKeys()
	lastWrite := make([]history.TxnID, nk)
	lwStamp := make([]int32, nk) // == s+1: lastWrite is of session s
	readFrom := make([]history.TxnID, nk)
	rfStamp := make([]int32, nk) // == t+1: t read the key from readFrom
	seen := make([]int32, c.n)
	var writers []event // the first read event from each writer
	for s, txs := range c.sess {
		sst := int32(s + 1)
		for _, t3 := range txs {
			if err := c.poll(); err != nil {
				return err
			}
			stamp := int32(t3 + 1)
			evs := c.events(t3)
			writers = writers[:0]
			for _, e := range evs {
				readFrom[e.key], rfStamp[e.key] = e.writer, stamp
				if seen[e.writer] != stamp {
					seen[e.writer] = stamp
					writers = append(writers, e)
				}
			}
			for _, e := range evs {
				if lwStamp[e.key] != sst {
					continue
				}
				if t2 := lastWrite[e.key]; t2 != e.writer && !c.soBefore(t2, e.writer) {
					c.infer(Edge{From: t2, To: e.writer, Key: e.key, Rule: RuleSession, Reader: t3, Via: -1})
				}
			}
			for _, we := range writers {
				t2 := we.writer
				if t2 == history.InitTxn {
					continue // T⊥ precedes every transaction anyway
				}
				order := func(x history.KeyID, t1 history.TxnID) {
					if t1 != t2 && !c.soBefore(t2, t1) {
						c.infer(Edge{From: t2, To: t1, Key: x, Rule: RuleReadFrom, Reader: t3, Via: we.key})
					}
				}
				if wk := c.writeKeys(t2); len(wk) <= len(evs) {
					for _, x := range wk {
						if rfStamp[x] == stamp {
							order(x, readFrom[x])
						}
					}
				} else {
					for _, e := range evs {
						if c.writes(t2, e.key) {
							order(e.key, e.writer)
						}
					}
				}
			}
			for _, w := range c.ix.Writes(t3) {
				lastWrite[w.Key], lwStamp[w.Key] = t3, sst
			}
		}
	}
	return nil
}
