package robust

import (
	"context"
	"maps"
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cdcl"
	"github.com/hyperiso/hyperiso/solver/cnf"
)

// The exact search asks, for a set of instances closed under session
// predecessors, whether some abstract execution of them (MixIso Definition
// 3.5: AR a total order, VIS ⊆ AR, every instance satisfying its level's
// axioms) has a dependency cycle. satGroup encodes that question once per
// instance set for hyperiso's CDCL(T) solver and asks it once per
// allocation, under assumptions:
//
//   - AR: one order variable per pair of nodes a clause mentions, kept
//     acyclic by orderTheory (Pearce–Kelly); a partial order of the pairs
//     extends to a total one. Every instance t also has a snapshot node
//     snap(t), always before t.
//   - VIS: one variable vis(u,t) per ordered pair, vis(u,t) → AR(u,t).
//   - The axioms, each guarded by a feature variable of t that the level
//     being asked sets by assumption: TOTALVis (SER) vis(u,t) ↔ AR(u,t);
//     PREFIX (PC, SI) vis(u,t) ↔ AR(u,snap(t)), which makes the visible
//     set a prefix of AR through the order's own transitivity, with no
//     cubic clauses; NoConflict (PSI, SI) AR(u,t) → vis(u,t) for u writing
//     a key t writes; TRANSVis (CC, PSI) vis(s,t) ∧ vis(u,s) → vis(u,t).
//     SESSION holds by unit clauses.
//   - Reads-from: per instance t and key x it reads, exactly one of the
//     writers of x among the instances or the initial state; the source is
//     visible and every other visible writer of x precedes it in AR (EXT
//     with free values: a read returns its last visible writer).
//   - A cycle: a non-empty set of nodes on(v), each with a selected edge
//     sel(a,b) to another node of the set and one from it. A finite graph
//     in which every node of a non-empty set has a successor in the set
//     has a cycle, and a cycle is such a set, so this is "not
//     serializable" as a plain existential. A selected edge must be a
//     real dependency: session order; WR (b reads a key from a); WW (AR
//     between writers of a common key); RW (a reads x from a source that
//     b, writing x, follows in AR).
//   - What every cycle does, which narrows the search to one description
//     of each (MixIso Theorems 6.6, 6.7) and turns proofs of robustness
//     from refuting cycle after cycle into propagation: only an rw edge
//     goes against AR, to an instance its reader does not see; one such
//     edge (crit) enters the set's AR-least node (the root), which every
//     node of the set follows; at PC or SI, crit's reader sees no node of
//     the set.
//
// The clauses are cubic for TRANSVis and the last of these; the rest is
// quadratic in the instances, times the writers per key for reads-from.
// Clauses that depend on levels are guarded rather than rebuilt, so
// RefineExact's many queries over one component share one solver and what
// it learns.
type satGroup struct {
	w       *Workload
	members []int32
	s       *cdcl.Solver
	th      *orderTheory
	ord     map[[2]int32]int32 // (lo, hi) nodes → order variable
	vis     [][]cnf.Lit        // vis[t][u], local indices
	feat    [][nfeat]cnf.Lit   // per local instance
	rf      [][]rfChoice       // per local instance, per key it reads (with writers)
	sel     []selEdge          // the cycle's candidate edges
	clause  []cnf.Lit
	limit   int64 // conflicts per question
}

const (
	featTotal = iota
	featPrefix
	featNoConflict
	featTrans
	nfeat
)

// selEdge is a candidate edge a → b of the cycle and its variable.
type selEdge struct {
	a, b int
	lit  cnf.Lit
}

// rfChoice is one read's candidate sources: writers (local indices, -1
// the initial state) with their literals.
type rfChoice struct {
	key  KeyID
	from []int
	lit  []cnf.Lit
}

