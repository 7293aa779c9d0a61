package weak

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
)

// Unknown-status transactions under duplicate values. resolve takes as
// committed the unknown-status transactions some read of a transaction
// taken needs as its only candidate (forced in). The others that a read
// with several candidates could read from are optional: the search gives
// each an inclusion variable, and its read events (each with its own
// variables, even with one candidate) happen iff it is included; a read
// from it implies it. An unknown-status transaction that no read could
// read from stays out (left out): including it only adds read events,
// writers and transactions to the premises, so it can only add orderings.
// An optional transaction with a read no transaction could have written,
// or with a finding the level forbids, is excluded by a unit clause.

// addOptional finds the optional transactions (c.opt) and appends their
// read events to c.amb and evAll, and excludes those that cannot commit.
func (c *checker) addOptional() {
	c.optIdx = make([]int32, c.n)
	unknown := false
	for i := range c.optIdx {
		c.optIdx[i] = -1
		unknown = unknown || (c.h.Txns[i].Status == history.Unknown && !c.in[i])
	}
	for i := 0; unknown && i < len(c.amb); i++ {
		for _, w := range c.amb[i].cands {
			if c.in[w] || c.optIdx[w] >= 0 {
				continue
			}
			c.optIdx[w] = int32(len(c.opt))
			c.opt = append(c.opt, w)
			c.allLo[w] = int32(len(c.evAll))
			c.eachRead(w, func(r history.ExtRead) {
				cands := slices.Clone(c.ix.Candidates(w, r))
				slot := int32(len(c.evAll))
				c.ambAt = append(c.ambAt, int32(len(c.amb)))
				c.amb = append(c.amb, ambRead{txn: w, op: r.Op, key: r.Key, value: r.Value, cands: cands, slot: slot})
				c.evAll = append(c.evAll, event{key: r.Key, writer: -1, op: r.Op})
			})
			c.allHi[w] = int32(len(c.evAll))
		}
	}
	if len(c.opt) == 0 {
		return
	}
	c.optOut = make([]bool, len(c.opt))
	for _, f := range c.h.ValidateTxns(func(t history.TxnID) bool { return c.optional(t) }) {
		if f.Kind.ForbiddenAt(c.level) {
			c.optOut[c.optIdx[f.Txn]] = true
		}
	}
	for _, a := range c.amb {
		if c.optional(a.txn) && len(a.cands) == 0 {
			c.optOut[c.optIdx[a.txn]] = true
		}
	}
}

// optional reports whether t is an optional unknown-status transaction.
func (c *checker) optional(t history.TxnID) bool { return c.optIdx != nil && c.optIdx[t] >= 0 }

// incl is the inclusion literal of optional transaction t.
func (ch *chooser) incl(t history.TxnID) cnf.Lit { return cnf.Lit(ch.inclVar[ch.c.optIdx[t]]) }

// initOptional creates the inclusion variables, excludes the transactions
// that cannot commit, and activates every read an optional transaction
// takes part in (its preferred candidate must not be a transaction left
// out), preferring candidates that are certainly committed.
func (ch *chooser) initOptional() {
	c := ch.c
	if len(c.opt) == 0 {
		return
	}
	ch.inclVar = make([]int32, len(c.opt))
	for k := range c.opt {
		ch.nv++
		ch.setVar(ch.nv, -1, -1)
		ch.inclVar[k] = ch.nv
		if c.optOut[k] {
			ch.s.AddClause([]cnf.Lit{cnf.Lit(ch.nv).Not()})
		}
	}
	ch.optMark = make([]int32, c.n)
	for i := range c.amb {
		a := &c.amb[i]
		involved := c.optional(a.txn)
		for _, w := range a.cands {
			involved = involved || c.optional(w)
		}
		if !involved {
			continue
		}
		if len(a.cands) > 0 && c.optional(a.cands[ch.pref[i]]) {
			for j, w := range a.cands {
				if !c.optional(w) {
					ch.pref[i], ch.choice[i] = int32(j), int32(j)
					break
				}
			}
		}
		ch.activate(i)
	}
}

// readInclusion takes the optional transactions of the solver's model as
// committed (c.in) and rebuilds the session lists.
func (ch *chooser) readInclusion() {
	c := ch.c
	if len(c.opt) == 0 {
		return
	}
	for k, t := range c.opt {
		v := ch.s.Value(ch.inclVar[k])
		if v != c.in[t] {
			c.in[t] = v
			if v {
				c.nIn++
			} else {
				c.nIn--
			}
		}
	}
	ch.includedSessions()
}

// includedSessions keeps in each session list the transactions included
// now, and fills prevIn from them.
func (ch *chooser) includedSessions() {
	c := ch.c
	for s, ss := range c.h.Sessions {
		c.sess[s] = c.sess[s][:0]
		for _, t := range ss.Txns {
			if c.in[t] {
				c.sess[s] = append(c.sess[s], t)
			}
		}
	}
	ch.setSessions()
}

// setSessions fills prevIn from the session lists.
func (ch *chooser) setSessions() {
	for _, txs := range ch.c.sess {
		p := history.InitTxn
		for _, t := range txs {
			ch.prevIn[t] = p
			p = t
		}
	}
}

// optDep records that the cycle being explained needs t included.
func (ch *chooser) optDep(t history.TxnID) {
	if ch.c.optional(t) && ch.optMark[t] != ch.round {
		ch.optMark[t] = ch.round
		ch.optDeps = append(ch.optDeps, t)
	}
}

// included lists in res the unknown-status transactions of the model.
func (ch *chooser) included(res *Result) {
	c := ch.c
	if len(c.opt) == 0 {
		return
	}
	res.Included = res.Included[:0]
	for t := range c.n {
		if c.in[t] && c.h.Txns[t].Status == history.Unknown {
			res.Included = append(res.Included, history.TxnID(t))
		}
	}
	res.Counters["unknown_taken"] = int64(len(res.Included))
}

// preferredInclusion takes as committed the optional transactions the
// preferred choices of the reads taken read from (transitively), for the
// report of a violation found before any model. It reports false if a
// transaction so taken has a read no transaction could have written.
func (ch *chooser) preferredInclusion() bool {
	c := ch.c
	if len(c.opt) == 0 {
		return true
	}
	for changed := true; changed; {
		changed = false
		for i, a := range c.amb {
			if !c.in[a.txn] || len(a.cands) == 0 {
				continue
			}
			if w := a.cands[ch.choice[i]]; !c.in[w] {
				c.in[w] = true
				c.nIn++
				changed = true
			}
		}
	}
	ch.includedSessions()
	for _, a := range c.amb {
		if c.in[a.txn] && len(a.cands) == 0 {
			return false
		}
	}
	return true
}

// excludedFindings returns the findings forbidden at the level of the
// optional transactions taken that cannot commit.
func (ch *chooser) excludedFindings() []history.Finding {
	c := ch.c
	var out []history.Finding
	for _, f := range c.h.ValidateTxns(func(t history.TxnID) bool { return c.optional(t) && c.in[t] }) {
		if f.Kind.ForbiddenAt(c.level) {
			out = append(out, f)
		}
	}
	return out
}
