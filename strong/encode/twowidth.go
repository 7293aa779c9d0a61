package encode

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// StateReacher is a Reacher that answers over dense states and gives a
// topological order of them, which the width-two clauses need for SI and to
// avoid testing every pair of literals. prune.Reach implements it.
//
// For SER every included transaction t is one state, Node(t). For SI the
// graph is doubled: state 2·Node(t)+1 is t entered by an SO, WR or WW edge
// and 2·Node(t) is t entered by an RW edge; a non-RW edge a→b is the two
// state edges a0→b1 and a1→b1, an RW edge a→b is a1→b0.
type StateReacher interface {
	Reacher
	// Layers is 1 for SER and 2 for the doubled SI graph.
	Layers() int
	// Node returns the dense number of t, -1 if t is not a node.
	Node(t history.TxnID) int32
	// StateReaches reports whether state s reaches state t (s reaches
	// itself). For SI a target state 2i stands for node i in either state:
	// whether s reaches 2i or 2i+1.
	StateReaches(s, t int32) bool
	// Rank is a topological order of the states: when s reaches t ≠ s,
	// Rank(s) < Rank(t); for SI Rank(2i+1) < Rank(2i).
	Rank(s int32) int32
	// Source and Target let many tests from one state cost a load each:
	// Source(s) is s's bitset row or, when row is nil, its vector;
	// Target(t) says how to test t in StateReaches' sense: a row by
	// row[idx]&mask != 0, a vector by idx < len(vec) && vec[idx] <= key.
	Source(s int32) (row []uint64, vec []int32)
	Target(t int32) (idx int32, mask uint64, key int32)
}

// probe is a target prepared by StateReacher.Target.
type probe struct {
	idx  int32
	key  int32
	mask uint64
}

func probeOf(br StateReacher, t int32) probe {
	idx, mask, key := br.Target(t)
	return probe{idx, key, mask}
}

// hit reports whether the state whose Source gave row, vec reaches p.
func hit(row []uint64, vec []int32, p *probe) bool {
	if row != nil {
		return row[p.idx]&p.mask != 0
	}
	return int(p.idx) < len(vec) && vec[p.idx] <= p.key
}

// naiveTwoWidthLimit bounds the literal edges for which a plain Reacher
// (not a StateReacher) still gets the pairwise enumeration.
const naiveTwoWidthLimit = 20000

// The width-two clauses are an optimisation, so their search has budgets:
// candidate pairs tested (a few seconds' work; the 10k bench histories need
// about 10⁸) and clauses added (about 130 MB of clauses), both also bounded
// in proportion to the search's size, so that it costs no more than the
// solver it helps: tests per literal edge, clauses per variable. The 10k
// bench histories need at most 170 tests an edge and 9 clauses a variable;
// 8,000 transactions over 54 keys in 1,100 sessions offered 20 clauses a
// variable, 36k transactions of 1,000 concurrent sessions 57, and finding
// them took longer than solving without them. With decisions in the
// history's own order (package acyclic's hint) such few-key histories
// need few of them: 128 tests an edge halve their CPU time and leave the
// bench histories' clauses as they were (docs/bench/twowidth). Past a budget the search
// stops and sets Encoding.TwoWidthTruncated. Variables so that tests can
// lower them.
var (
	maxTwoWidthWork    int64 = 1 << 30
	maxTwoWidthClauses       = 1 << 22
	// Per literal edge and per variable, and a floor for small searches.
	twoWidthWorkPerEdge   int64 = 128
	twoWidthClausesPerVar int64 = 16
	twoWidthFloor         int64 = 1 << 22
)

// Each backward edge may spend at most shareFactor times its fair share of
// what is left of its loop's budget, so that the first edges in rank order
// cannot starve the rest of the history.
const shareFactor = 16

// The forward-in-span loop stops once it has spent minYieldWork tests and
// found fewer than one clause per yieldTests of them: with many concurrent
// sessions its windows are wide and it can test 10⁸ pairs and find none.
const (
	minYieldWork int64 = 1 << 22
	yieldTests   int64 = 1 << 14
)

