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

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/solver/pk"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
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

// writerSlot is one entry of the writers' index: writer w's writerInfo.
type writerSlot struct {
	w    history.TxnID
	info int32
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
	// writers indexes infos by (key, writer) while newTheory records
	// them, and is dropped once keyAt and byKey index them. For SER and SI
	// it holds only
	// the writers that some variable's edge leaves (of a WW pair, a
	// read-from candidate, an optional part's edge): RW derivation looks
	// up no other, and the known-only writers were millions of entries at
	// scale. PC and PSI derive RW edges from known edges too (knownRW), so
	// there it holds every writer. Indices rather than pointers leave the
	// map and the records nothing for the garbage collector to chase.
	writers map[writerKey]int32
	// The writers sorted: byKey[keyAt[k]:keyAt[k+1]] are key k's writers
	// by TxnID (index, lookup).
	keyAt []int32
	byKey []writerSlot
	infos []writerInfo
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
	// Without allWriters only the writers above are looked up, in the
	// sorted index (the known edges are millions, a map look-up each
	// was a third of the theory's set-up at a million transactions).
	if !allWriters {
		t.index(len(g.Writers))
	}
	for _, e := range g.Known {
		if e.Rel != history.WW && e.Rel != history.WR {
			continue
		}
		var wi *writerInfo
		if allWriters {
			wi = info(e.Key, e.From, true)
		} else if i := t.lookup(e.Key, e.From); i >= 0 {
			wi = &t.infos[i]
		}
		if wi == nil {
			continue
		}
		if e.Rel == history.WW {
			wi.knownSucc = append(wi.knownSucc, e.To)
		} else {
			wi.knownReaders = append(wi.knownReaders, e.To)
		}
	}
	if allWriters {
		t.index(len(g.Writers))
	}
	t.writers = nil // the index answers from here on
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
	u1, v1, u2, v2, two := hyperpolygraph.StateArcs(e.From, e.To, e.Rel == history.RW, t.layers)
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
			if e.Rel == history.WW {
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
		e := hyperpolygraph.Edge{From: from, To: to, Rel: history.WW, Key: p.Key}
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
	if c := t.addEdge(hyperpolygraph.Edge{From: w, To: s.Reader, Rel: history.WR, Key: s.Key}, l, 0); c != nil {
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
			if c := t.addEdge(hyperpolygraph.Edge{From: r, To: to, Rel: history.RW, Key: x}, l, 0); c != nil {
				return c
			}
		}
	}
	for _, wl := range wi.trueWR {
		if wl.to == to {
			continue
		}
		if c := t.addEdge(hyperpolygraph.Edge{From: wl.to, To: to, Rel: history.RW, Key: x}, l, wl.lit); c != nil {
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
			if c := t.addEdge(hyperpolygraph.Edge{From: r, To: succ, Rel: history.RW, Key: x}, l, 0); c != nil {
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
			if c := t.addEdge(hyperpolygraph.Edge{From: r, To: succ, Rel: history.RW, Key: x}, l, wl); c != nil {
				return c
			}
		}
	}
	for _, wl := range wi.trueWW {
		if wl.to == r {
			continue
		}
		if c := t.addEdge(hyperpolygraph.Edge{From: r, To: wl.to, Rel: history.RW, Key: x}, l, wl.lit); c != nil {
			return c
		}
	}
	return nil
}

// allWritersForTest makes SER and SI keep every writer, as PC and PSI do:
// the theory before it kept only those a variable's edge leaves, for the
// differential test.
var allWritersForTest bool

// index sorts the writers recorded in t.writers by key and writer, for
// lookup.
func (t *Theory) index(keys int) {
	t.keyAt = make([]int32, keys+1)
	for wk := range t.writers {
		t.keyAt[wk.k+1]++
	}
	for k := range keys {
		t.keyAt[k+1] += t.keyAt[k]
	}
	t.byKey = make([]writerSlot, len(t.writers))
	fill := slices.Clone(t.keyAt[:keys])
	for wk, i := range t.writers {
		t.byKey[fill[wk.k]] = writerSlot{wk.t, i}
		fill[wk.k]++
	}
	for k := range keys {
		slices.SortFunc(t.byKey[t.keyAt[k]:t.keyAt[k+1]], func(a, b writerSlot) int { return int(a.w) - int(b.w) })
	}
}

// lookup is the index in infos of writer w of key k, or -1.
func (t *Theory) lookup(k history.KeyID, w history.TxnID) int32 {
	if int(k) >= len(t.keyAt)-1 {
		return -1
	}
	ws := t.byKey[t.keyAt[k]:t.keyAt[k+1]]
	i, ok := slices.BinarySearchFunc(ws, w, func(s writerSlot, w history.TxnID) int { return int(s.w) - int(w) })
	if !ok {
		return -1
	}
	return ws[i].info
}

// writer returns the index in infos of writer w of key k, which a
// variable's edge leaves and newTheory therefore recorded.
func (t *Theory) writer(k history.KeyID, w history.TxnID) int32 {
	i := t.lookup(k, w)
	if i < 0 {
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

// reduceBudget is reduceKnown's work bound per arc.
const reduceBudget = 4

// noReduceForTest turns reduceKnown off, for the differential test.
var noReduceForTest bool

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
