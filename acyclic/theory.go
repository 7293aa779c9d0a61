// Package acyclic is the theory of hyperiso's CDCL(T) solver: it keeps the
// graph chosen so far (the pruned known graph, less arcs that other known
// arcs imply, plus the edges of every true literal, with the RW edges they
// derive) acyclic in a Pearce–Kelly dynamic
// topological order, explains each cycle as a conflict clause over the
// literals behind its edges, and suggests decision polarities from the
// order, which starts from the history's own order (file position or
// completion time: Priority also orders decisions by it), so that on the
// common satisfied history the first guesses are nearly all right. For SI
// the graph is the doubled graph whose acyclicity is that of
// the induced graph (SO ∪ WR ∪ WW) ; RW?. For PC it is the graph of
// snapshots and commits (hyperpolygraph.PCArc), whose arcs s(t)→c(t) are
// certain and explain nothing. For PSI it is SO ∪ WR ∪ WW alone, kept
// acyclic, with the RW edges beside it, none of which may have its head
// reaching its tail (psi.go). The variables of an encoding's
// optional part (unknown-status transactions the solver decides) each put
// their one edge in the graph when true, and derive RW edges with the
// certain part's as the version-order and read-from variables do; their
// inclusion variables add nothing.
//
// It does not propagate (imply the negation of a literal whose edge would
// close a cycle): done with budgeted searches around each inserted edge, it
// made the bench histories up to 7× slower and HD-10k time out, for rare
// implications that saved conflicts only where the searches cost far more
// (docs/bench/cdcl/README.md).
package acyclic

import (
	"slices"

	"github.com/hyperiso/hyperiso/cnf"
	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
	"github.com/hyperiso/hyperiso/pk"
)

// reason explains one edge: the literals (up to two) that put it in the
// graph; 0 marks an unused slot. Certain edges have no reason record: the
// pk reason -(i+1) stands for Theory.certain[i] (there can be tens of
// millions).
type reason struct {
	edge hyperpolygraph.Edge
	l1   cnf.Lit
	l2   cnf.Lit
}

type undoMark struct {
	pkEdges int32 // pk edges inserted
	rwEdges int32 // PSI: RW edges inserted beside pk
	// incomplete counts PSI's checks after G-edge insertions that ran out
	// of budget: while any is undone, a full assignment is re-checked.
	incomplete int32
	reasons    int32 // len(reasons) before the Assign
	pushed     int32 // len(pushed) before the Assign
}

// pushRec records a literal added to a trueWR (or, with ww, trueWW) list.
type pushRec struct {
	wi int32 // index into Theory.infos
	ww bool
}

// writerKey names the writes of one transaction to one key.
type writerKey struct {
	k history.KeyID
	t history.TxnID
}

// writerInfo is what deriving RW edges needs about writer t of key k.
type writerInfo struct {
	pairs        []int32         // indices into g.WW that involve t
	knownSucc    []history.TxnID // t →WW s known
	knownReaders []history.TxnID // t →WR r known
	// The true literals whose edges leave t on k: read-from edges (with
	// their reader), and version orders of the optional part (with the
	// later writer; the pairs' variables are looked up through pairs).
	trueWR, trueWW []litTo
}

// litTo is a positive literal whose edge leaves the writer it is listed
// under, and that edge's target.
type litTo struct {
	lit cnf.Lit
	to  history.TxnID
}

// Polarity says how Phase chooses the polarity of a decision.
type Polarity int

const (
	// NoPolarity leaves every decision to the solver's phase saving.
	NoPolarity Polarity = iota
	// OrderPolarity makes a decision positive iff the edge it would add
	// agrees with the current topological order (VeriStrong's rule).
	OrderPolarity
	// LatestWriterPolarity is OrderPolarity for write-write variables; a
	// read-from candidate w of reader r is chosen only if w precedes r and
	// no other candidate still possible lies between them in the order: a
	// read that agrees with the order is most likely from the last such
	// writer, and taking an earlier one orders it before the writers in
	// between, which is what order-guided read-from decisions got wrong on
	// histories with many duplicate values.
	LatestWriterPolarity
)

