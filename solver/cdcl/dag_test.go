package cdcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// dagTheory is a toy version of hyperiso's use: edge variables of a graph
// whose true edges must stay acyclic. A conflict is the negation of the
// edge literals of a cycle. It checks LIFO order like cubeTheory.
type dagTheory struct {
	t      testing.TB
	edges  map[int32][2]int // variable -> (from, to)
	out    [][]int32        // node -> true edge variables leaving it, in Assign order
	stack  []cnf.Lit
	seen   []bool
	path   []int32
	phases bool
}

func (d *dagTheory) reach(from, to int) bool {
	if from == to {
		return true
	}
	d.seen[from] = true
	for _, e := range d.out[from] {
		w := d.edges[e][1]
		if d.seen[w] {
			continue
		}
		d.path = append(d.path, e)
		if d.reach(w, to) {
			return true
		}
		d.path = d.path[:len(d.path)-1]
	}
	return false
}

func (d *dagTheory) Assign(l cnf.Lit) []cnf.Lit {
	d.stack = append(d.stack, l)
	e, ok := d.edges[l.Var()]
	if !ok || l < 0 {
		return nil
	}
	u, v := e[0], e[1]
	clear(d.seen)
	d.path = d.path[:0]
	var conflict []cnf.Lit
	if d.reach(v, u) {
		conflict = []cnf.Lit{-l}
		for _, x := range d.path {
			conflict = append(conflict, -cnf.Lit(x))
		}
	}
	d.out[u] = append(d.out[u], l.Var()) // added even on conflict: Unassign pops it
	return conflict
}

func (d *dagTheory) Unassign(l cnf.Lit) {
	if len(d.stack) == 0 || d.stack[len(d.stack)-1] != l {
		d.t.Fatalf("Unassign(%d) out of LIFO order", l)
	}
	d.stack = d.stack[:len(d.stack)-1]
	if e, ok := d.edges[l.Var()]; ok && l > 0 {
		o := d.out[e[0]]
		if o[len(o)-1] != l.Var() {
			d.t.Fatalf("edge %d not last", l)
		}
		d.out[e[0]] = o[:len(o)-1]
	}
}

func (d *dagTheory) Phase(v int32) (bool, bool) {
	if !d.phases {
		return false, false
	}
	if e, ok := d.edges[v]; ok {
		return e[0] < e[1], true // a fixed order as a stand-in for PK levels
	}
	return false, false
}

// TestDAGTheoryDifferential checks acyclicity problems against gini given
// an order encoding (antisymmetry and transitivity of a total order that
// every true edge must respect).
func TestDAGTheoryDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	count := 600
	if testing.Short() {
		count = 100
	}
	nsat := 0
	var tot statTotals
	for i := 0; i < count; i++ {
		nodes := 4 + r.IntN(11)
		if i%3 == 0 {
			nodes = 15 + r.IntN(21) // larger, with more conflicts
		}
		d := &dagTheory{t: t, edges: map[int32][2]int{}, out: make([][]int32, nodes), seen: make([]bool, nodes), phases: i%2 == 0}
		var cls [][]cnf.Lit
		nv := int32(0)
		var evars []int32
		edge := func(u, v int) int32 {
			nv++
			d.edges[nv] = [2]int{u, v}
			evars = append(evars, nv)
			return nv
		}
		// Like a polygraph: known edges (units), and pairs of alternative
		// edges of which one must hold (and, often, only one).
		for u := 0; u < nodes; u++ {
			for v := u + 1; v < nodes; v++ {
				switch r.IntN(12) {
				case 0:
					a, b := u, v
					if r.IntN(2) == 0 {
						a, b = b, a
					}
					cls = append(cls, []cnf.Lit{cnf.Lit(edge(a, b))})
				case 1, 2, 3, 4, 5:
					x, y := cnf.Lit(edge(u, v)), cnf.Lit(edge(v, u))
					cls = append(cls, []cnf.Lit{x, y})
					if r.IntN(2) == 0 {
						cls = append(cls, []cnf.Lit{-x, -y})
					}
				}
			}
		}
		if len(evars) == 0 {
			continue
		}
		// Random side constraints between alternatives.
		for k := 0; k < r.IntN(len(evars)/4+1); k++ {
			c := make([]cnf.Lit, 1+r.IntN(3))
			for j := range c {
				c[j] = cnf.Lit(evars[r.IntN(len(evars))])
				if r.IntN(2) == 0 {
					c[j] = -c[j]
				}
			}
			cls = append(cls, c)
		}
		opt := optionVariants[i%len(optionVariants)]
		opt.Theory = d
		s := newWith(int(nv), cls, opt)
		if i%2 == 1 {
			fastReduce(s)
		}
		res := s.Solve(context.Background())
		tot.add(s.Stats())

		// Order encoding for gini: o(a,b) for a != b.
		ord := func(a, b int) cnf.Lit { return cnf.Lit(int(nv) + a*nodes + b + 1) }
		all := append([][]cnf.Lit(nil), cls...)
		for a := 0; a < nodes; a++ {
			for b := 0; b < nodes; b++ {
				if a == b {
					continue
				}
				all = append(all, []cnf.Lit{ord(a, b), ord(b, a)}, []cnf.Lit{-ord(a, b), -ord(b, a)})
				for c := 0; c < nodes; c++ {
					if c != a && c != b {
						all = append(all, []cnf.Lit{-ord(a, b), -ord(b, c), ord(a, c)})
					}
				}
			}
		}
		for e, uv := range d.edges {
			all = append(all, []cnf.Lit{-cnf.Lit(e), ord(uv[0], uv[1])})
		}
		want := giniSolve(int(nv)+nodes*nodes, all, nil)
		msg := fmt.Sprintf("instance %d nodes=%d edges=%d", i, nodes, nv)
		if !want {
			require.Equal(t, Unsat, res, msg)
			continue
		}
		nsat++
		require.Equal(t, Sat, res, msg)
		requireModel(t, s, cls, msg)
		// The true edges are acyclic: check from scratch.
		g := &dagTheory{t: t, edges: d.edges, out: make([][]int32, nodes), seen: make([]bool, nodes)}
		for e, uv := range d.edges {
			if s.Value(e) {
				g.out[uv[0]] = append(g.out[uv[0]], e)
			}
		}
		for e, uv := range d.edges {
			if s.Value(e) {
				clear(g.seen)
				require.False(t, g.reach(uv[1], uv[0]), "%s: cycle through edge %d", msg, e)
			}
		}
	}
	t.Logf("%d instances, %d SAT; %s", count, nsat, tot)
}
