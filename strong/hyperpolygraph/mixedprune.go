package hyperpolygraph

import "github.com/hyperiso/hyperiso/history"

// The pruning valid at every level of a mix: version orders and reads that
// the known graph alone decides.

// PruneMixed resolves, for any mix of levels, the version-order pairs and
// read-from choices that the known edges already decide. Session order,
// read-from and version order lie inside the arbitration order at every
// level (SESSION and EXT put so and wr inside VIS ⊆ AR, and an RC
// transaction's commit follows its session and its writers too), and the
// version order of a key is AR on its writers: so a writer that reaches
// another through known so, wr and ww edges comes first, and a read cannot
// have been written by a transaction its reader reaches. Unlike prune, it
// never uses rw edges, which some levels let go backwards in AR. It
// repeats until nothing changes and returns how many pairs and reads it
// resolved; a cyclic known graph is left to the search.
func PruneMixed(g *Graph) (pairs, reads int) {
	h := g.H
	for {
		reach, ok := g.knownReach()
		if !ok {
			return pairs, reads
		}
		before := func(a, b history.TxnID) bool { // a reaches b
			if a == history.InitTxn {
				return true
			}
			if b == history.InitTxn {
				return false
			}
			return reach[b][h.Txns[a].Session] >= h.Txns[a].Index
		}
		changed := false
		keep := g.WW[:0]
		for _, p := range g.WW {
			switch {
			case before(p.B, p.A):
				g.Known = append(g.Known, Edge{From: p.B, To: p.A, Rel: history.WW, Key: p.Key})
			case before(p.A, p.B):
				g.Known = append(g.Known, Edge{From: p.A, To: p.B, Rel: history.WW, Key: p.Key})
			default:
				keep = append(keep, p)
				continue
			}
			pairs++
			changed = true
		}
		g.WW = keep
		// Read-from sets: drop the candidates the reader reaches; one left
		// becomes a known read.
		newIdx := make([]int32, len(g.WR))
		sets := g.WR[:0]
		for i, s := range g.WR {
			cands := s.Cands[:0]
			for _, w := range s.Cands {
				if !before(s.Reader, w) {
					cands = append(cands, w)
				}
			}
			if len(cands) == 1 {
				g.Known = append(g.Known, Edge{From: cands[0], To: s.Reader, Rel: history.WR, Key: s.Key})
				newIdx[i] = -1 - int32(cands[0]) // resolved to this writer
				reads++
				changed = true
				continue
			}
			if len(cands) == 0 {
				cands = s.Cands[:len(s.Cands):len(s.Cands)] // no writer fits: the search says so
			}
			s.Cands = cands
			newIdx[i] = int32(len(sets))
			sets = append(sets, s)
		}
		g.WR = sets
		for k := range g.Reads {
			for j := range g.Reads[k] {
				r := &g.Reads[k][j]
				if r.Set < 0 {
					continue
				}
				if ni := newIdx[r.Set]; ni >= 0 {
					r.Set = ni
				} else {
					r.Set, r.Writer = -1, history.TxnID(-1-ni)
				}
			}
		}
		if !changed {
			return pairs, reads
		}
	}
}

// knownReach returns, for each included transaction t, reach[t][s]: the
// highest session index in session s of a transaction that reaches t
// through known so, wr and ww edges (-1 if none; T⊥ left out). ok is false
// if those edges have a cycle.
func (g *Graph) knownReach() (reach [][]int32, ok bool) {
	h := g.H
	n, ns := g.N(), len(h.Sessions)
	succ := make([][]history.TxnID, n)
	indeg := make([]int32, n)
	for _, e := range g.Known {
		if (e.Rel == history.SO || e.Rel == history.WR || e.Rel == history.WW) && e.From != history.InitTxn {
			succ[e.From] = append(succ[e.From], e.To)
			indeg[e.To]++
		}
	}
	reach = make([][]int32, n)
	flat := make([]int32, n*ns)
	for i := range flat {
		flat[i] = -1
	}
	var queue []history.TxnID
	total := 0
	for t := 1; t < n; t++ {
		if g.Included[t] {
			reach[t] = flat[t*ns : (t+1)*ns]
			total++
			if indeg[t] == 0 {
				queue = append(queue, history.TxnID(t))
			}
		}
	}
	for k := 0; k < len(queue); k++ {
		t := queue[k]
		own := reach[t]
		for _, u := range succ[t] {
			ru := reach[u]
			for s, v := range own {
				ru[s] = max(ru[s], v)
			}
			ru[h.Txns[t].Session] = max(ru[h.Txns[t].Session], h.Txns[t].Index)
			if indeg[u]--; indeg[u] == 0 {
				queue = append(queue, u)
			}
		}
	}
	return reach, len(queue) == total
}
