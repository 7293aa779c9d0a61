// Package encode turns a (pruned) hyper-polygraph into CNF: one variable per
// uncertain version-order pair and per candidate of an uncertain read-from,
// exactly-one clauses for each read-from set, and clauses that rule out
// cycles of width two before any solver runs. RW edges get no variables:
// the solvers derive them from the WW and WR literals they follow from.
package encode

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Encoding is the CNF of a hyper-polygraph and the meaning of its variables.
type Encoding struct {
	G       *hyperpolygraph.Graph
	NumVars int
	Clauses [][]cnf.Lit
	// WWVar[i] is the variable of g.WW[i]: true means A→B, false B→A.
	WWVar []int32
	// WRBase[i] is the variable of g.WR[i].Cands[0]; candidate j has
	// variable WRBase[i]+j, true meaning the read is from that candidate.
	WRBase []int32
	// TwoWidth counts the clauses that forbid cycles of width two.
	TwoWidth int
	// TwoWidthTruncated says the width-two search stopped at its work or
	// clause budget; the clauses it has added are still sound.
	TwoWidthTruncated bool
	// Incl[t] is the inclusion variable of optional transaction t (0 for
	// the others); nil without an optional part (G.Opt).
	Incl []int32
	// OptWW[i] is the variable of G.Opt.WW[i] ordered A→B; the next one
	// orders B→A; neither is true when a writer is left out.
	OptWW []int32
	// OptWR[i] is the variable of G.Opt.WR[i].Cands[0], as WRBase.
	OptWR []int32
	// varInfo maps a variable of the certain part to its constraint: >= 0
	// a WW index, < 0 -(1+WR set index). The optional part's variables
	// come after them.
	varInfo []int32
	// asserts lists, per variable of the optional part, the edges it puts
	// in the graph when true.
	asserts [][]hyperpolygraph.Edge
}

// Options select optional parts of the encoding.
type Options struct {
	// TwoWidth adds the width-two cycle clauses (needs reachability).
	TwoWidth bool
	// Fit is asked whether need more bytes fit the memory budget: before
	// the clauses are allocated (a read-from set of c candidates has
	// c(c-1)/2 at-most-one clauses), and as the width-two search adds
	// clauses. A refusal of the former stops EncodeContext with Fit's
	// error; one of the latter stops the search, which is optional, as its
	// budgets do (TwoWidthTruncated). Nil: no bound.
	Fit func(need int64, what string) error
}

// Encode builds the CNF for g, whose uncertain constraints are g.WW and
// g.WR. reach, when non-nil, answers reachability in g's known graph and is
// used for the width-two clauses. It returns nil only when opt.Fit refuses.
func Encode(g *hyperpolygraph.Graph, reach Reacher, opt Options) *Encoding {
	e, _ := EncodeContext(context.Background(), g, reach, opt)
	return e
}

// Sizes the memory estimates use.
const (
	clauseBytes = int64(unsafe.Sizeof([]cnf.Lit{}))
	litBytes    = int64(unsafe.Sizeof(cnf.Lit(0)))
)

