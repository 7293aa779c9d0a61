package weak

import "github.com/hyperiso/hyperiso/history"

// What a cycle found in a model depends on: the choices behind its edges,
// so that a clause can forbid them (and no acyclic choice with them).

// moreCycles looks for further cycles of the current co′ once the
// inferred and wr edges of those found are taken out, up to rounds times:
// each is a cycle of the model too, and yields its own blocking clause, so
// that one model teaches more.
func (ch *chooser) moreCycles(found []Violation, rounds int) ([]Violation, error) {
	c := ch.c
	if c.causalCycle {
		return nil, nil
	}
	g0 := c.buildGraph(true)
	var out []Violation
	// dead[e]: edge e of g0 is a wr or inferred edge of a cycle found.
	dead := make([]bool, len(g0.to))
	for range rounds {
		for _, v := range found {
			for _, e := range v.Cycle {
				if e.Rel != history.WR && e.Rel != history.CO {
					continue
				}
				for k := g0.start[e.From]; k < g0.start[e.From+1]; k++ {
					if g0.to[k] == e.To && g0.ref[k] != refSO && g0.ref[k] > refWW {
						dead[k] = true
					}
				}
			}
		}
		g := g0.withoutEdges(dead)
		tmp := &Result{Counters: map[string]int64{}}
		if err := c.cyclesOf(g, tmp, -1); err != nil {
			return out, err
		}
		if len(tmp.Violations) == 0 {
			break
		}
		out = append(out, tmp.Violations...)
		found = tmp.Violations
	}
	return out, nil
}

// withoutEdges returns the graph minus the edges marked dead.
func (g *graph) withoutEdges(dead []bool) *graph {
	n := len(g.start) - 1
	out := &graph{start: make([]int32, n+1), to: make([]history.TxnID, 0, len(g.to)), ref: make([]int32, 0, len(g.ref))}
	for u := range n {
		for e := g.start[u]; e < g.start[u+1]; e++ {
			if !dead[e] {
				out.to = append(out.to, g.to[e])
				out.ref = append(out.ref, g.ref[e])
			}
		}
		out.start[u+1] = int32(len(out.to))
	}
	return out
}

// depsOf returns the ambiguous reads whose current choices the cycle's
// edges depend on: the reads behind its wr edges, and for each inferred
// edge the reads of its premise. ok is false if a premise could not be
// traced (the caller then blocks every choice).
func (ch *chooser) depsOf(cyc []Edge) ([]int32, bool) {
	ch.round++
	ch.deps = ch.deps[:0]
	ch.optDeps = ch.optDeps[:0]
	for _, e := range cyc {
		ch.optDep(e.From)
		if e.Rel == history.CO {
			ch.optDep(e.Reader)
		}
		var ok bool
		switch e.Rel {
		case history.WR:
			ok = ch.wrDep(e.From, e.To)
		case history.CO:
			ok = ch.coDeps(e)
		default:
			ok = true
		}
		if !ok {
			return ch.deps, false
		}
	}
	return ch.deps, true
}

func (ch *chooser) addDep(i int32) {
	if i >= 0 && ch.mark[i] != ch.round {
		ch.mark[i] = ch.round
		ch.deps = append(ch.deps, i)
	}
}

// wrDep adds a read behind the wr edge w → t, none if a read with a
// unique writer makes it; false if there is no such edge.
func (ch *chooser) wrDep(w, t history.TxnID) bool {
	c := ch.c
	found := int32(-2)
	for k, e := range c.events(t) {
		if e.writer != w {
			continue
		}
		a := ch.ambOf[c.evLo[t]+int32(k)]
		if a < 0 {
			return true
		}
		if found == -2 {
			found = a
		}
	}
	if found == -2 {
		return false
	}
	ch.addDep(found)
	return true
}

// coDeps adds the reads behind the premise of an inferred edge.
func (ch *chooser) coDeps(e Edge) bool {
	c := ch.c
	t3, x, t1, t2 := e.Reader, e.Key, e.To, e.From
	evs := c.events(t3)
	base := c.evLo[t3]
	amb := func(k int) int32 { return ch.ambOf[base+int32(k)] }
	cost := func(k int) int {
		if amb(k) >= 0 {
			return 1
		}
		return 0
	}
	// j: a read of x from t1 (at a later program point than i for RC),
	// with the fewest choices.
	bestI, bestJ, best := -1, -1, 3
	for j, f := range evs {
		if f.key != x || f.writer != t1 {
			continue
		}
		switch e.Rule {
		case RuleRC, RuleReadFrom:
			for i, g := range evs {
				if g.writer != t2 || (e.Rule == RuleRC && c.point(t3, g.op) >= c.point(t3, f.op)) {
					continue
				}
				if cst := cost(i) + cost(j); cst < best {
					bestI, bestJ, best = i, j, cst
				}
			}
		default:
			if cst := cost(j); cst < best {
				bestJ, best = j, cst
			}
		}
	}
	if bestJ < 0 {
		return false
	}
	ch.addDep(amb(bestJ))
	switch e.Rule {
	case RuleRC, RuleReadFrom:
		ch.addDep(amb(bestI))
	case RuleCausal:
		return ch.reach(t2, t3)
	}
	return true
}

// reach adds the reads behind a path from src to dst in so ∪ wr with the
// fewest of them (0-1 BFS backwards from dst); false if there is none.
func (ch *chooser) reach(src, dst history.TxnID) bool {
	c := ch.c
	ch.bround++
	r := ch.bround
	q := &ch.bfs
	q.front, q.back = q.front[:0], q.back[:0]
	ch.stamp[dst], ch.dist[dst], ch.parent[dst], ch.pamb[dst] = r, 0, -1, -1
	q.front = append(q.front, dst)
	relax := func(u, v history.TxnID, a int32) {
		d := ch.dist[v]
		if a >= 0 {
			d++
		}
		if ch.stamp[u] == r && ch.dist[u] <= d {
			return
		}
		ch.stamp[u], ch.dist[u], ch.parent[u], ch.pamb[u] = r, d, v, a
		if a >= 0 {
			q.back = append(q.back, u)
		} else {
			q.front = append(q.front, u)
		}
	}
	// Each node may be expanded more than once (a cheaper arrival after
	// a costlier one); dist keeps the result right.
	for len(q.front) > 0 || len(q.back) > 0 {
		var v history.TxnID
		if n := len(q.front); n > 0 {
			v, q.front = q.front[n-1], q.front[:n-1]
		} else {
			v, q.back = q.back[0], q.back[1:]
		}
		if v == src {
			break
		}
		if v == history.InitTxn {
			continue
		}
		relax(ch.prevIn[v], v, -1)
		for k, e := range c.events(v) {
			if e.writer >= 0 {
				relax(e.writer, v, ch.ambOf[c.evLo[v]+int32(k)])
			}
		}
	}
	if ch.stamp[src] != r {
		return false
	}
	for u := src; u != dst; u = ch.parent[u] {
		ch.addDep(ch.pamb[u])
		ch.optDep(u)
	}
	return true
}
