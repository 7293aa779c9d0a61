package hyperpolygraph

import (
	"cmp"
	"container/heap"
	"slices"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
)

// HistoryOrder ranks the transactions (pos[t] for TxnID t; T⊥ is 0) by the
// order the history itself suggests: completion time when every
// transaction has a real-time interval, ties by position, else position in
// the file when the file interleaves its sessions. It is nil when the
// history suggests nothing: a file that lists one session after another
// (dbcop, Cobra's per-thread logs) says nothing of time. Without
// --realtime the order is no constraint, only a good first guess: on a
// history that satisfies its level, the commit order it approximates is
// almost always a valid one.
func (g *Graph) HistoryOrder() []int32 {
	h := g.H
	nt := g.N()
	timed := g.Timed()
	if !timed && !h.Interleaved() {
		return nil
	}
	txns := make([]int32, nt)
	for x := range txns {
		txns[x] = int32(x)
	}
	if timed {
		// T⊥ (0) first, then by completion, ties by position.
		slices.SortStableFunc(txns[1:], func(a, b int32) int {
			return cmp.Compare(h.Txns[a].End, h.Txns[b].End)
		})
	}
	pos := make([]int32, nt)
	for i, x := range txns {
		pos[x] = int32(i)
	}
	return pos
}

// BackwardReads is the share of the certain read-from edges whose reader
// comes before its writer in hint (HistoryOrder): 0 in a commit order,
// and the more the further hint is from one.
func (g *Graph) BackwardReads(hint []int32) float64 {
	wr, back := 0, 0
	for _, e := range g.Known {
		if e.Rel == history.WR && e.From != history.InitTxn {
			wr++
			if hint[e.From] > hint[e.To] {
				back++
			}
		}
	}
	if wr == 0 {
		return 0
	}
	return float64(back) / float64(wr)
}

// Timed says whether every transaction but T⊥ has a real-time
// interval.
func (g *Graph) Timed() bool {
	h := g.H
	if len(h.Txns) < g.N() {
		return false
	}
	for x := 1; x < g.N(); x++ {
		if !h.Txns[x].Timed {
			return false
		}
	}
	return true
}

// ResolveInOrder is the compatible graph of the assignment that follows
// the transaction order hint (HistoryOrder) as far as the known graph
// allows: the included transactions are sorted topologically by the known
// edges other than RW, taking among the ready ones the first by hint; each
// key's versions follow that order, and each uncertain read observes its
// latest candidate before the reader (its first candidate when none is
// before it); with snapshots (SI, PC, PSI), when every transaction is
// timed, the first in the version order of the candidates real time lets
// it have seen whose version was not yet overwritten when it started (a
// commit whose answer came late included), else its latest candidate
// that completed before it started: what a snapshot taken at its start
// holds. The graph is built like Resolve's, for a graph whose pairs
// are listed or pending alike, without listing them. It is nil when the
// known edges other than RW have a cycle (no assignment avoids it).
//
// Nothing says the result is acyclic: the caller tests it, and only an
// acyclic one is an answer.
func (g *Graph) ResolveInOrder(hint []int32, snapshots bool) *Compatible {
	rank := g.knownTopoOrder(hint)
	if rank == nil {
		return nil
	}
	size := g.resolveInOrderEdges()
	c := &Compatible{G: g, Edges: make([]Edge, 0, size), Prov: make([]Prov, 0, size)}
	// Provenance as Resolve gives it, but for the version-order pairs,
	// which need not be listed: the WR set behind an uncertain read's
	// edges (the mixed test matches reads to their edges by it).
	none := Prov{-1, -1}
	addProv := func(e Edge, p Prov) {
		c.Edges = append(c.Edges, e)
		c.Prov = append(c.Prov, p)
	}
	add := func(e Edge) { addProv(e, none) }
	// The chains follow the known WW edges (the ranks are a topological
	// order of them); were one ever broken, the guess would contradict
	// what the history states, so there is none. They are left out of
	// the graph, as Resolve leaves them: each key's version order is its
	// chain alone, which the mixed test relies on.
	for _, e := range g.Known {
		switch {
		case e.Rel == history.WW:
			if rank[e.From] >= rank[e.To] {
				return nil
			}
		case inOrderKnown(e):
			add(e)
		}
	}
	h := g.H
	// Without real time, a snapshot is placed in the order itself.
	var chosen []history.TxnID
	if snapshots && !g.Timed() {
		chosen = g.snapshotChoices(rank)
		snapshots = false
	}
	if pc := g.predChoices(rank); pc != nil {
		// Rows a predicate read did not return, at RR: as old as allowed.
		if chosen == nil {
			chosen = pc
		}
		for i, w := range pc {
			if w >= 0 {
				chosen[i] = w
			}
		}
	}
	// at[w] is w's place in the version order of the key at hand.
	at := make([]int32, g.N())
	var chain []history.TxnID
	for k, ws := range g.Writers {
		key := history.KeyID(k)
		chain = append(chain[:0], ws...)
		slices.SortFunc(chain, func(a, b history.TxnID) int { return cmp.Compare(rank[a], rank[b]) })
		for i, w := range chain {
			at[w] = int32(i)
			if i > 0 {
				add(Edge{From: chain[i-1], To: w, Rel: history.WW, Key: key})
			}
		}
		for _, r := range g.Reads[k] {
			w, prov := r.Writer, none
			if r.Set >= 0 {
				prov.WR = r.Set
				cands := g.WR[r.Set].Cands
				w = latestBefore(cands, rank, rank[r.Reader])
				if chosen != nil && chosen[r.Set] >= 0 {
					w = chosen[r.Set]
				}
				if snapshots {
					w = freshest(h, cands, chain, at, rank, r.Reader, latestInSnapshot(h, cands, rank, r.Reader, w))
				}
				addProv(Edge{From: w, To: r.Reader, Rel: history.WR, Key: key}, prov)
			}
			if i := at[w] + 1; int(i) < len(chain) && chain[i] != r.Reader {
				// The reader overwrote the version itself: its own WW
				// edge orders it before every later writer.
				addProv(Edge{From: r.Reader, To: chain[i], Rel: history.RW, Key: key}, prov)
				if r.Pred {
					c.markPred()
				}
			}
		}
	}
	return c
}

