// Package acyclic is the theory of hyperiso's CDCL(T) solver: it keeps the
// graph chosen so far (the pruned known graph plus the edges of every true
// literal, with the RW edges they derive) acyclic in a Pearce–Kelly dynamic
// topological order, explains each cycle as a conflict clause over the
// literals behind its edges, and suggests decision polarities from the
// order. For SI the graph is the doubled graph whose acyclicity is that of
// the induced graph (SO ∪ WR ∪ WW) ; RW?.
//
// Optionally it also propagates: around each edge it inserts, a budgeted
// cone search finds unassigned literals whose own edge would close a cycle,
// and implies their negation (see Options.PropBudget).
package acyclic

import (
	"cmp"
	"slices"

	"github.com/hyperiso/hyperiso/cdcl"
	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
	"github.com/hyperiso/hyperiso/pk"
)

// reason explains one edge: the literals (up to two) that put it in the
// graph; 0 marks an unused slot. Certain edges have reason index -1.
type reason struct {
	edge hyperpolygraph.Edge
	l1   cdcl.Lit
	l2   cdcl.Lit
}

type undoMark struct {
	pkEdges int32 // pk edges inserted
	reasons int32 // len(reasons) before the Assign
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
	wrLits       []cdcl.Lit      // WR literals with candidate t on k
}

// Options configures a Theory.
type Options struct {
	// Polarity switches Phase on (VeriStrong's order-guided polarity).
	Polarity bool
	// PropBudget, if positive, switches theory propagation on: after each
	// edge u→v the theory inserts, it looks for unassigned literals whose own
	// edge x→y would close a cycle y ⇝ u → v ⇝ x, searching at most
	// PropBudget nodes forward from v and as many backward from u.
	PropBudget int
}

// candArc is an arc x→y (pk nodes) that literal lit would insert directly.
type candArc struct {
	to  int32
	lit cdcl.Lit
}

// pairLit chains the literals that share an arc.
type pairLit struct {
	lit  cdcl.Lit
	next int32
}

// pendingEdge is a pk edge inserted since the last Propagate call.
type pendingEdge struct{ u, v, reason int32 }

// Theory implements cdcl.Theory and cdcl.TheoryPropagator for one encoding.
type Theory struct {
	enc     *encode.Encoding
	g       *hyperpolygraph.Graph
	si      bool
	pk      *pk.Graph
	writers map[writerKey]*writerInfo
	// value[v] is 0 unassigned, 1 true, -1 false (as seen by the theory).
	value   []int8
	reasons []reason
	// undo[i] records what the i-th Assign inserted, for LIFO undo; undo[0]
	// stands for the certain edges and is never undone.
	undo []undoMark
	opt  Options
	// ids renames graph states to pk nodes so that pk's initial order is a
	// topological order of the known graph: inserting the known edges then
	// never reorders (in arbitrary order it dominated solving time).
	ids []int32
	// Cycle is the last cycle found, as edges, for reports.
	Cycle []hyperpolygraph.Edge
	// Conflicts counts the cycles reported.
	Conflicts int64
	// Implied counts the implications returned by Propagate.
	Implied int64

	// Theory propagation (PropBudget > 0). cands[x] lists the arcs out of
	// pk node x that some literal would insert; pending holds the edges to
	// explore; impl holds implication clauses found but not yet returned,
	// clause i being impl[implEnd[i-1]:implEnd[i]]. Unassign empties all
	// three, since removed edges may explain them.
	cands [][]candArc
	open  []int32 // open[x]: arcs in cands[x] of unassigned literals
	// byPair finds the literals of an arc x→y: pairHead[x<<32|y] is the
	// first index into pairLits, chained by next (-1 ends).
	pairHead map[uint64]int32
	pairLits []pairLit
	varSrc   [][]int32
	us       []int32
	pending  []pendingEdge
	sorted   bool // pending is sorted by head
	impl     []cdcl.Lit
	implEnd  []int32
	implHead int
	pathBuf  []int32
	seen     map[cdcl.Lit]bool
}

