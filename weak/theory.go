package weak

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/solver/pk"
)

// coTheory is the theory of the writer-choice solver (cdcl.Theory): it
// keeps the part of co′ that the chosen read-from literals force locally
// acyclic in a Pearce–Kelly order, and explains each cycle by the literals
// behind its edges. The graph holds the certain co′ (the reads with one
// writer, saturated once) and, for each read i of T3 whose literal "i
// reads x from w" is true:
//
//   - w → T3 (wr);
//   - t2 → w for every writer t2 of x the premise relates to T3 in the
//     certain part (premOf), with this literal as the reason;
//   - the orderings the axiom derives from this read together with every
//     other read of T3 (certain, or ambiguous with a true literal): for RA
//     and CC, w → t1 when T3 read y from t1 and w writes y (and the
//     symmetric t1 → w); for RC the same in program order.
//
// Every such edge is an edge of co′ in every choice that keeps its
// reasons (premises only grow with wr), so a cycle is a valid conflict
// clause. For RC and RA this is all of co′: a model the theory accepts is
// acyclic. For CC the happens-before paths that chosen wr edges create are
// not followed; the model loop (choose) re-saturates each model and blocks
// the cycles it still finds.
type coTheory struct {
	c  *checker
	ch *chooser
	pk *pk.Graph
	// ids[t] is t's pk node: positions of a topological order of the
	// certain co′, so that inserting it never reorders.
	ids []int32
	// The certain read events (checker.ev when the theory was built).
	cev      []event
	cLo, cHi []int32
	prem     [][]history.TxnID
	ambOfTxn [][]int32
	base     *graph // the certain co′
	// wkeys, wkLo: checker.wkeys with the optional transactions too.
	wkeys      []history.KeyID
	wkLo       []int32
	cur        []int32   // per ambiguous read: the candidate of its true literal, or -1
	curLit     []cnf.Lit // that literal
	reasons    []reason
	undo       []theoryMark
	clause     []cnf.Lit
	conflicts  int64
	certainLen int
	// soft[i]: read i has no variables yet (chooser.activate); the
	// theory takes its preferred candidate, and a cycle through such an
	// edge is no conflict but a reason to activate the read (pending).
	soft    []bool
	pending []int32
	pendMk  []bool
	// dirty: an edge was left out because its cycle ran through an
	// inactive read's edge, or through the edge of a read activated since
	// the graph was built; the graph must be built again. Activating a
	// read leaves its preferred candidate's edges in place (stale): the
	// graph is then a superset of what the literals force, which refuses
	// no model it should accept unless such a cycle shows, and rebuilding
	// (a few hundred milliseconds at 100,000 transactions) waits until
	// then.
	dirty  bool
	builds int64
	// Scratch of explain.
	softSeen []int32
	stale    bool
}

// reason is why an edge is in the graph: up to two literals and up to two
// inactive reads (index+1; 0: none).
type reason struct {
	l1, l2 cnf.Lit
	s1, s2 int32
}

// theoryMark is what one Assign inserted, and its literal (replayed
// when the graph is rebuilt at level 0).
type theoryMark struct {
	edges, reasons int32
	lit            cnf.Lit
}

// newTheory sets up the theory over the certain part of co′ (build then
// fills its graph); it returns nil when that part is cyclic (the model
// loop then reports the cycle).
func (ch *chooser) newTheory() (*coTheory, error) {
	c := ch.c
	c.certainEvents()
	if err := c.resaturate(); err != nil {
		return nil, err
	}
	if c.causalCycle {
		return nil, nil
	}
	// The keys each transaction that may commit writes.
	for _, t := range c.opt {
		c.in[t] = true
	}
	c.buildWriteKeys()
	wkeys, wkLo := c.wkeys, c.wkLo
	for _, t := range c.opt {
		c.in[t] = false
	}
	c.buildWriteKeys()
	g := c.buildGraph(true)
	order, ok := g.topoStable(c)
	if !ok {
		return nil, nil
	}
	th := &coTheory{c: c, ch: ch, ids: c.positions(order),
		cev: c.ev, cLo: c.evLo, cHi: c.evHi, wkeys: wkeys, wkLo: wkLo}
	th.base = g
	th.premises()
	th.cur = make([]int32, len(c.amb))
	th.curLit = make([]cnf.Lit, len(c.amb))
	th.soft = make([]bool, len(c.amb))
	th.pendMk = make([]bool, len(c.amb))
	for i := range th.cur {
		th.cur[i] = -1
		th.soft[i] = ch.off[i] < 0
	}
	th.ambOfTxn = make([][]int32, c.n)
	for i, a := range c.amb {
		th.ambOfTxn[a.txn] = append(th.ambOfTxn[a.txn], int32(i))
	}
	return th, nil
}

