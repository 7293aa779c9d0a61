// Package prune owns the reachability of the known graph of a
// hyper-polygraph (bitset rows filled in reverse topological order) and the
// width-one pruning fixpoint that runs before encoding: a version-order
// option or a read-from candidate whose edges, together with the RW edges
// they derive from known edges, would close a cycle with known edges is
// dropped, and a constraint left with one option becomes known.
//
// For SER the graph is SO ∪ WR ∪ WW ∪ RW. For SI it is the doubled graph in
// which every transaction v has two states: v1, entered by an SO, WR or WW
// edge, and v0, entered by an RW edge. A non-RW edge a→b becomes a0→b1 and
// a1→b1, an RW edge a→b becomes a1→b0. A cycle of the doubled graph is a
// cycle in which every RW edge follows a non-RW edge, so the doubled graph is
// acyclic iff the induced SI graph (SO ∪ WR ∪ WW) ; RW? is.
//
// Internally v1 has every successor of v0 (a1→b1 for each a0→b1), so the
// state graph stores only a0→b1 and lets v1 inherit v0's successors: v1's
// row is v0's row plus v1's RW successors. The inheritance is an ordering
// constraint v1 before v0, which closes no cycle: v0 ⇝ v1 would start with
// an edge v1 has too.
package prune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
	"github.com/hyperiso/hyperiso/internal/memlimit"
)

// ErrTooLarge is returned, before anything large is allocated, when the
// reachability matrix would exceed Options.MaxBytes or the memory budget.
var ErrTooLarge = errors.New("prune: reachability matrix exceeds the memory limit")

// budgetError is the memory budget's refusal of the matrix: its message,
// and ErrTooLarge.
type budgetError struct{ error }

func (e budgetError) Is(target error) bool { return target == ErrTooLarge }
func (e budgetError) Unwrap() error        { return e.error }

// Options tune Prune.
type Options struct {
	// MaxBytes, when positive, bounds the reachability matrix on its own:
	// (states)²/8 bytes, where states is the number of included
	// transactions for SER and twice that for SI.
	MaxBytes int64
	// Fit is asked, before each allocation that grows faster than the
	// graph (the matrix, the known edges pruning adds), whether need more
	// bytes fit the memory budget; its error stops Prune. Nil means
	// memlimit.Default().Fit: the limits of the environment.
	Fit func(need int64, what string) error
}

// Stats reports what pruning did. Constraint counts are of uncertain
// constraints: version-order pairs (WW) and read-from sets (WR).
type Stats struct {
	Passes            int
	WWBefore, WWAfter int
	WRBefore, WRAfter int
	// WRCandsBefore and WRCandsAfter count the candidates of all read-from
	// sets.
	WRCandsBefore, WRCandsAfter int
	// KnownBefore and KnownAfter count g.Known.
	KnownBefore, KnownAfter int
	// Nodes is the number of included transactions; States is Nodes for
	// SER and 2·Nodes for SI.
	Nodes, States int
	// ReachBytes is the size of the reachability matrix.
	ReachBytes int64
}

// Conflict proves the history violates the level before any solving.
type Conflict struct {
	// Cycle is a concrete cycle: consecutive edges, the last ending where
	// the first starts. Every edge is in g.Known or is an edge of the
	// option being tried (the option itself or an RW edge it derives). For
	// SI every RW edge of the cycle follows a non-RW edge, cyclically.
	Cycle []hyperpolygraph.Edge
	// Options holds, when a constraint has no feasible option, one cycle
	// per option: for WW the orientations A→B then B→A, for WR the
	// candidates in WR.Cands order. Options[0] is Cycle. Nil when the known
	// graph itself is cyclic. The cycles use g.Known as it was when the
	// constraint was tested.
	Options [][]hyperpolygraph.Edge
	// WW or WR names the constraint with no feasible option, if any.
	WW *hyperpolygraph.WWPair
	WR *hyperpolygraph.WRSet
}