// Theory implements cdcl.Theory for one encoding.
type Theory struct {
	enc    *encode.Encoding
	g      *hyperpolygraph.Graph
	si, pc bool
	psi    *psiState // PSI's RW edges and G adjacency; nil at other levels
	layers int       // graph states per transaction (hyperpolygraph.StateArcs)
	pk     *pk.Graph
	// writers indexes infos by (key, writer). For SER and SI it holds only
	// the writers that some variable's edge leaves (of a WW pair, a
	// read-from candidate, an optional part's edge): RW derivation looks
	// up no other, and the known-only writers were millions of entries at
	// scale. PC and PSI derive RW edges from known edges too (knownRW), so
	// there it holds every writer. Indices rather than pointers leave the
	// map and the records nothing for the garbage collector to chase.
	writers map[writerKey]int32
	infos   []writerInfo
	// value[v] is 0 unassigned, 1 true, -1 false (as seen by the theory).
	value   []int8
	reasons []reason
	pushed  []pushRec
	// undo[i] records what the i-th Assign inserted, for LIFO undo; undo[0]
	// stands for the certain edges and is never undone.
	undo []undoMark
	// Polarity says how Phase chooses polarities.
	Polarity Polarity
	// ids renames graph states to pk nodes so that pk's initial order is a
	// topological order of the known graph: inserting the known edges then
	// never reorders (in arbitrary order it dominated solving time).
	ids []int32
	// hint[x] is transaction x's place in the history's own order
	// (hintOrder).
	hint []int32
	// certain is the known graph's edges, for PC with the RW edges they
	// derive (knownRW); pk reason -(i+1) stands for certain[i].
	certain []hyperpolygraph.Edge
	// Cycle is the last cycle found, as edges, for reports.
	Cycle []hyperpolygraph.Edge
	// Conflicts counts the cycles reported.
	Conflicts int64
	// KnownRW counts the RW edges derived from known edges (PC, PSI).
	KnownRW int64
	// FullChecks counts PSI's re-checks of full assignments.
	FullChecks int64
	// KnownArcsDropped counts the known arcs left out of pk as redundant
	// (reduceKnown).
	KnownArcsDropped int64
}

// New builds the theory for enc; the known graph must be acyclic (pruning
// guarantees it; otherwise New returns the cycle).
func New(enc *encode.Encoding, polarity Polarity) (*Theory, []hyperpolygraph.Edge) {
	return newTheory(enc, polarity, false, false, true)
}

// NewUnhinted is New without the history's own order (hintOrder): pk
// starts from an arbitrary topological order of the known graph and
// Priority is 0. It is the path before the hint, kept for comparison.
func NewUnhinted(enc *encode.Encoding, polarity Polarity) (*Theory, []hyperpolygraph.Edge) {
	return newTheory(enc, polarity, false, false, false)
}

// NewPC builds the theory of PC's graph of snapshots and commits for enc,
// whose graph has one state per transaction (it is built at level SER), or
// returns a cycle of the known graph.
func NewPC(enc *encode.Encoding, polarity Polarity) (*Theory, []hyperpolygraph.Edge) {
	return newTheory(enc, polarity, true, false, true)
}

// NewPSI builds the theory of PSI for enc, whose graph has one state per
// transaction (it is built at level SER): SO ∪ WR ∪ WW stays acyclic and no
// RW edge has its head reaching its tail through it. It returns instead a
// forbidden cycle of the known graph.
func NewPSI(enc *encode.Encoding, polarity Polarity) (*Theory, []hyperpolygraph.Edge) {
	return newTheory(enc, polarity, false, true, true)
}

