package robust

import (
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/solver/pk"
)

// orderTheory keeps an arbitration order acyclic for the SAT encoding of
// executions (sat.go): each order variable stands for one pair of nodes,
// true for lo before hi and false for hi before lo, and the edges of the
// assigned order variables must have a topological order, which is then a
// total order agreeing with every one of them. Only the pairs some clause
// mentions get a variable; a partial order of those extends to a total
// one, so the encoding never needs the others.
type orderTheory struct {
	// pair[v] is order variable v's nodes (lo, hi); ok false for the
	// encoding's other variables.
	pair []orderPair
	g    *pk.Graph
	// pushed records, per Assign call, whether it inserted a pk edge, so
	// that Unassign undoes exactly that.
	pushed []bool
	confl  []cnf.Lit
}

type orderPair struct {
	lo, hi int32
	ok     bool
}

func newOrderTheory(nodes int) *orderTheory {
	return &orderTheory{pair: []orderPair{{}}, g: pk.New(nodes)}
}

// register makes v an order variable for (lo, hi).
func (t *orderTheory) register(v int32, lo, hi int32) {
	for int(v) >= len(t.pair) {
		t.pair = append(t.pair, orderPair{})
	}
	t.pair[v] = orderPair{lo: lo, hi: hi, ok: true}
}

// Assign inserts the edge l asserts; a cycle is a conflict made of the
// negations of its edges' literals and of l.
func (t *orderTheory) Assign(l cnf.Lit) []cnf.Lit {
	v := l.Var()
	if int(v) >= len(t.pair) || !t.pair[v].ok {
		t.pushed = append(t.pushed, false)
		return nil
	}
	p := t.pair[v]
	from, to := p.lo, p.hi
	if !l.IsPos() {
		from, to = to, from
	}
	cycle, ok := t.g.AddEdge(from, to, int32(l))
	if ok {
		t.pushed = append(t.pushed, true)
		return nil
	}
	t.pushed = append(t.pushed, false)
	t.confl = append(t.confl[:0], l.Not())
	for _, r := range cycle {
		t.confl = append(t.confl, cnf.Lit(r).Not())
	}
	return t.confl
}

// Unassign undoes the matching Assign (the solver calls them LIFO).
func (t *orderTheory) Unassign(cnf.Lit) {
	n := len(t.pushed) - 1
	if t.pushed[n] {
		t.g.RemoveLast()
	}
	t.pushed = t.pushed[:n]
}

// Phase decides an order variable the way the current topological order
// already goes, so that a decision rarely reorders.
func (t *orderTheory) Phase(v int32) (bool, bool) {
	if int(v) >= len(t.pair) || !t.pair[v].ok {
		return false, false
	}
	p := t.pair[v]
	return t.g.Level(p.lo) < t.g.Level(p.hi), true
}

// order returns the nodes in a topological order of the current edges.
func (t *orderTheory) order() []int32 { return t.g.Order(nil) }