// Prune mutates g to the width-one fixpoint (cases I–III of VeriStrong §6.1):
//
//   - I: a WW pair with an infeasible orientation leaves g.WW, and the other
//     orientation joins g.Known with the RW edges it derives from known WR
//     edges of its key;
//   - II: a read-from candidate whose WR edge, or an RW edge it derives from
//     known WW edges, closes a cycle leaves its set; a set left with one
//     candidate leaves g.WR and that candidate joins g.Known with its RW
//     edges (g.Reads is kept in step);
//   - III: is case I for the RW edges of an orientation.
//
// An option is infeasible iff one of its edges u→v has v ⇝ u in the known
// graph; when the known graph is acyclic no cycle can use two edges of one
// option (they share their target, or their source, or would need a known
// cycle), so edge-by-edge tests are complete.
//
// It returns the final reachability (nil with a Conflict or an error), or a
// Conflict when a constraint has no feasible option or the known graph is
// cyclic, or ErrTooLarge (wrapping Fit's error when the budget refused the
// matrix), or Fit's error, or the context's error.
func Prune(ctx context.Context, g *hyperpolygraph.Graph, opt Options) (Stats, *Reach, *Conflict, error) {
	p := newPruner(g)
	st := Stats{
		WWBefore:      len(g.WW),
		WRBefore:      len(g.WR),
		WRCandsBefore: countCands(g),
		KnownBefore:   len(g.Known),
		Nodes:         len(p.r.txns),
		States:        p.m,
		ReachBytes:    p.r.bytes(),
	}
	if opt.MaxBytes > 0 && st.ReachBytes > opt.MaxBytes {
		return st, nil, nil, fmt.Errorf("%w: %d states need %d bytes, limit %d", ErrTooLarge, p.m, st.ReachBytes, opt.MaxBytes)
	}
	p.fit = opt.Fit
	if p.fit == nil {
		p.fit = memlimit.Default().Fit
	}
	if err := p.fit(st.ReachBytes, fmt.Sprintf("pruning's reachability matrix (%d states)", p.m)); err != nil {
		return st, nil, nil, budgetError{err}
	}
	p.r.bits = make([]uint64, p.m*p.r.words)
	finish := func() {
		st.WWAfter, st.WRAfter, st.WRCandsAfter, st.KnownAfter = len(g.WW), len(g.WR), countCands(g), len(g.Known)
	}
	for {
		if err := ctx.Err(); err != nil {
			finish()
			return st, nil, nil, err
		}
		st.Passes++
		p.buildCSR()
		if cyc := p.topoSort(); cyc != nil {
			finish()
			return st, nil, &Conflict{Cycle: cyc}, nil
		}
		if err := p.fillReach(ctx); err != nil {
			finish()
			return st, nil, nil, err
		}
		changed, c, err := p.pass(ctx)
		if err != nil || c != nil {
			finish()
			return st, nil, c, err
		}
		if !changed {
			break
		}
	}
	finish()
	return st, &p.r, nil, nil
}

func countCands(g *hyperpolygraph.Graph) int {
	n := 0
	for _, s := range g.WR {
		n += len(s.Cands)
	}
	return n
}

// kt packs a key and a transaction into a map key.
func kt(k history.KeyID, t history.TxnID) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(t)) }

type pruner struct {
	g *hyperpolygraph.Graph
	r Reach
	m int // number of states
	// core holds the state edges that matter for reachability: every
	// state edge of g.Known[:seen] except those found implied by other
	// edges (dropping them keeps reachability, and so cycles, unchanged).
	core []stateEdge
	seen int
	// filled says whether r.bits holds the reachability of core.
	filled bool
	// The core in CSR form: the successors of state u are
	// dst[off[u]:off[u+1]], each made from g.Known[edge[i]].
	off  []int32
	dst  []int32
	edge []int32
	// order is a topological order of the states, rank its inverse.
	order, rank []int32
	// The known readers of each writer's version of key rdKey, as linked
	// lists: rdHead[w] (valid when rdStamp[w] == rdGen) indexes rdList and
	// rdNext. Loaded per key from g.Reads.
	rdKey           history.KeyID
	rdGen           int32
	rdHead, rdStamp []int32
	rdNext          []int32
	rdList          []history.TxnID
	// wwSucc[kt(x, t)] lists the known WW successors of t on x, kept only
	// for the candidates t of uncertain reads of x (the only ones asked).
	wwSucc map[uint64][]history.TxnID
	// fit is Options.Fit, or the default budget's.
	fit func(need int64, what string) error
	// Scratch.
	stamp []int32
	opt   []hyperpolygraph.Edge
	drop  []history.TxnID
	keys  []uint64
}