func newTheory(enc *encode.Encoding, polarity Polarity, pc, psi, hint bool) (*Theory, []hyperpolygraph.Edge) {
	g := enc.G
	t := &Theory{enc: enc, g: g, si: g.Level == history.SI && !pc, pc: pc, layers: g.Layers(),
		writers: map[writerKey]int32{}, value: make([]int8, enc.NumVars+1), Polarity: polarity}
	if t.pc {
		t.layers = 2
	}
	// info returns writer w of key k, added if absent and add is set, else
	// nil if absent. Pointers into infos stay valid only until the next add.
	info := func(k history.KeyID, w history.TxnID, add bool) *writerInfo {
		wk := writerKey{k, w}
		i, ok := t.writers[wk]
		if !ok {
			if !add {
				return nil
			}
			i = int32(len(t.infos))
			t.infos = append(t.infos, writerInfo{})
			t.writers[wk] = i
		}
		return &t.infos[i]
	}
	for i, p := range g.WW {
		a := info(p.Key, p.A, true)
		a.pairs = append(a.pairs, int32(i))
		b := info(p.Key, p.B, true)
		b.pairs = append(b.pairs, int32(i))
	}
	for _, s := range g.WR {
		for _, c := range s.Cands {
			info(s.Key, c, true)
		}
	}
	for v := int32(enc.NumVars); v > 0 && enc.IsOpt(v); v-- {
		for _, e := range enc.Asserts(v) {
			info(e.Key, e.From, true)
		}
	}
	allWriters := t.pc || psi || allWritersForTest
	for _, e := range g.Known {
		if e.Rel != hyperpolygraph.WW && e.Rel != hyperpolygraph.WR {
			continue
		}
		wi := info(e.Key, e.From, allWriters)
		if wi == nil {
			continue
		}
		if e.Rel == hyperpolygraph.WW {
			wi.knownSucc = append(wi.knownSucc, e.To)
		} else {
			wi.knownReaders = append(wi.knownReaders, e.To)
		}
	}
	if t.pc || psi {
		t.thinKnownSucc()
	}
	t.certain = g.Known
	if t.pc || psi {
		rw := t.knownRW()
		t.KnownRW = int64(len(rw))
		t.certain = append(slices.Clip(g.Known), rw...)
	}
	n := t.layers * g.N()
	t.pk = pk.New(n)
	if psi {
		t.psi = newPSIState(n)
	}
	var kr *knownRows
	t.ids, kr = t.knownOrder(n, hint)
	t.undo = append(t.undo, undoMark{})
	if kr != nil {
		// The reduced known arcs, each with its edge's reason. The graph is
		// acyclic (knownOrder reduces only then) and pk's order is
		// topological, so none closes a cycle; taken by source in that
		// order, pk's node records and out-lists fill front to back.
		byPos := make([]int32, n)
		for u, p := range t.ids {
			byPos[p] = int32(u)
		}
		for _, u := range byPos {
			for j := kr.off[u]; j < kr.off[u+1]; j++ {
				if !kr.drop[j] {
					t.insertArc(u, kr.succ[j], -kr.edge[j]-1)
				}
			}
		}
	} else {
		for i, e := range t.certain {
			if cyc := t.insert(e, -int32(i)-1); cyc != nil {
				return nil, t.Cycle
			}
		}
	}
	if psi {
		// The known edges went in unchecked against RW edges: check them all.
		t.psi.setup = false
		if c := t.psiFull(); c != nil {
			return nil, t.Cycle
		}
	}
	if t.pc {
		// s(x)→c(x), with pk reason -(len(certain)+x+1): no edge, no literal.
		for x := range int32(g.N()) {
			if cyc := t.insertArc(2*x, 2*x+1, -int32(len(t.certain))-x-1); cyc != nil {
				return nil, t.Cycle
			}
		}
	}
	return t, nil
}

// knownRW returns the RW edges that known WW and WR edges derive: a reader
// of a version precedes every writer known to follow it. SER's and SI's
// pruning puts them in the known graph; PC's (PruneMixed) does not.
func (t *Theory) knownRW() []hyperpolygraph.Edge {
	var out []hyperpolygraph.Edge
	for _, e := range t.g.Known { // not the map: the same order every run
		if e.Rel != hyperpolygraph.WR {
			continue
		}
		for _, succ := range t.infos[t.writers[writerKey{e.Key, e.From}]].knownSucc {
			if succ != e.To {
				out = append(out, hyperpolygraph.Edge{From: e.To, To: succ, Rel: hyperpolygraph.RW, Key: e.Key})
			}
		}
	}
	return out
}