// build (re)builds the graph at level 0: the certain co′, the edges of
// the inactive reads' preferred candidates, and those of the literals
// still assigned (the undo stack holds exactly the level-0 ones when the
// solver has backtracked). It returns the conflict clauses the replay
// found (all false at level 0: the formula is unsatisfiable).
func (th *coTheory) build() [][]cnf.Lit {
	c, g := th.c, th.base
	// An edge the replay below leaves out makes it dirty again.
	th.dirty = false
	if th.pk == nil {
		th.pk = pk.New(c.n)
		out, in := make([]int32, c.n), make([]int32, c.n)
		for u := range c.n {
			for e := g.start[u]; e < g.start[u+1]; e++ {
				out[th.ids[u]]++
				in[th.ids[g.to[e]]]++
			}
		}
		th.pk.Reserve(len(g.to), out, in)
		for u := range c.n {
			for e := g.start[u]; e < g.start[u+1]; e++ {
				th.pk.AddEdge(th.ids[u], th.ids[g.to[e]], -1) // acyclic: never refused
			}
		}
		th.certainLen = th.pk.NumEdges()
	} else {
		// The certain co′ stays: removing what came after it keeps the
		// order valid.
		th.pk.RemoveTo(th.certainLen)
	}
	th.reasons = th.reasons[:0]
	replay := make([]cnf.Lit, 0, len(th.undo))
	for _, m := range th.undo {
		if m.lit != 0 {
			replay = append(replay, m.lit)
		}
	}
	th.undo = append(th.undo[:0], theoryMark{})
	for i := range th.cur {
		th.cur[i] = -1
		if th.soft[i] && th.softOK(int32(i)) {
			th.assignRead(int32(i), th.ch.pref[i], 0)
		}
	}
	var confl [][]cnf.Lit
	for _, l := range replay {
		if cl := th.Assign(l); cl != nil {
			confl = append(confl, slices.Clone(cl))
		}
	}
	th.builds++
	return confl
}

// activated records that read i got variables; its soft edges stay
// until a rebuild (see dirty).
func (th *coTheory) activated(i int) {
	th.soft[i] = false
}

// takePending returns the inactive reads some cycle ran through, and
// forgets them.
func (th *coTheory) takePending() []int32 {
	p := th.pending
	th.pending = nil
	for _, i := range p {
		th.pendMk[i] = false
	}
	return p
}

// premises fills prem: for each ambiguous read (T3 reads x), the writers
// t2 of x that the level's premise relates to T3 in the certain part, one
// per session where session order implies the others.
func (th *coTheory) premises() {
	c := th.c
	kw := c.writersByKey()
	th.prem = make([][]history.TxnID, len(c.amb))
	for i, a := range c.amb {
		if c.in[a.txn] {
			th.prem[i] = c.premiseWriters(nil, kw, a.txn, a.key, a.op)
		}
	}
}

// add inserts u → v for reason r and returns the conflict clause if it
// closes a cycle. A cycle through an inactive read's edge is no conflict:
// the edge is left out and the reads are marked for activation.
func (th *coTheory) add(u, v history.TxnID, rs reason) []cnf.Lit {
	if u == v {
		return nil
	}
	r := int32(len(th.reasons))
	th.reasons = append(th.reasons, rs)
	cyc, ok := th.pk.AddEdge(th.ids[u], th.ids[v], r)
	if !ok {
		return th.explain(cyc, r)
	}
	th.undo[len(th.undo)-1].edges++
	return nil
}

// explain turns the reasons of a cycle's edges into a clause of negated
// literals, or nil after marking the inactive reads it runs through.
func (th *coTheory) explain(cyc []int32, last int32) []cnf.Lit {
	th.clause = th.clause[:0]
	th.softSeen = th.softSeen[:0]
	put := func(r int32) {
		if r < 0 {
			return
		}
		rs := &th.reasons[r]
		for _, l := range [2]cnf.Lit{rs.l1, rs.l2} {
			if l != 0 && !slices.Contains(th.clause, -l) {
				th.clause = append(th.clause, -l)
			}
		}
		for _, si := range [2]int32{rs.s1, rs.s2} {
			switch {
			case si == 0:
			case th.soft[si-1]:
				th.softSeen = append(th.softSeen, si-1)
			default:
				// Activated since the build: the edge may be stale.
				th.stale = true
			}
		}
	}
	th.stale = false
	for _, r := range cyc {
		put(r)
	}
	put(last)
	if len(th.softSeen) > 0 || th.stale {
		// The edge is left out: the graph no longer holds what the
		// literals force (a literal kept at level 0 is not assigned
		// again), so it is built again before the next model counts.
		th.dirty = true
		for _, i := range th.softSeen {
			if !th.pendMk[i] {
				th.pendMk[i] = true
				th.pending = append(th.pending, i)
			}
		}
		return nil
	}
	th.conflicts++
	return th.clause
}

