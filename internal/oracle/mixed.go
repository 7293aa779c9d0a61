package oracle

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

// Mixed decides whether h is consistent in MixIso's sense (Definition 3.5 of
// "On Mixing Database Isolation Levels"): some abstract execution (a
// visibility relation VIS inside a total arbitration order AR) satisfies,
// for every transaction, the axioms of Table 2 for its own level. A
// transaction's level is the one it declares (RC, RA, CC, PC, PSI, SI or
// SER), or def when it declares none. Strict SER and list operations are
// refused.
//
// RC is outside MixIso; hyperiso extends it (docs/mixed.md) so that uniform
// RC is the RC of Check. An RC transaction T has a visible set VIS(T) that
// holds its session predecessors (SESSION), as every other level's does, and
// that is what the other transactions' TRANSVis and PREFIX see of it. Its
// own reads, though, are read committed: each read event r (p.rcReads) has
// its own visible set V(r) ⊆ VIS(T), the sets grow in program order, and r
// returns the write of the last writer of its key in V(r) by AR (EXT per
// read). Its internal reads need only follow its own writes (p.rcOK).
//
// The search is by brute force and independent of every checker: for each
// subset of the unknown-status transactions taken as committed, it builds AR
// one transaction at a time (T⊥ first, session order respected, since
// SESSION puts it inside VIS), and for each transaction placed chooses its
// visible set among the transactions placed before it. Every axiom of a
// transaction looks only at transactions before it in AR and at their
// visible sets, which are already chosen, so each is checked as soon as
// the transaction is placed.
func Mixed(h *history.History, def history.Level) (bool, error) {
	p, level, err := prepareMixed(h, def)
	if err != nil {
		return false, err
	}
	for mask := 0; mask < 1<<len(p.unknown); mask++ {
		c := p.members(mask)
		m := &mixed{p: p, c: c, level: level, vis: make([]uint64, len(c.txns)), pos: make([]int, len(c.txns))}
		if m.consistent() {
			return true, nil
		}
	}
	return false, nil
}