// thinKnownSucc drops from each writer's known successors those known to
// follow another one it keeps: a reader r of w's version with r →RW s1 and
// s1 →WW s known needs no r →RW s. In PC's state graph s(r) → c(s1) → c(s)
// already holds (with r = s1, s(r) → c(r) → c(s)); for PSI, s ⇝ r would
// give s1 ⇝ r (with r = s1, a cycle of G). Neither changes what is
// reachable or forbidden, and on histories whose pruning orders every pair
// it leaves one RW edge per read instead of one per later writer. SI's
// doubled graph has no such arc chain, and SER's pruning puts its RW edges
// in the known graph, so they keep every successor.
func (t *Theory) thinKnownSucc() {
	byKey := map[history.KeyID][]history.TxnID{}
	for wk, i := range t.writers {
		if len(t.infos[i].knownSucc) > 0 {
			byKey[wk.k] = append(byKey[wk.k], wk.t)
		}
	}
	// Per transaction: its writerInfo on the key being thinned; stamps:
	// inS marks the successors of the writer being thinned, seen those
	// already kept or dropped.
	n := t.g.N()
	info := make([]*writerInfo, n)
	inS, seen := make([]int32, n), make([]int32, n)
	stamp := int32(0)
	for k, ws := range byKey {
		for _, w := range ws {
			info[w] = &t.infos[t.writers[writerKey{k, w}]]
		}
		succ := func(s history.TxnID) []history.TxnID {
			if si := info[s]; si != nil {
				return si.knownSucc
			}
			return nil
		}
		thin := make([][]history.TxnID, len(ws))
		for i, w := range ws {
			all := info[w].knownSucc
			if len(all) < 2 {
				thin[i] = all
				continue
			}
			stamp++
			for _, s := range all {
				inS[s] = stamp
			}
			// Greedily keep the successor with the most known successors
			// and drop those, until every one is kept or dropped: one round
			// when the key's known version order is total. After a few
			// rounds the rest is kept as it is (each costs len(all)).
			left := len(all)
			var keep []history.TxnID
			for round := 0; left > 0; round++ {
				if round == 4 {
					for _, s := range all {
						if seen[s] != stamp {
							keep = append(keep, s)
						}
					}
					break
				}
				best, bestN := history.TxnID(-1), -1
				for _, s := range all {
					if seen[s] != stamp && len(succ(s)) > bestN {
						best, bestN = s, len(succ(s))
					}
				}
				keep = append(keep, best)
				seen[best] = stamp
				left--
				for _, s := range succ(best) {
					if inS[s] == stamp && seen[s] != stamp {
						seen[s] = stamp
						left--
					}
				}
			}
			thin[i] = keep
		}
		// Every writer of the key thinned from the full lists: now replace.
		for i, w := range ws {
			info[w].knownSucc = thin[i]
		}
		for _, w := range ws {
			info[w] = nil
		}
	}
}

// addEdge inserts e, put there by literals l1 and l2, and returns the
// conflict clause if it closes a cycle.
func (t *Theory) addEdge(e hyperpolygraph.Edge, l1, l2 cnf.Lit) []cnf.Lit {
	r := int32(len(t.reasons))
	t.reasons = append(t.reasons, reason{e, l1, l2})
	return t.insert(e, r)
}

// insert adds e with pk reason r and returns the conflict clause if it
// closes a cycle.
func (t *Theory) insert(e hyperpolygraph.Edge, r int32) []cnf.Lit {
	if t.psi != nil {
		return t.insertPSI(e, r)
	}
	if t.pc {
		u, v := hyperpolygraph.PCArc(e.From, e.To, e.Rel)
		return t.insertArc(u, v, r)
	}
	u1, v1, u2, v2, two := hyperpolygraph.StateArcs(e.From, e.To, e.Rel == hyperpolygraph.RW, t.layers)
	if c := t.insertArc(u1, v1, r); c != nil || !two {
		return c
	}
	return t.insertArc(u2, v2, r)
}

// insertArc adds the pk edge of arc u→v between graph states.
func (t *Theory) insertArc(u, v, r int32) []cnf.Lit {
	cyc, ok := t.pk.AddEdge(t.ids[u], t.ids[v], r)
	if !ok {
		return t.explain(append(cyc, r))
	}
	t.undo[len(t.undo)-1].pkEdges++
	return nil
}

// explain turns a cycle of reasons into a clause of negated literals.
func (t *Theory) explain(cyc []int32) []cnf.Lit {
	t.Conflicts++
	t.Cycle = t.Cycle[:0]
	var clause []cnf.Lit
	seen := map[cnf.Lit]bool{}
	for _, ri := range cyc {
		if ri < 0 {
			if k := -ri - 1; int(k) < len(t.certain) {
				t.Cycle = append(t.Cycle, t.certain[k])
			} // else PC's arc s(x)→c(x), which is no edge
			continue
		}
		r := t.reasons[ri]
		t.Cycle = append(t.Cycle, r.edge)
		for _, l := range [2]cnf.Lit{r.l1, r.l2} {
			if l != 0 && !seen[l] {
				seen[l] = true
				clause = append(clause, -l)
			}
		}
	}
	if clause == nil {
		clause = []cnf.Lit{}
	}
	return clause
}