// stateEdge is an edge of the state graph and the known edge it comes from.
type stateEdge struct{ u, v, e int32 }

func newPruner(g *hyperpolygraph.Graph) *pruner {
	p := &pruner{g: g, wwSucc: map[uint64][]history.TxnID{}, rdKey: -1}
	p.r.layers = 1
	if g.Level == history.SI {
		p.r.layers = 2
	}
	p.r.node = make([]int32, g.N())
	for t, in := range g.Included {
		p.r.node[t] = -1
		if in {
			p.r.node[t] = int32(len(p.r.txns))
			p.r.txns = append(p.r.txns, history.TxnID(t))
		}
	}
	p.m = len(p.r.txns) * p.r.layers
	p.r.words = (p.m + 63) / 64
	p.rdHead = make([]int32, g.N())
	p.rdStamp = make([]int32, g.N())
	for _, set := range g.WR {
		for _, t := range set.Cands {
			p.wwSucc[kt(set.Key, t)] = nil
		}
	}
	for _, e := range g.Known {
		if e.Rel == hyperpolygraph.WW {
			if l, ok := p.wwSucc[kt(e.Key, e.From)]; ok {
				p.wwSucc[kt(e.Key, e.From)] = append(l, e.To)
			}
		}
	}
	return p
}

// addCore appends the state edges of g.Known[i] that the current
// reachability does not already imply.
func (p *pruner) addCore(i int) {
	e := p.g.Known[i]
	a, b := p.r.node[e.From], p.r.node[e.To]
	if a < 0 || b < 0 {
		return
	}
	add := func(u, v int32) {
		if !p.filled || !p.r.has(u, v) {
			p.core = append(p.core, stateEdge{u, v, int32(i)})
		}
	}
	switch {
	case p.r.layers == 1:
		add(a, b)
	case e.Rel == hyperpolygraph.RW:
		add(2*a+1, 2*b)
	default:
		add(2*a, 2*b+1) // a1→b1 is inherited
	}
}

// inherits reports whether state u inherits the successors of u-1 (u is
// some v1 of SI).
func (p *pruner) inherits(u int32) bool { return p.r.layers == 2 && u&1 == 1 }

// buildCSR brings the core up to date with g.Known and lays it out by
// source, dropping duplicates.
func (p *pruner) buildCSR() {
	for i := p.seen; i < len(p.g.Known); i++ {
		p.addCore(i)
	}
	p.seen = len(p.g.Known)
	m := p.m
	p.off = slices.Grow(p.off[:0], m+1)[:m+1]
	clear(p.off)
	for _, se := range p.core {
		p.off[se.u+1]++
	}
	for i := 1; i <= m; i++ {
		p.off[i] += p.off[i-1]
	}
	n := len(p.core)
	p.dst = slices.Grow(p.dst[:0], n)[:n]
	p.edge = slices.Grow(p.edge[:0], n)[:n]
	fill := make([]int32, m)
	copy(fill, p.off[:m])
	for _, se := range p.core {
		p.dst[fill[se.u]] = se.v
		p.edge[fill[se.u]] = se.e
		fill[se.u]++
	}
	// Drop duplicates in place, keeping the first edge behind each pair.
	if len(p.stamp) < m {
		p.stamp = make([]int32, m)
	}
	clear(p.stamp)
	w := int32(0)
	for u := range m {
		start, end := p.off[u], p.off[u+1]
		p.off[u] = w
		for i := start; i < end; i++ {
			v := p.dst[i]
			if p.stamp[v] == int32(u+1) {
				continue
			}
			p.stamp[v] = int32(u + 1)
			p.dst[w], p.edge[w] = v, p.edge[i]
			w++
		}
	}
	p.off[m] = w
	p.dst, p.edge = p.dst[:w], p.edge[:w]
}