// EncodeContext is Encode that gives up, with ctx's error or opt.Fit's,
// when ctx is done or the clauses would not fit the memory budget.
func EncodeContext(ctx context.Context, g *hyperpolygraph.Graph, reach Reacher, opt Options) (*Encoding, error) {
	// Each clause is a slice header in Clauses and its own array of at
	// least 8 bytes (the smallest size class).
	nClauses, nVars, need := int64(0), int64(len(g.WW)), int64(0)
	for _, s := range g.WR {
		c := int64(len(s.Cands))
		nVars += c
		nClauses += 1 + c*(c-1)/2
		need += clauseBytes + max(8, c*litBytes) + c*(c-1)/2*(clauseBytes+8)
	}
	if g.Opt != nil {
		v, c := optVars(g.Opt)
		nVars, nClauses = nVars+v, nClauses+c
		need += 4*v + c*(clauseBytes+16)
	}
	if opt.Fit != nil {
		need += 12 * nVars // WWVar, WRBase, varInfo
		if err := opt.Fit(need, fmt.Sprintf("the CNF (%d variables, %d clauses)", nVars, nClauses)); err != nil {
			return nil, err
		}
	}
	e := &Encoding{G: g, WWVar: make([]int32, len(g.WW)), WRBase: make([]int32, len(g.WR)),
		Clauses: make([][]cnf.Lit, 0, nClauses), varInfo: make([]int32, 1, nVars+1)} // variable 0 does not exist
	for i := range g.WW {
		e.NumVars++
		e.WWVar[i] = int32(e.NumVars)
		e.varInfo = append(e.varInfo, int32(i))
	}
	// The literals of the read-from clauses live in few large arrays
	// (lits), not one small allocation per clause: the collector has
	// millions fewer objects to track, and encoding is faster.
	var lits litArena
	work := 0
	for i, s := range g.WR {
		// ctx is polled by work (clauses written), not by sets: a set of
		// c candidates writes c(c-1)/2 clauses.
		if work += 1 + len(s.Cands)*len(s.Cands)/2; work >= 1<<16 {
			work = 0
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e.WRBase[i] = int32(e.NumVars + 1)
		clause := lits.take(len(s.Cands))
		for j := range s.Cands {
			e.NumVars++
			e.varInfo = append(e.varInfo, -int32(1+i))
			clause[j] = cnf.Lit(e.NumVars)
		}
		e.Clauses = append(e.Clauses, clause)
		for a := range s.Cands {
			for b := a + 1; b < len(s.Cands); b++ {
				e.Clauses = append(e.Clauses, lits.pair(-clause[a], -clause[b]))
			}
		}
	}
	if g.Opt != nil {
		e.optional(reach)
	}
	if opt.TwoWidth && reach != nil {
		if err := e.addTwoWidth(ctx, reach, opt.Fit); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// litArena hands out clauses' literal arrays from chunks of litChunk
// literals, each clause capped at its length (an append to one copies it).
type litArena struct{ buf []cnf.Lit }

const litChunk = 1 << 16

// take returns a clause of n literals.
func (a *litArena) take(n int) []cnf.Lit {
	if n > litChunk/4 {
		return make([]cnf.Lit, n)
	}
	if len(a.buf)+n > cap(a.buf) {
		a.buf = make([]cnf.Lit, 0, litChunk)
	}
	l := len(a.buf)
	a.buf = a.buf[:l+n]
	return a.buf[l : l+n : l+n]
}

// pair returns the clause l1 ∨ l2.
func (a *litArena) pair(l1, l2 cnf.Lit) []cnf.Lit {
	c := a.take(2)
	c[0], c[1] = l1, l2
	return c
}

// growClauses makes room for n more clauses. It copies the array in
// pieces, not with append's one copy: a copy of hundreds of megabytes of
// pointers cannot be preempted, so a collection that must stop the world
// waits for it, and with it the goroutine that would honour a deadline.
func (e *Encoding) growClauses(n int) {
	old := e.Clauses
	e.Clauses = make([][]cnf.Lit, len(old), len(old)+n)
	const piece = 1 << 14
	for i := 0; i < len(old); i += piece {
		copy(e.Clauses[i:min(i+piece, len(old))], old[i:min(i+piece, len(old))])
	}
}

// appendClauses appends cs to e.Clauses, which has room for them, in
// pieces, as growClauses copies.
func (e *Encoding) appendClauses(cs [][]cnf.Lit) {
	const piece = 1 << 14
	for i := 0; i < len(cs); i += piece {
		e.Clauses = append(e.Clauses, cs[i:min(i+piece, len(cs))]...)
	}
}

// Reacher answers reachability in the known graph: whether to is reachable
// from from (every node reaches itself).
type Reacher interface {
	Reaches(from, to history.TxnID) bool
}

// EdgeOf returns the edge that literal l asserts when true, if any (a false
// read-from literal asserts nothing).
func (e *Encoding) EdgeOf(l cnf.Lit) (hyperpolygraph.Edge, bool) {
	v := l.Var()
	if e.IsOpt(v) {
		if as := e.Asserts(v); l > 0 && len(as) == 1 {
			return as[0], true
		}
		return hyperpolygraph.Edge{}, false
	}
	info := e.varInfo[v]
	if info >= 0 {
		p := e.G.WW[info]
		if l > 0 {
			return hyperpolygraph.Edge{From: p.A, To: p.B, Rel: history.WW, Key: p.Key}, true
		}
		return hyperpolygraph.Edge{From: p.B, To: p.A, Rel: history.WW, Key: p.Key}, true
	}
	if l < 0 {
		return hyperpolygraph.Edge{}, false
	}
	si := -info - 1
	s := e.G.WR[si]
	return hyperpolygraph.Edge{From: s.Cands[v-e.WRBase[si]], To: s.Reader, Rel: history.WR, Key: s.Key}, true
}

// IsWW reports whether variable v encodes a version-order pair, and which.
func (e *Encoding) IsWW(v int32) (int, bool) {
	if e.IsOpt(v) {
		return 0, false
	}
	info := e.varInfo[v]
	return int(info), info >= 0
}

// WRSet returns the read-from set and candidate index of variable v.
func (e *Encoding) WRSet(v int32) (set, cand int, ok bool) {
	if e.IsOpt(v) {
		return 0, 0, false
	}
	info := e.varInfo[v]
	if info >= 0 {
		return 0, 0, false
	}
	set = int(-info - 1)
	return set, int(v - e.WRBase[set]), true
}

// Decode turns a model (value of each variable) into the assignment of the
// hyper-polygraph's constraints it stands for. A read-from set with no true
// candidate means the model ignored an exactly-one clause: an error.
func (e *Encoding) Decode(value func(v int32) bool) (hyperpolygraph.Assignment, error) {
	g := e.G
	a := hyperpolygraph.Assignment{Forward: make([]bool, len(g.WW)), Choice: make([]int32, len(g.WR))}
	for i := range g.WW {
		a.Forward[i] = value(e.WWVar[i])
	}
	for i, s := range g.WR {
		a.Choice[i] = -1
		for j := range s.Cands {
			if value(e.WRBase[i] + int32(j)) {
				a.Choice[i] = int32(j)
				break
			}
		}
		if a.Choice[i] < 0 {
			return a, fmt.Errorf("model gives read-from set %d (reader %d, key %d) no writer", i, s.Reader, s.Key)
		}
	}
	return a, nil
}