func newSATGroup(w *Workload, members []int32, conflictLimit int64) *satGroup {
	m := len(members)
	th := newOrderTheory(2 * m)
	g := &satGroup{w: w, members: members, th: th, ord: map[[2]int32]int32{}, limit: conflictLimit,
		s: cdcl.New(0, cdcl.Options{Theory: th, ConflictLimit: conflictLimit})}
	g.encode()
	return g
}

func (g *satGroup) newVar() cnf.Lit { return cnf.Lit(g.s.NewVar()) }

// before is the literal "node a precedes node b in AR".
func (g *satGroup) before(a, b int32) cnf.Lit {
	lo, hi, sign := a, b, cnf.Lit(1)
	if a > b {
		lo, hi, sign = b, a, -1
	}
	v, ok := g.ord[[2]int32{lo, hi}]
	if !ok {
		v = g.s.NewVar()
		g.ord[[2]int32{lo, hi}] = v
		g.th.register(v, lo, hi)
	}
	return sign * cnf.Lit(v)
}

func (g *satGroup) add(lits ...cnf.Lit) {
	g.clause = append(g.clause[:0], lits...)
	g.s.AddClause(g.clause)
}

func (g *satGroup) encode() {
	w, ms := g.w, g.members
	m := len(ms)
	inst := func(i int) *Instance { return &w.Instances[ms[i]] }
	snap := func(i int) int32 { return int32(m + i) }
	g.vis = make([][]cnf.Lit, m)
	g.feat = make([][nfeat]cnf.Lit, m)
	for t := range m {
		for f := range nfeat {
			g.feat[t][f] = g.newVar()
		}
		g.vis[t] = make([]cnf.Lit, m)
		for u := range m {
			if u != t {
				g.vis[t][u] = g.newVar()
			}
		}
	}
	for t := range m {
		g.add(g.before(snap(t), int32(t)))
		f := g.feat[t]
		for u := range m {
			if u == t {
				continue
			}
			v := g.vis[t][u]
			ar := g.before(int32(u), int32(t))
			g.add(-v, ar)
			g.add(-f[featTotal], -ar, v)
			sp := g.before(int32(u), snap(t))
			g.add(-f[featPrefix], -v, sp)
			g.add(-f[featPrefix], v, -sp)
			if intersects(inst(u).Writes, inst(t).Writes) {
				g.add(-f[featNoConflict], -ar, v)
			}
			if w.soBefore(ms[u], ms[t]) {
				g.add(v)
			}
			for s := range m {
				if s != t && s != u {
					g.add(-f[featTrans], -g.vis[t][s], -g.vis[s][u], v)
				}
			}
		}
	}
	// Reads-from.
	g.rf = make([][]rfChoice, m)
	writers := func(k KeyID, not int) []int {
		var out []int
		for u := range m {
			if u != not && containsKey(inst(u).Writes, k) {
				out = append(out, u)
			}
		}
		return out
	}
	for t := range m {
		for _, k := range inst(t).Reads {
			ws := writers(k, t)
			if len(ws) == 0 {
				continue // reads the initial state, and nothing here overwrites it
			}
			c := rfChoice{key: k, from: append(ws, -1)}
			for range c.from {
				c.lit = append(c.lit, g.newVar())
			}
			g.add(c.lit...)
			for i, src := range c.from {
				r := c.lit[i]
				if src < 0 {
					for _, u := range ws {
						g.add(-r, -g.vis[t][u])
					}
					continue
				}
				g.add(-r, g.vis[t][src])
				for _, u := range ws {
					if u != src {
						g.add(-r, -g.vis[t][u], g.before(int32(u), int32(src)))
					}
				}
			}
			g.rf[t] = append(g.rf[t], c)
		}
	}
	g.encodeCycle()
}