// Assign adds the edges a true read-from literal forces.
func (th *coTheory) Assign(l cnf.Lit) []cnf.Lit {
	th.undo = append(th.undo, theoryMark{reasons: int32(len(th.reasons)), lit: l})
	if l < 0 {
		return nil
	}
	ch := th.ch
	v := int(l.Var())
	if v >= len(ch.varRead) || ch.varRead[v] < 0 {
		return nil
	}
	i, j := ch.varRead[v], ch.varCand[v]
	th.cur[i], th.curLit[i] = j, l
	return th.assignRead(i, j, l)
}

// assignRead adds the edges of read i reading from its candidate j, for
// literal l (0: read i is inactive and j its preferred candidate).
func (th *coTheory) assignRead(i, j int32, l cnf.Lit) []cnf.Lit {
	c := th.c
	a := &c.amb[i]
	w, t3 := a.cands[j], a.txn
	mine := reason{l1: l}
	if l == 0 {
		mine = reason{s1: i + 1}
	}
	if cl := th.add(w, t3, mine); cl != nil {
		return cl
	}
	for _, t2 := range th.prem[i] {
		if t2 != w {
			if cl := th.add(t2, w, mine); cl != nil {
				return cl
			}
		}
	}
	rc := c.level == history.RC
	at := c.point(t3, a.op)
	// Certain reads of T3 from t1 of a key y that w writes: w → t1 (for
	// RC only reads at a later program point).
	if w != history.InitTxn {
		for _, e := range th.cev[th.cLo[t3]:th.cHi[t3]] {
			if (!rc || c.point(t3, e.op) > at) && e.writer != w && th.writes(w, e.key) {
				if cl := th.add(w, e.writer, mine); cl != nil {
					return cl
				}
			}
		}
	}
	// The other ambiguous reads of T3: active ones with a true literal,
	// inactive ones (each pair once) with their preferred candidate.
	for _, i2 := range th.ambOfTxn[t3] {
		if i2 == i {
			continue
		}
		rs := mine
		var j2 int32
		switch {
		case th.soft[i2]:
			if (l == 0 && i2 > i) || !th.softOK(i2) {
				continue
			}
			j2 = th.ch.pref[i2]
			if l == 0 {
				rs.s2 = i2 + 1
			} else {
				rs.s1 = i2 + 1
			}
		case th.cur[i2] >= 0:
			j2 = th.cur[i2]
			rs.l2 = th.curLit[i2]
		default:
			continue
		}
		b := &c.amb[i2]
		w2 := b.cands[j2]
		if w2 == w {
			continue
		}
		bt := c.point(t3, b.op)
		if w != history.InitTxn && (!rc || bt > at) && th.writes(w, b.key) {
			if cl := th.add(w, w2, rs); cl != nil {
				return cl
			}
		}
		if w2 != history.InitTxn && (!rc || bt < at) && th.writes(w2, a.key) {
			if cl := th.add(w2, w, rs); cl != nil {
				return cl
			}
		}
	}
	return nil
}

// Unassign removes what the matching Assign inserted.
func (th *coTheory) Unassign(l cnf.Lit) {
	m := th.undo[len(th.undo)-1]
	th.undo = th.undo[:len(th.undo)-1]
	for range m.edges {
		th.pk.RemoveLast()
	}
	th.reasons = th.reasons[:m.reasons]
	if l > 0 {
		if v := int(l.Var()); v < len(th.ch.varRead) {
			if i := th.ch.varRead[v]; i >= 0 {
				th.cur[i] = -1
			}
		}
	}
}

// Phase leaves polarities to phase saving (the preferred candidate first).
func (th *coTheory) Phase(int32) (bool, bool) { return false, false }

// writes reports whether t (≠ T⊥) writes x.
func (th *coTheory) writes(t history.TxnID, x history.KeyID) bool {
	_, ok := slices.BinarySearch(th.wkeys[th.wkLo[t]:th.wkLo[t+1]], x)
	return ok
}

// softOK reports whether inactive read i stands for its preferred
// candidate in the graph: not when it has none, nor when its reader may
// not commit (initOptional activates those reads anyway).
func (th *coTheory) softOK(i int32) bool {
	a := &th.c.amb[i]
	return len(a.cands) > 0 && !th.c.optional(a.txn)
}
