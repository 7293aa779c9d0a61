package prune_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/histtest"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Compact hand-made histories (see package histtest).
type (
	op = histtest.Op
	tx = histtest.Txn
)

var (
	r    = histtest.R
	w    = histtest.W
	T    = histtest.T
	hist = histtest.Build
)

// genHistory makes a small random history with few values (so many
// duplicates), several sessions, some aborted and unknown transactions, and
// reads that mostly come from a serial, snapshot or arbitrary execution.
func genHistory(rng *rand.Rand) *history.History { return genSized(rng, 6, 3) }

// genMixed returns the i-th history of a test that mixes three shapes:
// tiny, the oracle's generator's, and many writers a key with few
// duplicates.
func genMixed(rng *rand.Rand, i int, opt oracle.GenOptions) *history.History {
	switch i % 3 {
	case 0:
		return genHistory(rng)
	case 1:
		return oracle.Generate(rng, opt)
	}
	return genSized(rng, 14, 40)
}

// genSized is genHistory with up to 1+maxTxn transactions and maxVals
// values a key.
func genSized(rng *rand.Rand, maxTxn, maxVals int) *history.History {
	b := history.NewBuilder("gen", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	nSess := 2 + rng.IntN(3)
	nTxn := 2 + rng.IntN(maxTxn)
	nKeys := 1 + rng.IntN(3)
	nVals := 1 + rng.IntN(maxVals)
	mode := rng.IntN(3) // 0 serial, 1 snapshot, 2 per-read
	// states[k] is the store after k commits.
	states := [][]int64{make([]int64, nKeys)}
	for i := range nTxn {
		st := history.Committed
		switch f := rng.Float64(); {
		case f < 0.1:
			st = history.Aborted
		case f < 0.17:
			st = history.Unknown
		}
		id := b.Begin(b.Session(int64(rng.IntN(nSess))), int64(i+1), st, history.Pos{})
		snap := states[len(states)-1]
		if mode == 1 {
			snap = states[rng.IntN(len(states))]
		}
		local := map[int64]int64{}
		var writes map[int64]int64
		for range 1 + rng.IntN(4) {
			x := int64(rng.IntN(nKeys))
			if rng.IntN(2) == 0 {
				v, ok := local[x]
				if !ok {
					src := snap
					if mode == 2 {
						src = states[rng.IntN(len(states))]
					}
					v = src[x]
					if rng.Float64() < 0.1 {
						v = int64(rng.IntN(nVals + 1))
					}
				}
				local[x] = v
				b.Read(id, x, v)
				continue
			}
			v := int64(1 + rng.IntN(nVals))
			if rng.Float64() < 0.1 {
				v = 0
			}
			local[x] = v
			if writes == nil {
				writes = map[int64]int64{}
			}
			writes[x] = v
			b.Write(id, x, v)
		}
		if st == history.Committed || (st == history.Unknown && rng.IntN(2) == 0) {
			next := slices.Clone(states[len(states)-1])
			for x, v := range writes {
				next[x] = v
			}
			states = append(states, next)
		}
	}
	return b.Finish()
}

// ---- brute force ----

// space returns the number of assignments of g's uncertain constraints,
// capped just above limit.
func space(g *hyperpolygraph.Graph, limit int) int {
	n := 1
	for range g.WW {
		n *= 2
		if n > limit {
			return limit + 1
		}
	}
	for _, s := range g.WR {
		n *= len(s.Cands)
		if n > limit {
			return limit + 1
		}
	}
	return n
}

// enumerate calls f for every assignment: fwd[i] orders g.WW[i] A→B,
// choice[i] indexes g.WR[i].Cands.
func enumerate(g *hyperpolygraph.Graph, f func(fwd []bool, choice []int)) {
	fwd := make([]bool, len(g.WW))
	choice := make([]int, len(g.WR))
	var rec func(i int)
	rec = func(i int) {
		switch {
		case i < len(fwd):
			fwd[i] = false
			rec(i + 1)
			fwd[i] = true
			rec(i + 1)
		case i-len(fwd) < len(choice):
			j := i - len(fwd)
			for c := range g.WR[j].Cands {
				choice[j] = c
				rec(i + 1)
			}
		default:
			f(fwd, choice)
		}
	}
	rec(0)
}

// compatEdges returns the edges of the compatible graph of an assignment:
// every known edge, the chosen WW and WR edges, and every RW edge they
// derive.
func compatEdges(g *hyperpolygraph.Graph, fwd []bool, choice []int) []hyperpolygraph.Edge {
	es := slices.Clone(g.Known)
	for i, p := range g.WW {
		if fwd[i] {
			es = append(es, hyperpolygraph.Edge{From: p.A, To: p.B, Rel: history.WW, Key: p.Key})
		} else {
			es = append(es, hyperpolygraph.Edge{From: p.B, To: p.A, Rel: history.WW, Key: p.Key})
		}
	}
	for i, s := range g.WR {
		es = append(es, hyperpolygraph.Edge{From: s.Cands[choice[i]], To: s.Reader, Rel: history.WR, Key: s.Key})
	}
	return withRW(es)
}

// withRW adds the RW edges derived from the WR and WW edges of es.
func withRW(es []hyperpolygraph.Edge) []hyperpolygraph.Edge {
	n := len(es)
	for _, a := range es[:n] {
		if a.Rel != history.WR {
			continue
		}
		for _, b := range es[:n] {
			if b.Rel == history.WW && b.Key == a.Key && b.From == a.From && b.To != a.To {
				es = append(es, hyperpolygraph.Edge{From: a.To, To: b.To, Rel: history.RW, Key: a.Key})
			}
		}
	}
	return es
}

// acyclic decides acyclicity of the graph for SER, or of the doubled graph
// (and so of the induced SI graph) for SI, by depth-first search.
func acyclic(n int, es []hyperpolygraph.Edge, si bool) bool {
	adj := doubled(n, es, si)
	color := make([]uint8, len(adj))
	var dfs func(u int) bool
	dfs = func(u int) bool {
		color[u] = 1
		for _, v := range adj[u] {
			if color[v] == 1 || (color[v] == 0 && !dfs(v)) {
				return false
			}
		}
		color[u] = 2
		return true
	}
	for u := range adj {
		if color[u] == 0 && !dfs(u) {
			return false
		}
	}
	return true
}

// doubled returns the adjacency of the state graph: node t for SER; for SI
// 2t+1 (entered by a non-RW edge) and 2t (entered by an RW edge).
func doubled(n int, es []hyperpolygraph.Edge, si bool) [][]int {
	if !si {
		adj := make([][]int, n)
		for _, e := range es {
			adj[e.From] = append(adj[e.From], int(e.To))
		}
		return adj
	}
	adj := make([][]int, 2*n)
	for _, e := range es {
		a, b := int(e.From), int(e.To)
		if e.Rel == history.RW {
			adj[2*a+1] = append(adj[2*a+1], 2*b)
		} else {
			adj[2*a] = append(adj[2*a], 2*b+1)
			adj[2*a+1] = append(adj[2*a+1], 2*b+1)
		}
	}
	return adj
}

// reachable reports whether state t is reachable from state s by a
// non-empty path.
func reachable(adj [][]int, s, t int) bool {
	seen := make([]bool, len(adj))
	stack := slices.Clone(adj[s])
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u == t {
			return true
		}
		if !seen[u] {
			seen[u] = true
			stack = append(stack, adj[u]...)
		}
	}
	return false
}