// encodeCycle adds the on/sel variables that ask for a dependency cycle.
func (g *satGroup) encodeCycle() {
	w, ms := g.w, g.members
	m := len(ms)
	inst := func(i int) *Instance { return &w.Instances[ms[i]] }
	on := make([]cnf.Lit, m)
	for i := range on {
		on[i] = g.newVar()
	}
	g.add(on...)
	root := make([]cnf.Lit, m)
	for i := range root {
		root[i] = g.newVar()
	}
	var crit []cnf.Lit
	// rwAfter[a][b]: a reads some key x that b writes, from a source b
	// follows in AR.
	// Each node of the set has a selected edge out to the set and one in
	// from it.
	out, in := make([][]cnf.Lit, m), make([][]cnf.Lit, m)
	for a := range m {
		out[a] = []cnf.Lit{-on[a]}
		in[a] = []cnf.Lit{-on[a]}
	}
	for a := range m {
		for b := range m {
			if a == b {
				continue
			}
			var reasons, rws []cnf.Lit
			always := w.soBefore(ms[a], ms[b])
			if !always {
				for _, c := range g.rf[b] {
					if i := slices.Index(c.from, a); i >= 0 {
						reasons = append(reasons, c.lit[i]) // WR
					}
				}
				if intersects(inst(a).Writes, inst(b).Writes) {
					reasons = append(reasons, g.before(int32(a), int32(b))) // WW
				}
				for _, c := range g.rf[a] {
					if !containsKey(inst(b).Writes, c.key) {
						continue
					}
					after := g.newVar() // RW on c.key
					// Redundant, for propagation: a writer a sees
					// precedes a's source, so it overwrites nothing a read.
					g.add(-after, -g.vis[a][b])
					rws = append(rws, after)
					for i, src := range c.from {
						switch {
						case src == b:
							g.add(-after, -c.lit[i])
						case src >= 0:
							g.add(-after, -c.lit[i], g.before(int32(src), int32(b)))
						}
					}
					reasons = append(reasons, after)
				}
				if len(reasons) == 0 {
					continue
				}
			}
			sel := g.newVar()
			out[a] = append(out[a], sel)
			g.sel = append(g.sel, selEdge{a, b, sel})
			g.add(-sel, on[b])
			g.add(-sel, on[a])
			in[b] = append(in[b], sel)
			if !always {
				g.add(append([]cnf.Lit{-sel}, reasons...)...)
			}
			// Only an rw edge can go against AR, to an instance a does not
			// see; at SER, or between writers of a common key at PSI or
			// SI, an earlier instance is seen (redundant, for propagation).
			fwd := g.before(int32(a), int32(b))
			g.add(append([]cnf.Lit{-sel, fwd}, rws...)...)
			g.add(-sel, fwd, -g.vis[a][b])
			g.add(-sel, -g.feat[a][featTotal], fwd)
			if intersects(inst(a).Writes, inst(b).Writes) {
				g.add(-sel, -g.feat[a][featNoConflict], fwd)
			}
			if len(rws) > 0 {
				// crit: the cycle's backward edge into its AR-least node.
				c := g.newVar()
				crit = append(crit, c)
				g.add(-c, sel)
				g.add(-c, -fwd)
				g.add(-c, root[b])
				// At PC or SI, a misses b and so everything after b,
				// which is the whole cycle: the edge into a is no WR.
				for v := range m {
					if v != a {
						g.add(-c, -g.feat[a][featPrefix], -g.vis[a][v], -on[v])
					}
				}
			}
		}
	}
	for a := range m {
		g.add(out[a]...)
		g.add(in[a]...)
	}
	// Every cycle has an edge against AR (the others follow it); the one
	// into the cycle's AR-least node makes that node the root, which
	// every node of the cycle follows. Both only narrow the search to
	// one description of each cycle.
	g.add(crit...)
	for b := range m {
		for v := range m {
			if v != b {
				g.add(-root[b], -on[v], g.before(int32(b), int32(v)))
			}
		}
	}
}