// litEdge is one state edge a literal asserts when true.
type litEdge struct {
	lit cnf.Lit
	// con identifies the constraint (WW pair i is i, WR set i is
	// len(WW)+i): two literals of one constraint never get a clause here.
	con  int32
	u, v int32
}

// twoWidth collects the width-two clauses of an encoding.
type twoWidth struct {
	e      *Encoding
	layers int
	node   func(history.TxnID) int32
	// reach reports whether state v is reachable from state u.
	reach func(u, v int32) bool
	edges []litEdge
	seen  map[uint64]struct{}
	lits  litArena    // the clauses' literals
	found [][]cnf.Lit // the clauses, for e.Clauses at the end (flush)
	work  int64
	// Known derivation indexes: readers[kt(x,w)] read x from w,
	// wwSucc[kt(x,w)] are w's known WW successors on x.
	readers, wwSucc map[uint64][]history.TxnID
	// counting makes add count edges (nEdges) instead of recording them.
	counting bool
	nEdges   int64
	ctx      context.Context
	fit      func(int64, string) error
	// full: fit refused room for more; err: ctx is done.
	full   bool
	err    error
	polls  int
	polled int64 // w.work at the last poll
	calls  int   // of clause
	// workCap and clauseCap are this encoding's budgets.
	workCap   int64
	clauseCap int
}

func kt(k history.KeyID, t history.TxnID) uint64 { return hyperpolygraph.KeyTxn(k, t) }

// addTwoWidth adds the clauses ¬l1 ∨ ¬l2 for pairs of literals that cannot
// both be true because the edges they assert close a cycle with known
// paths (VeriStrong Algorithm 2), and counts them in e.TwoWidth:
//
//   - canonical: l1 asserts a→b, l2 asserts c→d, and b ⇝ c, d ⇝ a are
//     known. A literal asserts its own edge (a WW variable's positive
//     literal A→B and negative literal B→A, a read-from candidate's positive
//     literal T→S) and the RW edges that edge derives from known edges.
//   - derived RW: a WW literal T→T' and a WR literal T→S of the same key
//     derive S→RW T', which closes a cycle when T' ⇝ S is known.
//
// For SI the same tests run on the doubled graph (see StateReacher). Every
// cycle there is a cycle of the induced SI graph, so every clause is sound
// for SI too; a pair of RW edges alone, which SI allows, closes no cycle
// there. A non-RW edge a→b is recorded once, as a0→b1 with a0 standing for
// a in either state (StateReaches' reading of a target state 0): a cycle
// through a0→b1 or a1→b1 is a path from b1 back to a in either state.
// Without a StateReacher SI gets no clauses and SER the pairwise enumeration
// (up to naiveTwoWidthLimit literal edges).
//
// It stops early, keeping the clauses found (TwoWidthTruncated), when fit
// refuses the room for more; it fails only when ctx is done.
func (e *Encoding) addTwoWidth(ctx context.Context, reach Reacher, fit func(int64, string) error) error {
	if br, ok := reach.(StateReacher); ok {
		w := e.newTwoWidth(ctx, fit, br.Layers(), br.Node, br.StateReaches)
		if !w.full {
			w.fast(br)
			w.derived()
		}
		return w.flush()
	}
	if e.G.Level == history.SI {
		return nil
	}
	w := e.newTwoWidth(ctx, fit, 1, func(t history.TxnID) int32 {
		if e.G.Included[t] {
			return int32(t)
		}
		return -1
	}, func(u, v int32) bool { return reach.Reaches(history.TxnID(u), history.TxnID(v)) })
	if len(w.edges) > naiveTwoWidthLimit || w.full {
		return nil
	}
	w.naive()
	w.derived()
	return w.flush()
}

// flush appends the clauses found to e.Clauses, growing it once (a list
// of clauses grown as they come copied it every quarter, in steps too
// long for a deadline), when the budget has room; else the clauses are
// dropped (they are an optimisation). It returns w.err.
func (w *twoWidth) flush() error {
	e := w.e
	if w.err != nil || len(w.found) == 0 {
		return w.err
	}
	if n := len(e.Clauses) + len(w.found); n > cap(e.Clauses) {
		if w.fit != nil && w.fit(int64(n)*clauseBytes, fmt.Sprintf("the width-two clauses (%d; the clause list)", len(w.found))) != nil {
			e.TwoWidth -= len(w.found)
			e.TwoWidthTruncated = true
			w.found = nil
			return nil
		}
		e.growClauses(n - len(e.Clauses))
	}
	e.appendClauses(w.found)
	w.found = nil
	return nil
}