// inOrderKnown says whether ResolveInOrder copies known edge e: SO, WR and
// RT. Known WW edges are in the chains, and known RW edges follow from
// known WR and WW edges and the chains.
func inOrderKnown(e Edge) bool {
	return e.Rel != history.RW && e.Rel != history.WW
}

// ResolveInOrderBytes estimates what ResolveInOrder and an order of its
// graph (Compatible.Order, SnapshotOrder) allocate.
func (g *Graph) ResolveInOrderBytes() int64 {
	edges := int64(g.resolveInOrderEdges())
	// The edges with their provenance, and an order's adjacency (at SI
	// in two parts, the induced arcs walked, not stored).
	perEdge := int64(unsafe.Sizeof(Edge{})+unsafe.Sizeof(Prov{})) + 4
	return edges*perEdge + int64(g.N())*48 + g.snapshotChoicesBytes()
}

// resolveInOrderEdges bounds the edges of ResolveInOrder's graph.
func (g *Graph) resolveInOrderEdges() int {
	edges := 0
	for _, e := range g.Known {
		if inOrderKnown(e) {
			edges++
		}
	}
	for k, ws := range g.Writers {
		edges += len(ws) + 2*len(g.Reads[k])
	}
	return edges
}

// latestBefore is the candidate ranked last before limit, or the first
// ranked when none is before it.
func latestBefore(cands []history.TxnID, rank []int32, limit int32) history.TxnID {
	best, first := history.TxnID(-1), cands[0]
	for _, w := range cands {
		if rank[w] < limit && (best < 0 || rank[w] > rank[best]) {
			best = w
		}
		if rank[w] < rank[first] {
			first = w
		}
	}
	if best < 0 {
		return first
	}
	return best
}

// latestInSnapshot is the candidate ranked last of those that completed
// before reader started, or else when none did.
func latestInSnapshot(h *history.History, cands []history.TxnID, rank []int32, reader, orElse history.TxnID) history.TxnID {
	best, start := history.TxnID(-1), h.Txns[reader].Start
	for _, w := range cands {
		if (w == history.InitTxn || h.Txns[w].End < start) && (best < 0 || rank[w] > rank[best]) {
			best = w
		}
	}
	if best < 0 {
		return orElse
	}
	return best
}

// freshest is, of the candidates that started before reader completed
// (so real time lets it have seen them), the first in the version order
// whose version had not been overwritten when the reader started: its
// successor in chain had not completed by then. Without one, orElse.
func freshest(h *history.History, cands, chain []history.TxnID, at, rank []int32, reader, orElse history.TxnID) history.TxnID {
	rs, re := h.Txns[reader].Start, h.Txns[reader].End
	best := history.TxnID(-1)
	for _, w := range cands {
		if w != history.InitTxn && h.Txns[w].Start >= re {
			continue
		}
		if i := int(at[w]) + 1; i < len(chain) && chain[i] != reader && h.Txns[chain[i]].End < rs {
			continue
		}
		if best < 0 || rank[w] < rank[best] {
			best = w
		}
	}
	if best < 0 {
		return orElse
	}
	return best
}

// knownTopoOrder ranks the included transactions in a topological order of
// the known edges other than RW (Kahn's algorithm, the ready transaction
// first by hint). It is nil when those edges have a cycle.
func (g *Graph) knownTopoOrder(hint []int32) []int32 {
	n := g.N()
	adj := rowsOf(n, g.Known, func(r history.Rel) bool { return r != history.RW })
	indeg := make([]int32, n)
	for _, w := range adj.to {
		indeg[w]++
	}
	q := &hintHeap{hint: hint}
	included := 0
	for v := range n {
		if g.Included[v] {
			included++
			if indeg[v] == 0 {
				q.ts = append(q.ts, history.TxnID(v))
			}
		}
	}
	heap.Init(q)
	rank := make([]int32, n)
	next := int32(0)
	for q.Len() > 0 {
		v := heap.Pop(q).(history.TxnID)
		rank[v] = next
		next++
		for _, w := range adj.out(v) {
			if indeg[w]--; indeg[w] == 0 {
				heap.Push(q, w)
			}
		}
	}
	if int(next) < included {
		return nil
	}
	return rank
}

// hintHeap is a min-heap of transactions by hint.
type hintHeap struct {
	ts   []history.TxnID
	hint []int32
}

func (h *hintHeap) Len() int           { return len(h.ts) }
func (h *hintHeap) Less(i, j int) bool { return h.hint[h.ts[i]] < h.hint[h.ts[j]] }
func (h *hintHeap) Swap(i, j int)      { h.ts[i], h.ts[j] = h.ts[j], h.ts[i] }
func (h *hintHeap) Push(x any)         { h.ts = append(h.ts, x.(history.TxnID)) }
func (h *hintHeap) Pop() any {
	v := h.ts[len(h.ts)-1]
	h.ts = h.ts[:len(h.ts)-1]
	return v
}