// Assign adds the edges literal l asserts, and the RW edges they derive.
// For PSI, a full assignment that some bounded check left unproven is
// re-checked in full.
func (t *Theory) Assign(l cnf.Lit) []cnf.Lit {
	c := t.assign(l)
	if c == nil && t.psi != nil && t.psi.incomplete > 0 && len(t.undo)-1 == t.enc.NumVars {
		c = t.psiFull()
	}
	return c
}

func (t *Theory) assign(l cnf.Lit) []cnf.Lit {
	t.undo = append(t.undo, undoMark{reasons: int32(len(t.reasons)), pushed: int32(len(t.pushed))})
	v := int32(l.Var())
	if l > 0 {
		t.value[v] = 1
	} else {
		t.value[v] = -1
	}
	if t.enc.IsOpt(v) {
		if l < 0 {
			return nil // the edge of an optional part's variable is absent
		}
		for _, e := range t.enc.Asserts(v) {
			if c := t.addEdge(e, l, 0); c != nil {
				return c
			}
			var c []cnf.Lit
			if e.Rel == hyperpolygraph.WW {
				c = t.afterWW(e.Key, e.From, e.To, l)
			} else {
				c = t.afterWR(e.Key, e.From, e.To, l)
			}
			if c != nil {
				return c
			}
		}
		return nil
	}
	if i, ok := t.enc.IsWW(v); ok {
		p := t.g.WW[i]
		from, to := p.A, p.B
		if l < 0 {
			from, to = to, from
		}
		e := hyperpolygraph.Edge{From: from, To: to, Rel: hyperpolygraph.WW, Key: p.Key}
		if c := t.addEdge(e, l, 0); c != nil {
			return c
		}
		return t.afterWW(p.Key, from, to, l)
	}
	if l < 0 {
		return nil // a read-from that did not happen asserts nothing
	}
	set, cand, _ := t.enc.WRSet(v)
	s := t.g.WR[set]
	w := s.Cands[cand]
	if c := t.addEdge(hyperpolygraph.Edge{From: w, To: s.Reader, Rel: hyperpolygraph.WR, Key: s.Key}, l, 0); c != nil {
		return c
	}
	return t.afterWR(s.Key, w, s.Reader, l)
}

// afterWW adds the RW edges that WW edge from→to on key x, put there by l,
// derives: everyone who read from's version of x now precedes to.
func (t *Theory) afterWW(x history.KeyID, from, to history.TxnID, l cnf.Lit) []cnf.Lit {
	i := t.writer(x, from)
	wi := &t.infos[i]
	t.keep(i, litTo{l, to}, true)
	for _, r := range wi.knownReaders {
		if r != to {
			if c := t.addEdge(hyperpolygraph.Edge{From: r, To: to, Rel: hyperpolygraph.RW, Key: x}, l, 0); c != nil {
				return c
			}
		}
	}
	for _, wl := range wi.trueWR {
		if wl.to == to {
			continue
		}
		if c := t.addEdge(hyperpolygraph.Edge{From: wl.to, To: to, Rel: hyperpolygraph.RW, Key: x}, l, wl.lit); c != nil {
			return c
		}
	}
	return nil
}

// afterWR adds the RW edges that WR edge w→r on key x, put there by l,
// derives: r precedes every writer ordered after w.
func (t *Theory) afterWR(x history.KeyID, w, r history.TxnID, l cnf.Lit) []cnf.Lit {
	i := t.writer(x, w)
	wi := &t.infos[i]
	t.keep(i, litTo{l, r}, false)
	for _, succ := range wi.knownSucc {
		if succ != r {
			if c := t.addEdge(hyperpolygraph.Edge{From: r, To: succ, Rel: hyperpolygraph.RW, Key: x}, l, 0); c != nil {
				return c
			}
		}
	}
	for _, pi := range wi.pairs {
		p := t.g.WW[pi]
		pv := t.value[t.enc.WWVar[pi]]
		var succ history.TxnID
		var wl cnf.Lit
		switch {
		case pv == 1 && p.A == w:
			succ, wl = p.B, cnf.Lit(t.enc.WWVar[pi])
		case pv == -1 && p.B == w:
			succ, wl = p.A, -cnf.Lit(t.enc.WWVar[pi])
		default:
			continue
		}
		if succ != r {
			if c := t.addEdge(hyperpolygraph.Edge{From: r, To: succ, Rel: hyperpolygraph.RW, Key: x}, l, wl); c != nil {
				return c
			}
		}
	}
	for _, wl := range wi.trueWW {
		if wl.to == r {
			continue
		}
		if c := t.addEdge(hyperpolygraph.Edge{From: r, To: wl.to, Rel: hyperpolygraph.RW, Key: x}, l, wl.lit); c != nil {
			return c
		}
	}
	return nil
}