func (e *Encoding) newTwoWidth(ctx context.Context, fit func(int64, string) error, layers int, node func(history.TxnID) int32, reach func(u, v int32) bool) *twoWidth {
	g := e.G
	w := &twoWidth{e: e, ctx: ctx, fit: fit, layers: layers, node: node, reach: reach, seen: map[uint64]struct{}{},
		readers: map[uint64][]history.TxnID{}}
	w.clauseCap = int(min(int64(maxTwoWidthClauses), twoWidthClausesPerVar*int64(e.NumVars)+twoWidthFloor/64))
	for k, rs := range g.Reads {
		for _, rd := range rs {
			if rd.Writer >= 0 {
				key := kt(history.KeyID(k), rd.Writer)
				w.readers[key] = append(w.readers[key], rd.Reader)
			}
		}
	}
	// Only the candidates of uncertain reads need their WW successors.
	w.wwSucc = g.CandidateWWSuccessors()
	// Count the literal edges, then collect them into a slice of that size
	// if the budget has room.
	w.counting = true
	w.collect()
	w.counting = false
	if fit != nil {
		what := fmt.Sprintf("the width-two search (%d literal edges)", w.nEdges)
		if fit(w.nEdges*int64(unsafe.Sizeof(litEdge{})), what) != nil {
			w.full, e.TwoWidthTruncated = true, true
			return w
		}
	}
	w.edges = make([]litEdge, 0, w.nEdges)
	w.collect()
	w.workCap = min(maxTwoWidthWork, twoWidthWorkPerEdge*int64(len(w.edges))+twoWidthFloor)
	return w
}

// collect records the state edges of every literal.
func (w *twoWidth) collect() {
	g := w.e.G
	for i, p := range g.WW {
		v := cnf.Lit(w.e.WWVar[i])
		w.wwLit(v, int32(i), p.Key, p.A, p.B)
		w.wwLit(-v, int32(i), p.Key, p.B, p.A)
	}
	for i, s := range g.WR {
		con := int32(len(g.WW) + i)
		for j, t := range s.Cands {
			l := cnf.Lit(w.e.WRBase[i] + int32(j))
			w.add(l, con, t, s.Reader, false)
			for _, t2 := range w.wwSucc[kt(s.Key, t)] {
				if t2 != s.Reader {
					w.add(l, con, s.Reader, t2, true)
				}
			}
		}
	}
}

// wwLit records the edges of literal l, which orders a before b on x.
func (w *twoWidth) wwLit(l cnf.Lit, con int32, x history.KeyID, a, b history.TxnID) {
	w.add(l, con, a, b, false)
	for _, s := range w.readers[kt(x, a)] {
		if s != b {
			w.add(l, con, s, b, true)
		}
	}
}

// add records the state edges of from→to for literal l.
func (w *twoWidth) add(l cnf.Lit, con int32, from, to history.TxnID, rw bool) {
	a, b := w.node(from), w.node(to)
	if a < 0 || b < 0 {
		return
	}
	u1, v1, _, _, _ := hyperpolygraph.StateArcs(a, b, rw, w.layers)
	if w.counting {
		w.nEdges++
		return
	}
	// Only the first arc: the second of a non-rw edge (a's state 1 to b's
	// state 1) is implied, since a's state 1 reaches whatever its state 0
	// does (package prune's reachability keeps it so).
	w.edges = append(w.edges, litEdge{l, con, u1, v1})
}

