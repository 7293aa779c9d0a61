package acyclic

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// The order the theory starts from: the known edges, thinned to what no
// other path implies, in a topological order that follows the solver's
// hint (the history's order) where it can.

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
			if e.Rel != history.RW {
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
		u1, v1, u2, v2, two := hyperpolygraph.StateArcs(e.From, e.To, e.Rel == history.RW, t.layers)
		arc(u1, v1, int32(i))
		if two {
			arc(u2, v2, int32(i))
		}
	}
}

// hintOrder ranks the n graph states by where their transactions stand in
// the order the history itself suggests (Graph.HistoryOrder), or, for a
// file listed one session after another, which suggests none, as if its
// sessions had run side by side at even speed (History.EvenProgress:
// ranked session by session instead, nearly every version order the solver
// decided first was backwards; 1,000 sessions of 50 transactions at SI took
// 4.2 million decisions for 539 conflicts, 1.0 million for 295 so). It is
// only a hint, but decisions polarised by a pk order that follows it start
// out right instead of following an arbitrary topological order of the
// known graph. Of a transaction's two states, 2x+1 (the one Level reads)
// ranks first, as encode's ranks have it for SI.
func (t *Theory) hintOrder(n int) []int32 {
	t.hint = t.g.HistoryOrder()
	if t.hint == nil {
		t.hint = t.g.H.EvenProgress()
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

// knownRW returns the RW edges that known WW and WR edges derive: a reader
// of a version precedes every writer known to follow it. SER's and SI's
// pruning puts them in the known graph; PC's (PruneMixed) does not.
func (t *Theory) knownRW() []hyperpolygraph.Edge {
	var out []hyperpolygraph.Edge
	for _, e := range t.g.Known { // not the map: the same order every run
		if e.Rel != history.WR {
			continue
		}
		i := t.lookup(e.Key, e.From)
		if i < 0 {
			continue
		}
		for _, succ := range t.infos[i].knownSucc {
			if succ != e.To {
				out = append(out, hyperpolygraph.Edge{From: e.To, To: succ, Rel: history.RW, Key: e.Key})
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
	// Per transaction: its writerInfo on the key being thinned; stamps:
	// inS marks the successors of the writer being thinned, seen those
	// already kept or dropped.
	n := t.g.N()
	info := make([]*writerInfo, n)
	inS, seen := make([]int32, n), make([]int32, n)
	stamp := int32(0)
	var ws []history.TxnID // the key's writers with known successors
	for k := range len(t.keyAt) - 1 {
		ws = ws[:0]
		for _, sl := range t.byKey[t.keyAt[k]:t.keyAt[k+1]] {
			if len(t.infos[sl.info].knownSucc) > 0 {
				ws = append(ws, sl.w)
				info[sl.w] = &t.infos[sl.info]
			}
		}
		if len(ws) == 0 {
			continue
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