// allWritersForTest makes SER and SI keep every writer, as PC and PSI do:
// the theory before it kept only those a variable's edge leaves, for the
// differential test.
var allWritersForTest bool

// writer returns the index in infos of writer w of key k, which a
// variable's edge leaves and newTheory therefore recorded.
func (t *Theory) writer(k history.KeyID, w history.TxnID) int32 {
	i, ok := t.writers[writerKey{k, w}]
	if !ok {
		// A missing record would silently drop RW edges: a wrong verdict.
		panic("acyclic: no record of a writer some variable's edge leaves")
	}
	return i
}

// Unassign removes what the matching Assign inserted.
func (t *Theory) Unassign(l cnf.Lit) {
	m := t.undo[len(t.undo)-1]
	t.undo = t.undo[:len(t.undo)-1]
	if t.psi != nil {
		t.psi.undo(t.pk, m)
	}
	for range m.pkEdges {
		t.pk.RemoveLast()
	}
	t.reasons = t.reasons[:m.reasons]
	for i := len(t.pushed) - 1; i >= int(m.pushed); i-- {
		p := t.pushed[i]
		wi := &t.infos[p.wi]
		if p.ww {
			wi.trueWW = wi.trueWW[:len(wi.trueWW)-1]
		} else {
			wi.trueWR = wi.trueWR[:len(wi.trueWR)-1]
		}
	}
	t.pushed = t.pushed[:m.pushed]
	t.value[l.Var()] = 0
}

// keep lists l, a true literal whose edge leaves writer infos[i], for the RW
// edges later literals derive with it: as a read-from (ww false) or, when
// l is a variable of the optional part, a version order (core pairs are
// found through wi.pairs).
func (t *Theory) keep(i int32, l litTo, ww bool) {
	wi := &t.infos[i]
	switch {
	case !ww:
		wi.trueWR = append(wi.trueWR, l)
	case t.enc.IsOpt(l.lit.Var()):
		wi.trueWW = append(wi.trueWW, l)
	default:
		return
	}
	t.pushed = append(t.pushed, pushRec{i, ww})
}

// Phase picks a decision's polarity as t.Polarity says: so that the edge it
// adds agrees with the current topological order, and for LatestWriter
// choosing only the latest read-from candidate before the reader.
func (t *Theory) Phase(v int32) (bool, bool) {
	if t.Polarity == NoPolarity {
		return false, false
	}
	if t.Polarity == LatestWriterPolarity {
		if set, cand, ok := t.enc.WRSet(v); ok {
			return t.latestWriter(set, cand), true
		}
	}
	e, ok := t.enc.EdgeOf(cnf.Lit(v))
	if !ok {
		// An inclusion variable: leaving a transaction out adds no edge.
		return false, true
	}
	return t.level(e.From) < t.level(e.To), true
}

// latestWriter reports whether candidate cand of read-from set set precedes
// the reader with no candidate not yet ruled out between them.
func (t *Theory) latestWriter(set, cand int) bool {
	s := t.g.WR[set]
	lr, lw := t.level(s.Reader), t.level(s.Cands[cand])
	if lw >= lr {
		return false
	}
	base := t.enc.WRBase[set]
	for j, c := range s.Cands {
		if j == cand || t.value[base+int32(j)] == -1 {
			continue
		}
		if l := t.level(c); l > lw && l < lr {
			return false
		}
	}
	return true
}

func (t *Theory) level(x history.TxnID) int32 {
	if t.si || t.pc { // SI's "entered otherwise", PC's commit
		return t.pk.Level(t.ids[2*x+1])
	}
	return t.pk.Level(t.ids[x])
}