// MixedWitness reports whether a witness of a mixed check holds: order is
// AR over the transactions taken as committed (T⊥ left out; every
// committed transaction in it, no aborted one), and snaps[i] is, for a
// transaction at PC, SI or SER, how many of order (from its start) it
// sees, or -1 for the others. The prefix levels' visible sets are so
// fixed; those of the others are searched by brute force, as Mixed does.
func MixedWitness(h *history.History, def history.Level, order []history.TxnID, snaps []int) (bool, error) {
	p, level, err := prepareMixed(h, def)
	if err != nil {
		return false, err
	}
	if len(snaps) != len(order) {
		return false, fmt.Errorf("oracle: %d snapshots for %d transactions", len(snaps), len(order))
	}
	taken := map[history.TxnID]bool{}
	for _, t := range order {
		if t <= history.InitTxn || int(t) >= len(h.Txns) || taken[t] || h.Txns[t].Status == history.Aborted {
			return false, nil
		}
		taken[t] = true
	}
	mask := 0
	for i, u := range p.unknown {
		if taken[u] {
			mask |= 1 << i
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status == history.Committed && !taken[history.TxnID(t)] {
			return false, nil
		}
	}
	c := p.members(mask)
	m := &mixed{p: p, c: c, level: level, vis: make([]uint64, len(c.txns)), pos: make([]int, len(c.txns))}
	m.fixed = make([]int, len(c.txns)+1)
	m.fixed[0] = -1
	for i, t := range order {
		m.fixed[i+1] = c.local[t]
	}
	m.snap = make([]int, len(c.txns))
	for i, t := range order {
		j := c.local[t]
		m.snap[j] = snaps[i]
		if l := level[t]; (l == history.PC || l == history.SI || l == history.SER) != (snaps[i] >= 0) || snaps[i] > i {
			return false, nil
		}
	}
	return m.consistent(), nil
}

// prepareMixed prepares h for the mixed searches, with each transaction's
// level.
func prepareMixed(h *history.History, def history.Level) (*prep, []history.Level, error) {
	p, err := prepare(h)
	if err != nil {
		return nil, nil, err
	}
	level := make([]history.Level, len(h.Txns))
	for t := range h.Txns {
		l := h.Txns[t].Level
		if l == history.LevelNone {
			l = def
		}
		if t == int(history.InitTxn) || h.Txns[t].Status == history.Aborted && l == history.LevelNone {
			l = history.SER // T⊥ reads nothing; aborted transactions take no part
		}
		switch l {
		case history.RC, history.RA, history.CC, history.PC, history.PSI, history.SI, history.SER:
		default:
			return nil, nil, fmt.Errorf("oracle: transaction %d at level %q: the mixed oracle covers rc, ra, cc, pc, psi, si and ser", t, l)
		}
		level[t] = l
		for _, op := range h.Txns[t].Ops {
			if op.Kind == history.OpAppend || op.Kind == history.OpReadList {
				return nil, nil, fmt.Errorf("oracle: the mixed oracle reads no list operations")
			}
		}
	}
	return p, level, nil
}

// mixed is the search over one choice of committed transactions. Members
// are numbered by their index in c.txns (T⊥ is 0); vis[i] is the visible
// set of member i as a bit set over members, pos[i] its place in AR.
type mixed struct {
	p     *prep
	c     *cset
	level []history.Level
	order []int // AR so far, as member indices
	vis   []uint64
	pos   []int
	ok    bool
	// fixed, when set, is AR as member indices (fixed[0] unused): only
	// that order is tried. snap[i] >= 0 then fixes member i's visible set
	// to the first snap[i] members of it (T⊥ always seen).
	fixed []int
	snap  []int
}

func (m *mixed) consistent() bool {
	for _, t := range m.c.txns {
		if m.level[t] == history.RC && !m.p.rcOK[t] || m.level[t] != history.RC && !m.p.intOK[t] {
			return false // INT fails whatever VIS and AR are
		}
	}
	m.order = append(m.order[:0], 0)
	m.vis[0], m.pos[0] = 0, 0
	m.place()
	return m.ok
}

// place extends AR by every member that may come next, and recurses.
func (m *mixed) place() {
	n := len(m.c.txns)
	if len(m.order) == n {
		m.ok = true
		return
	}
	placed := uint64(0)
	for _, i := range m.order {
		placed |= 1 << i
	}
	for i := 1; i < n && !m.ok; i++ {
		if placed&(1<<i) != 0 || !m.sessionReady(i, placed) || m.fixed != nil && m.fixed[len(m.order)] != i {
			continue
		}
		m.pos[i] = len(m.order)
		m.order = append(m.order, i)
		// Every subset of the placed members that holds T⊥ and the session
		// predecessors (SESSION) is a candidate visible set.
		must := m.soPreds(i) | 1
		free := placed &^ must
		if m.fixed != nil && m.snap[i] >= 0 {
			// The witness fixes it: the first snap[i] of AR after T⊥,
			// which must hold the session predecessors.
			pre := uint64(1)
			for _, j := range m.order[1 : 1+m.snap[i]] {
				pre |= 1 << j
			}
			if must&^pre != 0 {
				m.order = m.order[:len(m.order)-1]
				continue
			}
			must, free = pre, 0
		}
		for sub := free; ; sub = (sub - 1) & free {
			m.vis[i] = must | sub
			if m.axioms(i, placed) {
				m.place()
				if m.ok {
					return
				}
			}
			if sub == 0 {
				break
			}
		}
		m.order = m.order[:len(m.order)-1]
	}
}

// soPreds is the set of members before member i in its session.
func (m *mixed) soPreds(i int) uint64 {
	t := m.c.txns[i]
	var s uint64
	for j, u := range m.c.txns {
		if m.p.soBefore(u, t) {
			s |= 1 << j
		}
	}
	return s
}

// sessionReady reports whether every session predecessor of member i is
// placed.
func (m *mixed) sessionReady(i int, placed uint64) bool {
	return m.soPreds(i)&^placed == 0
}

// axioms checks Table 2 for member i, just placed last in AR with visible
// set m.vis[i]; before is the set of members placed before it.
func (m *mixed) axioms(i int, before uint64) bool {
	t := m.c.txns[i]
	v := m.vis[i]
	l := m.level[t]
	if l == history.RC {
		// RC has no axiom beyond SESSION on VIS; its reads see growing
		// subsets of it.
		return m.rcReads(t, v, 0, 0)
	}
	// EXT: each external read returns the write of the last visible writer
	// in AR.
	for _, r := range m.p.ext[t] {
		if !m.ext(r, v) {
			return false
		}
	}
	trans := l == history.CC || l == history.PSI
	prefix := l == history.PC || l == history.SI
	noConflict := l == history.PSI || l == history.SI
	for j := range m.c.txns {
		bit := uint64(1) << j
		switch {
		case v&bit != 0:
			// TRANSVis: what a visible transaction sees is visible too.
			if trans && m.vis[j]&^v != 0 {
				return false
			}
			// PREFIX: whatever precedes a visible transaction in AR is
			// visible too.
			if prefix {
				for k := range m.c.txns {
					if before&(1<<k) != 0 && m.pos[k] < m.pos[j] && v&(1<<k) == 0 {
						return false
					}
				}
			}
		case before&bit != 0:
			// An earlier transaction that is not visible: SER sees all of
			// them (TOTALVis), PSI and SI those that write a key t writes
			// (NoConflict).
			if l == history.SER || noConflict && m.conflict(t, m.c.txns[j]) {
				return false
			}
		}
	}
	return true
}

// ext reports whether read r returns the write of the last writer of its
// key in the set v by AR.
func (m *mixed) ext(r readEv, v uint64) bool {
	last, at := -1, -1
	for j := range m.c.txns {
		if v&(1<<j) != 0 && m.p.writes(m.c.txns[j], r.key) && m.pos[j] > at {
			last, at = j, m.pos[j]
		}
	}
	return last >= 0 && m.p.final[m.c.txns[last]][r.key] == r.val
}

// rcReads chooses the visible sets of RC transaction t's read events from
// the i-th on: each a subset of vis that contains prev, the set of the read
// event before it.
func (m *mixed) rcReads(t history.TxnID, vis uint64, i int, prev uint64) bool {
	evs := m.p.rcReads[t]
	if i == len(evs) {
		return true
	}
	free := vis &^ prev
	for sub := free; ; sub = (sub - 1) & free {
		if v := prev | sub; m.ext(evs[i], v) && m.rcReads(t, vis, i+1, v) {
			return true
		}
		if sub == 0 {
			return false
		}
	}
}

// conflict reports whether t and u write a common key.
func (m *mixed) conflict(t, u history.TxnID) bool {
	for k, v := range m.p.final[t] {
		if v >= 0 && m.p.writes(u, history.KeyID(k)) {
			return true
		}
	}
	return false
}