// New builds the theory for enc; the known graph must be acyclic (pruning
// guarantees it; otherwise New returns the cycle).
func New(enc *encode.Encoding, opt Options) (*Theory, []hyperpolygraph.Edge) {
	g := enc.G
	t := &Theory{enc: enc, g: g, si: g.Level == history.SI, writers: map[writerKey]*writerInfo{},
		value: make([]int8, enc.NumVars+1), opt: opt, seen: map[cdcl.Lit]bool{}}
	n := g.N()
	if t.si {
		n *= 2
	}
	t.pk = pk.New(n)
	t.ids = t.knownOrder(n)
	t.undo = append(t.undo, undoMark{})
	info := func(k history.KeyID, w history.TxnID) *writerInfo {
		wk := writerKey{k, w}
		wi := t.writers[wk]
		if wi == nil {
			wi = &writerInfo{}
			t.writers[wk] = wi
		}
		return wi
	}
	for i, p := range g.WW {
		info(p.Key, p.A).pairs = append(info(p.Key, p.A).pairs, int32(i))
		info(p.Key, p.B).pairs = append(info(p.Key, p.B).pairs, int32(i))
	}
	for i, s := range g.WR {
		for j, c := range s.Cands {
			wi := info(s.Key, c)
			wi.wrLits = append(wi.wrLits, cdcl.Lit(enc.WRBase[i]+int32(j)))
		}
	}
	for _, e := range g.Known {
		switch e.Rel {
		case hyperpolygraph.WW:
			wi := info(e.Key, e.From)
			wi.knownSucc = append(wi.knownSucc, e.To)
		case hyperpolygraph.WR:
			wi := info(e.Key, e.From)
			wi.knownReaders = append(wi.knownReaders, e.To)
		}
		if cyc := t.addEdge(e, 0, 0); cyc != nil {
			return nil, t.Cycle
		}
	}
	if opt.PropBudget > 0 {
		t.indexCandidates(n)
	}
	return t, nil
}

// indexCandidates fills cands with the arcs of every literal's own edge
// (a WW literal orders its pair, a positive WR literal adds its read-from);
// derived RW edges depend on other literals and are left out.
func (t *Theory) indexCandidates(n int) {
	t.cands = make([][]candArc, n)
	t.open = make([]int32, n)
	t.pairHead = map[uint64]int32{}
	t.varSrc = make([][]int32, t.enc.NumVars+1)
	add := func(e hyperpolygraph.Edge, l cdcl.Lit) {
		arc := func(u, v int32) {
			u, v = t.ids[u], t.ids[v]
			t.cands[u] = append(t.cands[u], candArc{v, l})
			key := uint64(u)<<32 | uint64(uint32(v))
			head, ok := t.pairHead[key]
			if !ok {
				head = -1
			}
			t.pairHead[key] = int32(len(t.pairLits))
			t.pairLits = append(t.pairLits, pairLit{l, head})
			t.open[u]++
			t.varSrc[l.Var()] = append(t.varSrc[l.Var()], u)
		}
		if !t.si {
			arc(e.From, e.To)
			return
		}
		arc(2*e.From, 2*e.To+1)
		arc(2*e.From+1, 2*e.To+1)
	}
	for i, p := range t.g.WW {
		v := cdcl.Lit(t.enc.WWVar[i])
		add(hyperpolygraph.Edge{From: p.A, To: p.B}, v)
		add(hyperpolygraph.Edge{From: p.B, To: p.A}, -v)
	}
	for i, s := range t.g.WR {
		for j, c := range s.Cands {
			add(hyperpolygraph.Edge{From: c, To: s.Reader}, cdcl.Lit(t.enc.WRBase[i]+int32(j)))
		}
	}
}

// addEdge inserts e (two pk edges for a non-RW edge of the doubled graph)
// and returns the conflict clause if it closes a cycle.
func (t *Theory) addEdge(e hyperpolygraph.Edge, l1, l2 cdcl.Lit) []cdcl.Lit {
	r := int32(len(t.reasons))
	t.reasons = append(t.reasons, reason{e, l1, l2})
	try := func(u, v int32) []cdcl.Lit {
		pu, pv := t.ids[u], t.ids[v]
		cyc, ok := t.pk.AddEdge(pu, pv, r)
		if ok {
			t.undo[len(t.undo)-1].pkEdges++
			if t.cands != nil && len(t.undo) > 1 {
				t.pending = append(t.pending, pendingEdge{pu, pv, r})
				t.sorted = false
			}
			return nil
		}
		return t.explain(append(cyc, r))
	}
	if !t.si {
		return try(e.From, e.To)
	}
	if e.Rel == hyperpolygraph.RW {
		return try(2*e.From+1, 2*e.To)
	}
	if c := try(2*e.From, 2*e.To+1); c != nil {
		return c
	}
	return try(2*e.From+1, 2*e.To+1)
}