// clause adds ¬l1 ∨ ¬l2 once.
func (w *twoWidth) clause(l1, l2 cnf.Lit) {
	if l1 > l2 {
		l1, l2 = l2, l1
	}
	key := uint64(uint32(l1))<<32 | uint64(uint32(l2))
	if _, dup := w.seen[key]; dup {
		return
	}
	if w.full || w.err != nil {
		return // the budget refused room, or ctx is done: no more clauses
	}
	if w.calls++; w.calls&1023 == 0 {
		// A loop between two calls of spent can ask for many clauses.
		if w.err = w.ctx.Err(); w.err != nil {
			return
		}
	}
	if n := len(w.found); n == cap(w.found) && n >= 1<<16 && w.fit != nil {
		// The list grows by a quarter into a new array, the old one live
		// until it is copied.
		if w.fit(int64(n+n/4)*clauseBytes, fmt.Sprintf("the width-two clauses (%d so far; their list)", w.e.TwoWidth)) != nil {
			w.full = true
			return
		}
	}
	w.seen[key] = struct{}{}
	w.found = append(w.found, w.lits.pair(-l1, -l2))
	w.e.TwoWidth++
	if w.fit != nil && w.e.TwoWidth%fitClauses == 0 {
		// A clause: its header, its two literals, its entry in seen, and
		// the Clauses array's growth.
		if w.fit(fitClauses*(2*clauseBytes+8+24), fmt.Sprintf("the width-two clauses (%d so far)", w.e.TwoWidth)) != nil {
			w.full = true
		}
	}
}

// fitClauses is how many width-two clauses are added between two questions
// to the memory budget.
const fitClauses = 1 << 16

// spent charges n candidate tests and reports whether the search must stop:
// a budget is used up, the memory budget has no room for more clauses, or
// ctx is done (w.err).
func (w *twoWidth) spent(n int) bool {
	w.work += int64(n)
	// ctx is polled every 64 calls or 2¹⁶ tests, whichever comes first: a
	// call can charge thousands of tests.
	if w.polls++; (w.polls&63 == 0 || w.work-w.polled >= 1<<16) && w.err == nil {
		w.polled = w.work
		w.err = w.ctx.Err()
	}
	if w.err != nil {
		return true
	}
	if w.work > w.workCap || w.e.TwoWidth >= w.clauseCap || w.full {
		w.e.TwoWidthTruncated = true
		return true
	}
	return false
}

// naive tests every pair of literal edges.
func (w *twoWidth) naive() {
	for i, e1 := range w.edges {
		if w.spent(len(w.edges) - i) {
			return
		}
		for _, e2 := range w.edges[i+1:] {
			if e1.con != e2.con && w.reach(e1.v, e2.u) && w.reach(e2.v, e1.u) {
				w.clause(e1.lit, e2.lit)
			}
		}
	}
}