// knownOrder returns, for each of the n graph states, its position in a
// topological order of the known edges (Kahn's algorithm); with a cycle the
// remaining states keep their relative order and pk reports the cycle. It
// also reserves pk's room for the known edges, whose degrees it counts.
// For SER's and SI's graph, when the known arcs are acyclic, it returns
// them in compressed rows with those reduceKnown found redundant marked,
// and reserves pk's room for the rest only; otherwise kr is nil.
func (t *Theory) knownOrder(n int, hint bool) (ids []int32, kr *knownRows) {
	// The known arcs in compressed rows: the successors of state u are
	// succ[off[u]:off[u+1]].
	off := make([]int32, n+1)
	indeg := make([]int32, n)
	t.knownArcs(func(u, v, _ int32) {
		off[u+1]++
		indeg[v]++
	})
	for u := range n {
		off[u+1] += off[u]
	}
	succ, edge := make([]int32, off[n]), make([]int32, off[n])
	next := slices.Clone(off[:n])
	t.knownArcs(func(u, v, i int32) {
		succ[next[u]], edge[next[u]] = v, i
		next[u]++
	})
	inCount := slices.Clone(indeg)

	ids = make([]int32, n)
	placed := make([]bool, n)
	pos := int32(0)
	// Among the states ready, the one whose transaction comes first in
	// the history's own order (hintOrder) goes first; unhinted, the last
	// one found ready.
	q := readyQueue{}
	if hint {
		q.hint = t.hintOrder(n)
	}
	for v := range n {
		if indeg[v] == 0 {
			q.push(int32(v))
		}
	}
	for len(q.h) > 0 {
		v := q.pop()
		ids[v], placed[v] = pos, true
		pos++
		for _, w := range succ[off[v]:off[v+1]] {
			if indeg[w]--; indeg[w] == 0 {
				q.push(w)
			}
		}
	}
	acyclic := pos == int32(n)
	for v := range n {
		if !placed[v] {
			ids[v] = pos
			pos++
		}
	}

	out, in := make([]int32, n), make([]int32, n)
	kept := int(off[n])
	if acyclic && t.psi == nil && !t.pc && !noReduceForTest {
		kr = &knownRows{off: off, succ: succ, edge: edge, drop: reduceKnown(n, off, succ)}
		for u := range n {
			for j := off[u]; j < off[u+1]; j++ {
				if !kr.drop[j] {
					out[ids[u]]++
					in[ids[succ[j]]]++
				}
			}
		}
		kept = 0
		for _, d := range out {
			kept += int(d)
		}
		t.KnownArcsDropped = int64(int(off[n]) - kept)
	} else {
		for v := range n {
			out[ids[v]], in[ids[v]] = off[v+1]-off[v], inCount[v]
		}
	}
	t.pk.Reserve(kept, out, in)
	return ids, kr
}

// knownRows is the known graph's arcs in compressed rows: state u's are
// succ[off[u]:off[u+1]], arc j of certain edge edge[j]; drop[j] marks the
// redundant ones (reduceKnown).
type knownRows struct {
	off, succ, edge []int32
	drop            []bool
}

// reduceBudget is reduceKnown's work bound per arc.
const reduceBudget = 4

// noReduceForTest turns reduceKnown off, for the differential test.
var noReduceForTest bool

// reduceKnown marks the known arcs (in the compressed rows off, succ) that
// an acyclic graph does not need for its reachability: a second
// copy of an arc, and an arc u→x where u→w→x for another w. In a DAG every
// such arc is redundant, and dropping any set of redundant arcs at once
// keeps what reaches what (the arcs of the transitive reduction remain), so
// pk finds the same cycles and orders, through fewer arcs: less memory,
// less set-up, and shorter scans in each search. Pruning's known graph
// holds, for instance, a reader's RW edge to every later writer of a
// version and the WW edges of every pair. The work, Σ over arcs u→w of
// w's out-degree, stops at a budget of a few times the number of arcs;
// the arcs of states not reached by then all stay.
func reduceKnown(n int, off, succ []int32) []bool {
	m := off[n]
	drop := make([]bool, m)
	stamp := make([]int32, n) // == u+1: x is a successor of u
	at := make([]int32, n)    // the position in succ of u→x kept
	budget := reduceBudget*int64(m) + int64(n)
	for u := range int32(n) {
		row := succ[off[u]:off[u+1]]
		if len(row) < 2 {
			continue
		}
		for j, x := range row {
			if stamp[x] == u+1 {
				drop[off[u]+int32(j)] = true // a second copy
				continue
			}
			stamp[x], at[x] = u+1, off[u]+int32(j)
		}
		for j, w := range row {
			if drop[off[u]+int32(j)] {
				continue
			}
			ws := succ[off[w]:off[w+1]]
			if budget -= int64(len(ws)); budget < 0 {
				return drop
			}
			for _, x := range ws {
				if stamp[x] == u+1 {
					drop[at[x]] = true
				}
			}
		}
	}
	return drop
}