// explain turns a cycle of reasons into a clause of negated literals.
func (t *Theory) explain(cyc []int32) []cdcl.Lit {
	t.Conflicts++
	t.Cycle = t.Cycle[:0]
	var clause []cdcl.Lit
	seen := map[cdcl.Lit]bool{}
	for _, ri := range cyc {
		r := t.reasons[ri]
		t.Cycle = append(t.Cycle, r.edge)
		for _, l := range [2]cdcl.Lit{r.l1, r.l2} {
			if l != 0 && !seen[l] {
				seen[l] = true
				clause = append(clause, -l)
			}
		}
	}
	if clause == nil {
		clause = []cdcl.Lit{}
	}
	return clause
}

// Assign adds the edges literal l asserts, and the RW edges they derive.
func (t *Theory) Assign(l cdcl.Lit) []cdcl.Lit {
	t.undo = append(t.undo, undoMark{reasons: int32(len(t.reasons))})
	v := int32(l.Var())
	if l > 0 {
		t.value[v] = 1
	} else {
		t.value[v] = -1
	}
	if t.open != nil {
		for _, x := range t.varSrc[v] {
			t.open[x]--
		}
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
		// Everyone who read from's version of the key now precedes to.
		wi := t.writers[writerKey{p.Key, from}]
		for _, r := range wi.knownReaders {
			if r != to {
				if c := t.addEdge(hyperpolygraph.Edge{From: r, To: to, Rel: hyperpolygraph.RW, Key: p.Key}, l, 0); c != nil {
					return c
				}
			}
		}
		for _, wl := range wi.wrLits {
			if t.value[wl.Var()] != 1 {
				continue
			}
			set, _, _ := t.enc.WRSet(wl.Var())
			r := t.g.WR[set].Reader
			if r != to {
				if c := t.addEdge(hyperpolygraph.Edge{From: r, To: to, Rel: hyperpolygraph.RW, Key: p.Key}, l, wl); c != nil {
					return c
				}
			}
		}
		return nil
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
	wi := t.writers[writerKey{s.Key, w}]
	for _, succ := range wi.knownSucc {
		if succ != s.Reader {
			if c := t.addEdge(hyperpolygraph.Edge{From: s.Reader, To: succ, Rel: hyperpolygraph.RW, Key: s.Key}, l, 0); c != nil {
				return c
			}
		}
	}
	for _, pi := range wi.pairs {
		p := t.g.WW[pi]
		pv := t.value[t.enc.WWVar[pi]]
		var succ history.TxnID
		var wl cdcl.Lit
		switch {
		case pv == 1 && p.A == w:
			succ, wl = p.B, cdcl.Lit(t.enc.WWVar[pi])
		case pv == -1 && p.B == w:
			succ, wl = p.A, -cdcl.Lit(t.enc.WWVar[pi])
		default:
			continue
		}
		if succ != s.Reader {
			if c := t.addEdge(hyperpolygraph.Edge{From: s.Reader, To: succ, Rel: hyperpolygraph.RW, Key: s.Key}, l, wl); c != nil {
				return c
			}
		}
	}
	return nil
}

// Unassign removes what the matching Assign inserted.
func (t *Theory) Unassign(l cdcl.Lit) {
	m := t.undo[len(t.undo)-1]
	t.undo = t.undo[:len(t.undo)-1]
	for range m.pkEdges {
		t.pk.RemoveLast()
	}
	t.reasons = t.reasons[:m.reasons]
	t.value[l.Var()] = 0
	if t.open != nil {
		for _, x := range t.varSrc[l.Var()] {
			t.open[x]++
		}
	}
	t.pending = t.pending[:0]
	t.impl, t.implEnd, t.implHead = t.impl[:0], t.implEnd[:0], 0
}

// Propagate returns the next implication clause: the negation of an
// unassigned literal whose own edge would close a cycle, followed by the
// negated literals behind that cycle's other edges. It explores the
// pending edges, a group with a common head at a time, until one group
// yields implications.
func (t *Theory) Propagate() []cdcl.Lit {
	for {
		for t.implHead < len(t.implEnd) {
			start := int32(0)
			if t.implHead > 0 {
				start = t.implEnd[t.implHead-1]
			}
			cl := t.impl[start:t.implEnd[t.implHead]]
			t.implHead++
			if t.value[cl[0].Var()] == 0 {
				t.Implied++
				return cl
			}
		}
		t.impl, t.implEnd, t.implHead = t.impl[:0], t.implEnd[:0], 0
		if len(t.pending) == 0 {
			return nil
		}
		if !t.sorted {
			slices.SortFunc(t.pending, func(a, b pendingEdge) int { return cmp.Compare(a.v, b.v) })
			t.sorted = true
		}
		i := len(t.pending) - 1
		for i > 0 && t.pending[i-1].v == t.pending[i].v {
			i--
		}
		t.explore(t.pending[i:])
		t.pending = t.pending[:i]
	}
}

// explore queues an implication for every unassigned literal whose arc
// x→y closes a cycle y ⇝ u → v ⇝ x found by a cone around the edges u→v of
// group (which share v).
func (t *Theory) explore(group []pendingEdge) {
	t.us = t.us[:0]
	for _, e := range group {
		t.us = append(t.us, e.u)
	}
	fwd := t.pk.Cone(t.us, group[0].v, t.opt.PropBudget, func(fwd []int32) bool {
		for _, x := range fwd {
			if t.open[x] > 0 {
				return false
			}
		}
		return true
	})
	// Either scan the candidate arcs of the forward nodes, or look up each
	// (forward, backward) pair, whichever touches fewer entries.
	scan := 0
	for _, x := range fwd {
		if t.open[x] > 0 {
			scan += len(t.cands[x])
		}
	}
	bwd := t.pk.ConeBack()
	byPair := len(fwd)*len(bwd) < scan
	for _, x := range fwd {
		if t.open[x] == 0 {
			continue
		}
		lx := t.pk.Level(x)
		if byPair {
			for _, y := range bwd {
				if t.pk.Level(y) >= lx {
					continue
				}
				i, ok := t.pairHead[uint64(x)<<32|uint64(uint32(y))]
				for ok && i >= 0 {
					if l := t.pairLits[i].lit; t.value[l.Var()] == 0 {
						t.queueImplication(group, l, x, y)
					}
					i = t.pairLits[i].next
				}
			}
			continue
		}
		for _, a := range t.cands[x] {
			if t.value[a.lit.Var()] == 0 && t.pk.Level(a.to) < lx && t.pk.InCone(a.to) {
				t.queueImplication(group, a.lit, x, a.to)
			}
		}
	}
}

// queueImplication queues ¬l, explained by the cycle y ⇝ u → v ⇝ x that l's
// arc x→y would close (the paths of the last cone; u→v is in group).
func (t *Theory) queueImplication(group []pendingEdge, l cdcl.Lit, x, y int32) {
	var u int32
	t.pathBuf, u = t.pk.ConePath(t.pathBuf[:0], y, x)
	for _, e := range group {
		if e.u == u {
			t.pathBuf = append(t.pathBuf, e.reason)
			break
		}
	}
	t.impl = append(t.impl, -l)
	clear(t.seen)
	for _, ri := range t.pathBuf {
		r := t.reasons[ri]
		for _, rl := range [2]cdcl.Lit{r.l1, r.l2} {
			if rl != 0 && !t.seen[rl] {
				t.seen[rl] = true
				t.impl = append(t.impl, -rl)
			}
		}
	}
	t.implEnd = append(t.implEnd, int32(len(t.impl)))
}

// Phase picks a decision's polarity so that the edge it adds agrees with
// the current topological order.
func (t *Theory) Phase(v int32) (bool, bool) {
	if !t.opt.Polarity {
		return false, false
	}
	e, _ := t.enc.EdgeOf(encode.Lit(v))
	return t.level(e.From) < t.level(e.To), true
}

func (t *Theory) level(x history.TxnID) int32 {
	if t.si {
		return t.pk.Level(t.ids[2*x+1])
	}
	return t.pk.Level(t.ids[x])
}

// knownOrder returns, for each of the n graph states, its position in a
// topological order of the known edges (Kahn's algorithm); with a cycle the
// remaining states keep their relative order and pk reports the cycle.
func (t *Theory) knownOrder(n int) []int32 {
	indeg := make([]int32, n)
	adj := make([][]int32, n)
	arc := func(u, v int32) {
		adj[u] = append(adj[u], v)
		indeg[v]++
	}
	for _, e := range t.g.Known {
		switch {
		case !t.si:
			arc(e.From, e.To)
		case e.Rel == hyperpolygraph.RW:
			arc(2*e.From+1, 2*e.To)
		default:
			arc(2*e.From, 2*e.To+1)
			arc(2*e.From+1, 2*e.To+1)
		}
	}
	ids := make([]int32, n)
	placed := make([]bool, n)
	next := int32(0)
	var queue []int32
	for v := range n {
		if indeg[v] == 0 {
			queue = append(queue, int32(v))
		}
	}
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		ids[v], placed[v] = next, true
		next++
		for _, w := range adj[v] {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	for v := range n {
		if !placed[v] {
			ids[v] = next
			next++
		}
	}
	return ids
}