// fast finds the canonical pairs without testing every pair. Rank gives a
// topological order of the states. Call a literal edge backward when its
// target ranks before its source. For a pair a→b, c→d with b ⇝ c and d ⇝ a,
// rank(b) ≤ rank(c) and rank(d) ≤ rank(a) (for SI also when a stands for
// either state of its node: state 1 ranks before state 0), so at least one
// edge is backward, and either a forward a→b lies inside the rank span
// [d, c] of a backward c→d, or two backward edges have overlapping spans.
// Backward edges join nearly concurrent transactions and are short, so only
// those candidates are visited, then tested exactly.
func (w *twoWidth) fast(br StateReacher) {
	if len(w.edges) == 0 {
		return
	}
	m := 0
	for _, ed := range w.edges {
		m = max(m, int(ed.u)+1, int(ed.v)+1)
	}
	rank := make([]int32, m)
	for s := range rank {
		rank[s] = br.Rank(int32(s))
	}
	// Each edge with its source prepared as a target.
	type edge struct {
		litEdge
		pu probe
	}
	var fwd, bwd []edge
	for _, ed := range w.edges {
		e := edge{ed, probeOf(br, ed.u)}
		if rank[ed.u] < rank[ed.v] {
			fwd = append(fwd, e)
		} else {
			bwd = append(bwd, e)
		}
	}
	slices.SortFunc(fwd, func(x, y edge) int { return int(rank[x.u] - rank[y.u]) })
	// Ranks of the forward edges' ends, scanned in the inner loop.
	fu, fv := make([]int32, len(fwd)), make([]int32, len(fwd))
	for i, ed := range fwd {
		fu[i], fv[i] = rank[ed.u], rank[ed.v]
	}
	// Two backward edges with overlapping spans first: they are few and
	// give most clauses for their tests. Each loop may use half of what is
	// left of the work budget, each edge its share of that.
	slices.SortFunc(bwd, func(x, y edge) int { return int(rank[x.v] - rank[y.v]) })
	end := w.work + (w.workCap-w.work)/2
	for i := range bwd {
		e1 := &bwd[i]
		ra := rank[e1.u]
		row, vec := br.Source(e1.v)
		last := min(len(bwd), i+1+w.share(end, len(bwd)-i))
		j := i + 1
		for ; j < last && rank[bwd[j].v] <= ra; j++ {
			e2 := &bwd[j]
			if hit(row, vec, &e2.pu) && e1.con != e2.con {
				if r2, v2 := br.Source(e2.v); hit(r2, v2, &e1.pu) {
					w.clause(e1.lit, e2.lit)
				}
			}
		}
		if j == last && j < len(bwd) && rank[bwd[j].v] <= ra {
			w.e.TwoWidthTruncated = true
		}
		if w.spent(j - i) {
			return
		}
	}
	// A forward a→b inside the span of a backward c→d; d ⇝ a is tested
	// first.
	end, start, found := w.workCap, w.work, w.e.TwoWidth
	for i := range bwd {
		c, d := &bwd[i], rank[bwd[i].u]
		lo, _ := slices.BinarySearch(fu, rank[c.v])
		hi, _ := slices.BinarySearch(fu, d)
		if s := w.share(end, len(bwd)-i); hi-lo > s {
			hi, w.e.TwoWidthTruncated = lo+s, true
		}
		if w.spent(hi - lo) {
			return
		}
		row, vec := br.Source(c.v)
		for j := lo; j < hi; j++ {
			if fv[j] <= d {
				e := &fwd[j]
				if hit(row, vec, &e.pu) && e.con != c.con {
					if r2, v2 := br.Source(e.v); hit(r2, v2, &c.pu) {
						w.clause(e.lit, c.lit)
					}
				}
			}
		}
		if spent := w.work - start; spent > minYieldWork && int64(w.e.TwoWidth-found)*yieldTests < spent {
			w.e.TwoWidthTruncated = true
			return
		}
	}
}

// share returns how many tests one of n remaining edges may spend when
// the loop must stop at work end.
func (w *twoWidth) share(end int64, n int) int {
	return int(max(1024, shareFactor*(end-w.work)/int64(n)))
}

// derived adds the clauses for a WW literal T→T' and a WR literal T→S of
// the same key whose joint RW edge S→T' closes a cycle (T' ⇝ S).
func (w *twoWidth) derived() {
	g := w.e.G
	type succ struct {
		lit cnf.Lit
		to  history.TxnID
	}
	bySrc := map[uint64][]succ{}
	for i, p := range g.WW {
		v := cnf.Lit(w.e.WWVar[i])
		bySrc[kt(p.Key, p.A)] = append(bySrc[kt(p.Key, p.A)], succ{v, p.B})
		bySrc[kt(p.Key, p.B)] = append(bySrc[kt(p.Key, p.B)], succ{-v, p.A})
	}
	for i, s := range g.WR {
		sn := w.node(s.Reader)
		if sn < 0 {
			continue
		}
		for j, t := range s.Cands {
			l := cnf.Lit(w.e.WRBase[i] + int32(j))
			succs := bySrc[kt(s.Key, t)]
			if w.spent(len(succs)) {
				return
			}
			for _, ww := range succs {
				if ww.to == s.Reader {
					continue
				}
				tn := w.node(ww.to)
				if tn < 0 {
					continue
				}
				// The RW edge S→T' is the state edge u→v; it closes a
				// cycle iff v ⇝ u.
				u, v, _, _, _ := hyperpolygraph.StateArcs(sn, tn, true, w.layers)
				if w.reach(v, u) {
					w.clause(ww.lit, l)
				}
			}
		}
	}
}