// assumptions sets every member's features from its level (Table 2).
func (g *satGroup) assumptions(levels []history.Level) []cnf.Lit {
	var as []cnf.Lit
	for t, id := range g.members {
		ax := axiomsFor(levels[id])
		on := [nfeat]bool{featTotal: ax.totalVis, featPrefix: ax.prefix, featNoConflict: ax.noConflict, featTrans: ax.transVis}
		for f := range nfeat {
			l := g.feat[t][f]
			if !on[f] {
				l = -l
			}
			as = append(as, l)
		}
	}
	return as
}

// solve looks for a non-serializable execution of the members at levels:
// the execution, or nil and whether the search was complete.
func (g *satGroup) solve(levels []history.Level, lim Limits) (*Execution, bool) {
	return g.solveShrink(levels, lim, true)
}

// robust answers whether the members have no non-serializable execution,
// and whether that answer is complete, without reading a counterexample.
func (g *satGroup) robust(levels []history.Level, lim Limits) (bool, bool) {
	ex, decided := g.solveShrink(levels, lim, false)
	return ex == nil && decided, decided
}

func (g *satGroup) solveShrink(levels []history.Level, lim Limits, shrink bool) (*Execution, bool) {
	ctx := context.Background()
	if !lim.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, lim.Deadline)
		defer cancel()
	}
	switch g.s.SolveAssuming(ctx, g.assumptions(levels)) {
	case cdcl.Unsat:
		return nil, true
	case cdcl.Sat:
		if !shrink {
			return &Execution{}, true
		}
		ex := g.execution()
		// The model's cycle with its session predecessors is a smaller
		// counterexample when it leaves members out (restriction):
		// asked again, it reads as the cycle alone.
		if c := g.cycle(); len(c) < len(g.members) {
			if small, _ := newSATGroup(g.w, c, g.limit).solve(levels, lim); small != nil {
				return small, true
			}
		}
		return ex, true
	}
	return nil, false
}

// cycle returns the instances of a cycle of the model's selected edges,
// with their session predecessors, sorted.
func (g *satGroup) cycle() []int32 {
	val := func(l cnf.Lit) bool { return g.s.Value(l.Var()) == l.IsPos() }
	next := map[int]int{}
	a := -1 // the first selected edge's source, for the same answer every run
	for _, e := range g.sel {
		if _, ok := next[e.a]; !ok && val(e.lit) {
			next[e.a] = e.b
			if a < 0 {
				a = e.a
			}
		}
	}
	seen := map[int]bool{}
	for a >= 0 && !seen[a] {
		seen[a] = true
		b, ok := next[a]
		if !ok {
			return g.members // not a model of the cycle clauses: keep all
		}
		a = b
	}
	set := map[int32]bool{}
	for start := a; ; {
		for q := g.members[a]; q >= 0 && !set[q]; q = g.w.prev(q) {
			set[q] = true
		}
		if a = next[a]; a == start {
			break
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// execution reads the model: AR is the theory's topological order of the
// instance nodes, VIS and reads-from the model's variables.
func (g *satGroup) execution() *Execution {
	m := len(g.members)
	pos := make([]int, m)
	ex := &Execution{}
	for _, v := range g.th.order() {
		if int(v) < m {
			pos[v] = len(ex.Members)
			ex.Members = append(ex.Members, g.members[v])
		}
	}
	val := func(l cnf.Lit) bool { return g.s.Value(l.Var()) == l.IsPos() }
	ex.Vis = make([][]bool, m)
	ex.ReadFrom = make([]map[KeyID]int, m)
	for t := range m {
		i := pos[t]
		ex.Vis[i] = make([]bool, i)
		for u := range m {
			if u != t && pos[u] < i {
				ex.Vis[i][pos[u]] = val(g.vis[t][u])
			}
		}
		rf := map[KeyID]int{}
		for _, k := range g.w.Instances[g.members[t]].Reads {
			rf[k] = -1
		}
		for _, c := range g.rf[t] {
			for j, src := range c.from {
				if src >= 0 && val(c.lit[j]) {
					rf[c.key] = pos[src]
				}
			}
		}
		ex.ReadFrom[i] = rf
	}
	return ex
}