// topoSort computes order and rank, or returns a cycle of known edges.
func (p *pruner) topoSort() []hyperpolygraph.Edge {
	m := p.m
	indeg := make([]int32, m)
	for _, v := range p.dst {
		indeg[v]++
	}
	if p.r.layers == 2 {
		for v := 0; v < m; v += 2 {
			indeg[v]++ // v1 before v0
		}
	}
	p.order = slices.Grow(p.order[:0], m)
	for u := range m {
		if indeg[u] == 0 {
			p.order = append(p.order, int32(u))
		}
	}
	for i := 0; i < len(p.order); i++ {
		u := p.order[i]
		for _, v := range p.dst[p.off[u]:p.off[u+1]] {
			if indeg[v]--; indeg[v] == 0 {
				p.order = append(p.order, v)
			}
		}
		if p.inherits(u) {
			if indeg[u-1]--; indeg[u-1] == 0 {
				p.order = append(p.order, u-1)
			}
		}
	}
	if len(p.order) < m {
		return p.knownCycle(indeg)
	}
	p.rank = slices.Grow(p.rank[:0], m)[:m]
	for i, u := range p.order {
		p.rank[u] = int32(i)
	}
	// Successors in topological order let fillReach skip (and drop) those
	// already reached through an earlier one.
	for u := range m {
		lo, hi := p.off[u], p.off[u+1]
		if hi-lo > 1 {
			p.sortByRank(p.dst[lo:hi], p.edge[lo:hi])
		}
	}
	return nil
}

// sortByRank sorts a successor list (and its edge indexes) by rank.
func (p *pruner) sortByRank(dst, edge []int32) {
	rank := p.rank
	if len(dst) <= 16 {
		for i := 1; i < len(dst); i++ {
			for j := i; j > 0 && rank[dst[j]] < rank[dst[j-1]]; j-- {
				dst[j], dst[j-1] = dst[j-1], dst[j]
				edge[j], edge[j-1] = edge[j-1], edge[j]
			}
		}
		return
	}
	ps := p.keys[:0]
	for i := range dst {
		ps = append(ps, uint64(rank[dst[i]])<<32|uint64(uint32(edge[i])))
	}
	slices.Sort(ps)
	for i, q := range ps {
		dst[i], edge[i] = p.order[q>>32], int32(uint32(q))
	}
	p.keys = ps
}

