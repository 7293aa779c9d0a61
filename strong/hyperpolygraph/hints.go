package hyperpolygraph

import (
	"container/heap"
	"math"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// ApplyVersionHints makes the version orders hints state known (those that
// hold at the level checked: History.HintsAt). Each order between writers
// that History.HintEdges draws from them becomes a known edge A →ww(x) B.
//
// Each new edge replaces its pair in g.WW, so every pair of writers of a key
// is still either known or in g.WW exactly once, and the RW edges it derives
// from the known WR edges of its key join g.Known. On a graph whose pairs
// are pending (BuildOptions.LazyPairs) there is no pair to replace: the edge
// is only added, and pruning, which lists the pairs, drops those the known
// edges order. Call it right after
// Build, before pruning (constraint indices change).
//
// conflict is nil unless the known WW edges now contain a cycle: hints that
// contradict each other (Elle's incompatible orders, or the writes of two
// transactions interleaved in one list). The cycle is in g.Known too, so
// pruning reports it as well; it is returned, in path order, so that the
// caller can name it.
func (g *Graph) ApplyVersionHints(hints []history.VersionHint) (conflict []Edge) {
	h := g.H
	if len(hints) == 0 {
		return nil
	}
	type trip struct {
		k    history.KeyID
		a, b history.TxnID
	}
	touched := map[history.KeyID]bool{}
	var add []Edge
	for _, e := range h.HintEdges(hints, func(t history.TxnID) bool { return g.Included[t] }) {
		touched[e.Key] = true
		add = append(add, Edge{From: e.From, To: e.To, Rel: history.WW, Key: e.Key})
	}
	if len(add) == 0 {
		return nil
	}
	known := map[trip]bool{}
	var knownWW, knownWR []Edge
	for _, e := range g.Known {
		if e.Key < 0 || !touched[e.Key] {
			continue
		}
		switch e.Rel {
		case history.WW:
			known[trip{e.Key, e.From, e.To}] = true
			knownWW = append(knownWW, e)
		case history.WR:
			knownWR = append(knownWR, e)
		}
	}
	pairAt := map[trip]int{}
	for i, p := range g.WW {
		if touched[p.Key] {
			pairAt[trip{p.Key, p.A, p.B}] = i
		}
	}
	drop := make([]bool, len(g.WW))
	fresh := add[:0]
	for _, e := range add {
		if known[trip{e.Key, e.From, e.To}] {
			continue
		}
		if i, ok := pairAt[trip{e.Key, min(e.From, e.To), max(e.From, e.To)}]; ok {
			drop[i] = true
		}
		fresh = append(fresh, e)
	}
	if len(fresh) == 0 {
		return nil
	}
	ww := g.WW[:0]
	for i, p := range g.WW {
		if !drop[i] {
			ww = append(ww, p)
		}
	}
	g.WW = ww
	rw := g.DeriveRW(append(slices.Clone(fresh), knownWR...))
	g.Known = append(g.Known, fresh...)
	g.Known = append(g.Known, rw...)
	// A cycle can only run through the new edges; T⊥'s edges only leave it.
	all := append(knownWW, fresh...)
	cyc := findCycle(g.N(), all, make([]bool, len(all)), false)
	for _, i := range cyc {
		conflict = append(conflict, all[i])
	}
	return conflict
}

// AddRealTime adds to g.Known, and returns, the real-time order among the
// included transactions that have a real-time interval (History.Txns[t].Timed;
// T⊥ precedes everything already): A →rt B iff A.End < B.Start. A
// transaction of unknown outcome carries End = math.MaxInt64 from its reader,
// so it precedes nothing.
//
// The edges are the transitive reduction of that order: for each B, the
// latest-ending predecessor in each chain of a partition of the
// transactions into chains of disjoint intervals, less those that precede
// another such candidate. The partition has as many chains as transactions
// ever overlap (at most the number of concurrent processes), so time and
// edges are O(n·p) after an O(n log n) sort.
func (g *Graph) AddRealTime() []Edge {
	h := g.H
	type iv struct {
		t    history.TxnID
		s, e int64
	}
	var ts []iv
	for t := 1; t < len(h.Txns); t++ {
		if tx := &h.Txns[t]; g.Included[t] && tx.Timed {
			ts = append(ts, iv{history.TxnID(t), tx.Start, tx.End})
		}
	}
	if len(ts) < 2 {
		return nil
	}
	slices.SortFunc(ts, func(x, y iv) int {
		switch {
		case x.s != y.s:
			if x.s < y.s {
				return -1
			}
			return 1
		}
		return int(x.t - y.t)
	})
	// Chains of pairwise ordered intervals, greedily by start: each interval
	// joins the chain that ended earliest if that one ended before it starts.
	var chains [][]int32
	ends := &endHeap{}
	for i, x := range ts {
		if x.e == math.MaxInt64 {
			continue // precedes nothing: never a candidate
		}
		if ends.Len() > 0 && (*ends)[0].end < x.s {
			c := (*ends)[0].chain
			chains[c] = append(chains[c], int32(i))
			(*ends)[0].end = x.e
			heap.Fix(ends, 0)
			continue
		}
		heap.Push(ends, chainEnd{end: x.e, chain: len(chains)})
		chains = append(chains, []int32{int32(i)})
	}
	ptr := make([]int, len(chains))
	cand := make([]int32, 0, len(chains))
	var out []Edge
	for _, x := range ts {
		cand = cand[:0]
		maxStart := int64(math.MinInt64)
		for c, ch := range chains {
			for ptr[c] < len(ch) && ts[ch[ptr[c]]].e < x.s {
				ptr[c]++
			}
			if ptr[c] > 0 {
				a := ch[ptr[c]-1]
				cand = append(cand, a)
				maxStart = max(maxStart, ts[a].s)
			}
		}
		for _, a := range cand {
			// a is redundant when it precedes another candidate.
			if ts[a].e >= maxStart {
				out = append(out, Edge{From: ts[a].t, To: x.t, Rel: history.RT, Key: -1})
			}
		}
	}
	g.Known = append(g.Known, out...)
	return out
}

type chainEnd struct {
	end   int64
	chain int
}

// endHeap is a min-heap of chain ends.
type endHeap []chainEnd

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].end < h[j].end }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(chainEnd)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