// knownArcs calls arc for every arc (between graph states) of the known
// edges, as insert adds them, with the index in certain of its edge (-1
// for PC's arcs s(x)→c(x)).
func (t *Theory) knownArcs(arc func(u, v, i int32)) {
	if t.psi != nil {
		for i, e := range t.certain {
			if e.Rel != hyperpolygraph.RW {
				arc(int32(e.From), int32(e.To), int32(i))
			}
		}
		return
	}
	if t.pc {
		for i, e := range t.certain {
			u, v := hyperpolygraph.PCArc(e.From, e.To, e.Rel)
			arc(u, v, int32(i))
		}
		for x := range int32(t.g.N()) {
			arc(2*x, 2*x+1, -1)
		}
		return
	}
	for i, e := range t.g.Known {
		u1, v1, u2, v2, two := hyperpolygraph.StateArcs(e.From, e.To, e.Rel == hyperpolygraph.RW, t.layers)
		arc(u1, v1, int32(i))
		if two {
			arc(u2, v2, int32(i))
		}
	}
}

// hintOrder ranks the n graph states by where their transactions stand in
// the order the history itself suggests (Graph.HistoryOrder; nil when it
// suggests none: deciding session by session cost HD-10k a fifth more). It
// is only a hint, but decisions polarised by a pk order that follows it
// start out right instead of following an arbitrary topological order of
// the known graph. Of a transaction's two states, 2x+1 (the one Level
// reads) ranks first, as encode's ranks have it for SI.
func (t *Theory) hintOrder(n int) []int32 {
	t.hint = t.g.HistoryOrder()
	if t.hint == nil {
		return nil
	}
	nt := len(t.hint)
	rank := make([]int32, n)
	per := int32(n / max(nt, 1))
	for x, i := range t.hint {
		for s := range per {
			// State per·x + s; for two layers the higher one ranks first.
			rank[per*int32(x)+s] = i*per + (per - 1 - s)
		}
	}
	return rank
}

// readyQueue is a binary min-heap of graph states by hint, or without a
// hint a stack.
type readyQueue struct {
	h    []int32
	hint []int32
}

func (q *readyQueue) less(i, j int) bool { return q.hint[q.h[i]] < q.hint[q.h[j]] }

func (q *readyQueue) push(v int32) {
	q.h = append(q.h, v)
	if q.hint == nil {
		return
	}
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *readyQueue) pop() int32 {
	last := len(q.h) - 1
	if q.hint == nil {
		v := q.h[last]
		q.h = q.h[:last]
		return v
	}
	v := q.h[0]
	q.h[0] = q.h[last]
	q.h = q.h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= last {
			break
		}
		if c+1 < last && q.less(c+1, c) {
			c++
		}
		if !q.less(c, i) {
			break
		}
		q.h[i], q.h[c] = q.h[c], q.h[i]
		i = c
	}
	return v
}

// Priority is a decision priority for variable v in [0, 1): higher for
// variables whose edges join transactions that come earlier in the
// history's own order (hintOrder). Decided in that order, the constraints
// of one stretch of the history are settled together, and a conflict's
// backjump undoes little beyond that stretch.
// Unhinted, it is 0.
func (t *Theory) Priority(v int32) float64 {
	if t.hint == nil {
		return 0
	}
	var e hyperpolygraph.Edge
	if t.enc.IsOpt(v) {
		as := t.enc.Asserts(v)
		if len(as) == 0 {
			return 0 // an inclusion variable
		}
		e = as[0]
	} else {
		e, _ = t.enc.EdgeOf(cnf.Lit(v)) // a WW or a read-from's positive edge
	}
	first := min(t.hint[e.From], t.hint[e.To])
	return 1 - float64(first)/float64(len(t.hint))
}