// knownCycle finds a cycle among the states Kahn's algorithm left with
// positive in-degree: each has a predecessor among them, so walking
// predecessors must repeat a state. An inheritance step v1 ⇒ v0 followed by
// v0's edge stands for v1's own copy of that edge, so it adds no edge.
func (p *pruner) knownCycle(indeg []int32) []hyperpolygraph.Edge {
	const inherited = -2
	m := p.m
	// pred[v] is a CSR index of an edge into v from a leftover state, or
	// inherited (from v+1).
	pred := make([]int32, m)
	for i := range pred {
		pred[i] = -1
	}
	src := make([]int32, len(p.dst))
	for u := range m {
		for i := p.off[u]; i < p.off[u+1]; i++ {
			src[i] = int32(u)
			if v := p.dst[i]; indeg[u] > 0 && indeg[v] > 0 && pred[v] < 0 {
				pred[v] = i
			}
		}
		if p.inherits(int32(u)) && indeg[u] > 0 && indeg[u-1] > 0 && pred[u-1] < 0 {
			pred[u-1] = inherited
		}
	}
	from := func(v int32) int32 {
		if pred[v] == inherited {
			return v + 1
		}
		return src[pred[v]]
	}
	v := int32(-1)
	for u := range m {
		if indeg[u] > 0 {
			v = int32(u)
			break
		}
	}
	seen := make([]bool, m)
	for !seen[v] {
		seen[v] = true
		v = from(v)
	}
	// v is on the cycle; walk it once more collecting edges (backwards).
	var out []hyperpolygraph.Edge
	for u := v; ; {
		if pred[u] != inherited {
			out = append(out, p.g.Known[p.edge[pred[u]]])
		}
		if u = from(u); u == v {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// fillReach computes the rows in reverse topological order: a row is its
// own state plus the rows of its successors, one word-parallel OR each. A
// successor already in the row is implied by an earlier one (they come in
// topological order), so its edge leaves the core. It stops early, leaving
// the rows unusable, when ctx is done.
func (p *pruner) fillReach(ctx context.Context) error {
	w := p.r.words
	b := p.r.bits
	p.core = p.core[:0]
	p.filled = false
	// ctx is polled every few million words of work: rows are long (a bit
	// per state) when the graph is large.
	work := 0
	for i := len(p.order) - 1; i >= 0; i-- {
		if work += w; work >= 1<<20 {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		u := p.order[i]
		row := b[int(u)*w : int(u+1)*w]
		if p.inherits(u) {
			// v0 comes after v1 in the order, so its row is ready.
			copy(row, b[int(u-1)*w:int(u)*w])
			row[(u-1)>>6] &^= 1 << ((u - 1) & 63)
		} else {
			clear(row)
		}
		row[u>>6] |= 1 << (u & 63)
		for k := p.off[u]; k < p.off[u+1]; k++ {
			v := p.dst[k]
			if row[v>>6]&(1<<(v&63)) != 0 {
				continue
			}
			p.core = append(p.core, stateEdge{u, v, p.edge[k]})
			work += w
			src := b[int(v)*w : int(v+1)*w]
			for j := range row {
				row[j] |= src[j]
			}
		}
	}
	p.filled = true
	return nil
}

// blocked reports whether adding edge from→to (RW or not) closes a cycle
// with the known graph, and through which state edge u→v (v ⇝ u).
func (p *pruner) blocked(from, to history.TxnID, rw bool) (u, v int32, ok bool) {
	a, b := p.r.node[from], p.r.node[to]
	r := &p.r
	switch {
	case r.layers == 1:
		return a, b, r.has(b, a)
	case rw:
		return 2*a + 1, 2 * b, r.has(2*b, 2*a+1)
	case r.has(2*b+1, 2*a):
		return 2 * a, 2*b + 1, true
	default:
		return 2*a + 1, 2*b + 1, r.has(2*b+1, 2*a+1)
	}
}

// loadReaders indexes the known readers of key x by writer.
func (p *pruner) loadReaders(x history.KeyID) {
	if x == p.rdKey {
		return
	}
	p.rdKey = x
	p.rdGen++
	p.rdList, p.rdNext = p.rdList[:0], p.rdNext[:0]
	for _, rd := range p.g.Reads[x] {
		w := rd.Writer
		if w < 0 {
			continue
		}
		if p.rdStamp[w] != p.rdGen {
			p.rdStamp[w], p.rdHead[w] = p.rdGen, -1
		}
		p.rdList = append(p.rdList, rd.Reader)
		p.rdNext = append(p.rdNext, p.rdHead[w])
		p.rdHead[w] = int32(len(p.rdList) - 1)
	}
}

// firstReader starts the list of known readers of w's version of the
// loaded key (-1: none).
func (p *pruner) firstReader(w history.TxnID) int32 {
	if p.rdStamp[w] != p.rdGen {
		return -1
	}
	return p.rdHead[w]
}

// wwBad reports whether orientation a→b of a WW pair on x is infeasible,
// testing the WW edge before the RW edges it derives.
func (p *pruner) wwBad(x history.KeyID, a, b history.TxnID) bool {
	if _, _, bad := p.blocked(a, b, false); bad {
		return true
	}
	p.loadReaders(x)
	for i := p.firstReader(a); i >= 0; i = p.rdNext[i] {
		if s := p.rdList[i]; s != b {
			if _, _, bad := p.blocked(s, b, true); bad {
				return true
			}
		}
	}
	return false
}

// wrBad reports whether candidate t of the read of x by s is infeasible.
func (p *pruner) wrBad(x history.KeyID, t, s history.TxnID) bool {
	if _, _, bad := p.blocked(t, s, false); bad {
		return true
	}
	for _, t2 := range p.wwSucc[kt(x, t)] {
		if t2 != s {
			if _, _, bad := p.blocked(s, t2, true); bad {
				return true
			}
		}
	}
	return false
}

// wwOption collects the edges of orientation a→b of a WW pair on key x:
// the WW edge and the RW edges it derives from known reads of a's version.
func (p *pruner) wwOption(x history.KeyID, a, b history.TxnID) []hyperpolygraph.Edge {
	p.opt = append(p.opt[:0], hyperpolygraph.Edge{From: a, To: b, Rel: hyperpolygraph.WW, Key: x})
	p.loadReaders(x)
	for i := p.firstReader(a); i >= 0; i = p.rdNext[i] {
		if s := p.rdList[i]; s != b {
			p.opt = append(p.opt, hyperpolygraph.Edge{From: s, To: b, Rel: hyperpolygraph.RW, Key: x})
		}
	}
	return p.opt
}

// wrOption collects the edges of candidate t of a read of x by s: the WR
// edge and the RW edges it derives from known WW successors of t.
func (p *pruner) wrOption(x history.KeyID, t, s history.TxnID) []hyperpolygraph.Edge {
	p.opt = append(p.opt[:0], hyperpolygraph.Edge{From: t, To: s, Rel: hyperpolygraph.WR, Key: x})
	for _, t2 := range p.wwSucc[kt(x, t)] {
		if t2 != s {
			p.opt = append(p.opt, hyperpolygraph.Edge{From: s, To: t2, Rel: hyperpolygraph.RW, Key: x})
		}
	}
	return p.opt
}

// optionCycle returns a cycle made of the first blocked edge of opt and a
// known path back to its source.
func (p *pruner) optionCycle(opt []hyperpolygraph.Edge) []hyperpolygraph.Edge {
	for _, e := range opt {
		u, v, ok := p.blocked(e.From, e.To, e.Rel == hyperpolygraph.RW)
		if !ok {
			continue
		}
		return append([]hyperpolygraph.Edge{e}, p.path(v, u)...)
	}
	return nil
}

// path returns the known edges of a shortest state path from s to t.
func (p *pruner) path(s, t int32) []hyperpolygraph.Edge {
	if s == t {
		return nil
	}
	// via[v] is the CSR index of the edge that reached v, parent[v] the
	// state it left (v1 uses the edges of v0 as its own).
	via := make([]int32, p.m)
	parent := make([]int32, p.m)
	for i := range via {
		via[i] = -1
	}
	queue := []int32{s}
	via[s] = -2
	for len(queue) > 0 && via[t] == -1 {
		u := queue[0]
		queue = queue[1:]
		for _, from := range [2]int32{u, u - 1} {
			if from != u && !p.inherits(u) {
				break
			}
			for i := p.off[from]; i < p.off[from+1]; i++ {
				if v := p.dst[i]; via[v] == -1 {
					via[v], parent[v] = i, u
					queue = append(queue, v)
				}
			}
		}
	}
	var out []hyperpolygraph.Edge
	for v := t; v != s; v = parent[v] {
		out = append(out, p.g.Known[p.edge[via[v]]])
	}
	slices.Reverse(out)
	return out
}

// pass tests every constraint once against the reachability of the known
// graph as it was at the start of the pass. New known edges join g.Known
// (and the derivation indexes) at once, so later constraints of the same
// pass already derive RW edges from them; reachability catches up next pass.
func (p *pruner) pass(ctx context.Context) (changed bool, c *Conflict, err error) {
	g := p.g
	// Case I and III. Most pairs get decided in the first pass: grow
	// g.Known once rather than many times (the RW edges they derive come
	// on top).
	if err := p.growKnown(len(g.WW)); err != nil {
		return false, nil, err
	}
	keep := g.WW[:0]
	for i, pr := range g.WW {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				// Keep the rest; nothing is lost.
				keep = append(keep, g.WW[i:]...)
				g.WW = keep
				return changed, nil, err
			}
		}
		fwdBad := p.wwBad(pr.Key, pr.A, pr.B)
		bwdBad := p.wwBad(pr.Key, pr.B, pr.A)
		switch {
		case fwdBad && bwdBad:
			c1 := p.optionCycle(p.wwOption(pr.Key, pr.A, pr.B))
			c2 := p.optionCycle(p.wwOption(pr.Key, pr.B, pr.A))
			keep = append(keep, g.WW[i:]...)
			g.WW = keep
			return changed, &Conflict{Cycle: c1, Options: [][]hyperpolygraph.Edge{c1, c2}, WW: &pr}, nil
		case fwdBad || bwdBad:
			a, b := pr.A, pr.B
			if fwdBad {
				a, b = b, a
			}
			if err := p.addWW(pr.Key, a, b); err != nil {
				keep = append(keep, g.WW[i:]...)
				g.WW = keep
				return changed, nil, err
			}
			changed = true
		default:
			keep = append(keep, pr)
		}
	}
	g.WW = keep

	// Case II. newSet[i] is the new index of set i, or -1 when it became
	// known, with writer[i] its writer.
	newSet := make([]int32, len(g.WR))
	writer := make([]history.TxnID, len(g.WR))
	n := 0
	resolved := false
	for i := range g.WR {
		s := &g.WR[i]
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				// Leave the sets (and g.Reads) as they are, minus resolved ones.
				for j := i; j < len(g.WR); j++ {
					newSet[j] = int32(n)
					g.WR[n] = g.WR[j]
					n++
				}
				p.compactWR(newSet, writer, n, resolved)
				return changed, nil, err
			}
		}
		cands := s.Cands[:0]
		p.drop = p.drop[:0]
		for _, t := range s.Cands {
			if p.wrBad(s.Key, t, s.Reader) {
				p.drop = append(p.drop, t)
				continue
			}
			cands = append(cands, t)
		}
		if len(p.drop) > 0 {
			changed = true
		}
		switch len(cands) {
		case 0:
			// Every candidate closes a cycle: keep the set whole for the
			// report and leave the graph consistent.
			s.Cands = append(cands, p.drop...)
			var cycles [][]hyperpolygraph.Edge
			for _, t := range s.Cands {
				cycles = append(cycles, p.optionCycle(p.wrOption(s.Key, t, s.Reader)))
			}
			orig := *s
			orig.Cands = slices.Clone(s.Cands)
			for j := i; j < len(g.WR); j++ {
				newSet[j] = int32(n)
				g.WR[n] = g.WR[j]
				n++
			}
			p.compactWR(newSet, writer, n, resolved)
			return changed, &Conflict{Cycle: cycles[0], Options: cycles, WR: &orig}, nil
		case 1:
			if err := p.addWR(s.Key, cands[0], s.Reader); err != nil {
				s.Cands = append(cands, p.drop...)
				for j := i; j < len(g.WR); j++ {
					newSet[j] = int32(n)
					g.WR[n] = g.WR[j]
					n++
				}
				p.compactWR(newSet, writer, n, resolved)
				return changed, nil, err
			}
			newSet[i] = -1
			writer[i] = cands[0]
			resolved = true
		default:
			s.Cands = cands
			newSet[i] = int32(n)
			g.WR[n] = *s
			n++
		}
	}
	p.compactWR(newSet, writer, n, resolved)
	return changed, nil, nil
}