// validCycle checks that c is a closed walk of consecutive edges and, for
// SI, that every RW edge follows a non-RW edge.
func validCycle(c []hyperpolygraph.Edge, si bool) error {
	if len(c) == 0 {
		return fmt.Errorf("empty cycle")
	}
	for i, e := range c {
		next := c[(i+1)%len(c)]
		if e.To != next.From {
			return fmt.Errorf("edge %d ends at %d, edge %d starts at %d", i, e.To, (i+1)%len(c), next.From)
		}
		if si && next.Rel == history.RW && e.Rel == history.RW {
			return fmt.Errorf("two RW edges in a row at %d", i)
		}
	}
	return nil
}

// assignmentKey names an assignment by the orientation of every original
// WW pair and the writer of every original WR set, resolving what pruning
// made known from g.Known and g.Reads.
type origin struct {
	ww []hyperpolygraph.WWPair
	wr []hyperpolygraph.WRSet
}

func originOf(g *hyperpolygraph.Graph) origin {
	o := origin{ww: slices.Clone(g.WW)}
	for _, s := range g.WR {
		s.Cands = slices.Clone(s.Cands)
		o.wr = append(o.wr, s)
	}
	return o
}

func (o origin) key(g *hyperpolygraph.Graph, fwd []bool, choice []int) string {
	type pk struct {
		k    history.KeyID
		a, b history.TxnID
	}
	order := map[pk]bool{}
	for _, e := range g.Known {
		if e.Rel == history.WW {
			order[pk{e.Key, e.From, e.To}] = true
		}
	}
	for i, p := range g.WW {
		if fwd[i] {
			order[pk{p.Key, p.A, p.B}] = true
		} else {
			order[pk{p.Key, p.B, p.A}] = true
		}
	}
	// Pruning keeps the known part of each version order as its
	// transitive reduction: a pair it ordered may be a path.
	for changed := true; changed; {
		changed = false
		for ab := range order {
			for bc := range order {
				if ab.k == bc.k && ab.b == bc.a && ab.a != bc.b && !order[pk{ab.k, ab.a, bc.b}] {
					order[pk{ab.k, ab.a, bc.b}] = true
					changed = true
				}
			}
		}
	}
	type rk struct {
		k history.KeyID
		t history.TxnID
	}
	writer := map[rk]history.TxnID{}
	for k, rs := range g.Reads {
		for _, rd := range rs {
			if rd.Writer >= 0 {
				writer[rk{history.KeyID(k), rd.Reader}] = rd.Writer
			}
		}
	}
	for i, s := range g.WR {
		writer[rk{s.Key, s.Reader}] = s.Cands[choice[i]]
	}
	var sb strings.Builder
	for _, p := range o.ww {
		f, b := order[pk{p.Key, p.A, p.B}], order[pk{p.Key, p.B, p.A}]
		switch {
		case f && !b:
			sb.WriteByte('>')
		case b && !f:
			sb.WriteByte('<')
		default:
			sb.WriteByte('?')
		}
	}
	for _, s := range o.wr {
		w, ok := writer[rk{s.Key, s.Reader}]
		if !ok {
			w = -1
		}
		fmt.Fprintf(&sb, ",%d", w)
	}
	return sb.String()
}

// acyclicSet returns the keys of the acyclic assignments of g.
func acyclicSet(g *hyperpolygraph.Graph, o origin) map[string]bool {
	si := g.Level == history.SI
	out := map[string]bool{}
	enumerate(g, func(fwd []bool, choice []int) {
		if acyclic(g.N(), compatEdges(g, fwd, choice), si) {
			out[o.key(g, fwd, choice)] = true
		}
	})
	return out
}