// compactWR truncates g.WR to n sets and renumbers g.Reads.
func (p *pruner) compactWR(newSet []int32, writer []history.TxnID, n int, resolved bool) {
	g := p.g
	clear(g.WR[n:])
	g.WR = g.WR[:n]
	p.rdKey = -1 // g.Reads changes
	if !resolved && n == len(newSet) {
		return
	}
	for k := range g.Reads {
		rs := g.Reads[k]
		for j := range rs {
			if i := rs[j].Set; i >= 0 {
				if ns := newSet[i]; ns >= 0 {
					rs[j].Set = ns
				} else {
					rs[j].Set, rs[j].Writer = -1, writer[i]
				}
			}
		}
	}
}

// addWW makes a→b a known WW edge on x, with the RW edges it derives.
func (p *pruner) addWW(x history.KeyID, a, b history.TxnID) error {
	opt := p.wwOption(x, a, b)
	if err := p.growKnown(len(opt)); err != nil {
		return err
	}
	p.g.Known = append(p.g.Known, opt...)
	if l, ok := p.wwSucc[kt(x, a)]; ok {
		p.wwSucc[kt(x, a)] = append(l, b)
	}
	return nil
}

// addWR makes t→s a known WR edge on x, with the RW edges it derives.
func (p *pruner) addWR(x history.KeyID, t, s history.TxnID) error {
	opt := p.wrOption(x, t, s)
	if err := p.growKnown(len(opt)); err != nil {
		return err
	}
	p.g.Known = append(p.g.Known, opt...)
	// The reader joins g.Reads (and so the reader index) when the pass
	// compacts the sets; no WW pair is tested before that.
	return nil
}

// growKnown makes room for n more known edges. When the slice must move,
// it grows by a quarter at least, after asking the memory budget for the
// new array: the RW edges that decided constraints derive can outgrow
// everything else.
func (p *pruner) growKnown(n int) error {
	k := p.g.Known
	if cap(k)-len(k) >= n {
		return nil
	}
	grow := max(n, len(k)/4)
	need := int64(len(k)+grow) * int64(unsafe.Sizeof(hyperpolygraph.Edge{}))
	if err := p.fit(need, fmt.Sprintf("pruning's known edges (%d, growing by %d)", len(k), grow)); err != nil {
		return err
	}
	p.g.Known = slices.Grow(k, grow)
	return nil
}

// Reach is the reachability of a known graph: one bitset row per state.
// It implements encode.Reacher and encode.BitReacher.
type Reach struct {
	layers int
	// node maps a TxnID to its dense node number, -1 when not included;
	// txns is the inverse.
	node []int32
	txns []history.TxnID
	// words per row; row of state s is bits[s*words:(s+1)*words].
	words int
	bits  []uint64
}

func (r *Reach) bytes() int64 { return int64(len(r.txns)*r.layers) * int64(r.words) * 8 }

func (r *Reach) has(from, to int32) bool {
	return r.bits[int(from)*r.words+int(to>>6)]&(1<<(to&63)) != 0
}

// Reaches reports whether to is reachable from from (every node reaches
// itself). For SI this is reachability in the induced SI graph: a path of
// the doubled graph from from's state 0, which can leave only by a non-RW
// edge, to either state of to.
func (r *Reach) Reaches(from, to history.TxnID) bool {
	if from == to {
		return true
	}
	if int(from) >= len(r.node) || int(to) >= len(r.node) || from < 0 || to < 0 {
		return false
	}
	a, b := r.node[from], r.node[to]
	if a < 0 || b < 0 {
		return false
	}
	if r.layers == 1 {
		return r.has(a, b)
	}
	return r.has(2*a, 2*b) || r.has(2*a, 2*b+1)
}

// Layers is 1 for SER and 2 for SI's doubled graph.
func (r *Reach) Layers() int { return r.layers }

// Node returns the dense node number of t, or -1 when t is not included.
// State (t, layer) is Layers()·Node(t)+layer; for SI layer 1 is "entered by
// a non-RW edge" and layer 0 "entered by an RW edge".
func (r *Reach) Node(t history.TxnID) int32 {
	if t < 0 || int(t) >= len(r.node) {
		return -1
	}
	return r.node[t]
}

// Txn returns the transaction of node i.
func (r *Reach) Txn(i int32) history.TxnID { return r.txns[i] }

// NumStates returns Layers()·(number of nodes).
func (r *Reach) NumStates() int { return len(r.txns) * r.layers }

// Row returns the reachability row of state s: bit j is set iff state j is
// reachable from s. The row aliases the matrix.
func (r *Reach) Row(s int32) []uint64 { return r.bits[int(s)*r.words : int(s+1)*r.words] }
