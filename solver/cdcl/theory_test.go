package cdcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// cubeTheory forbids cubes (conjunctions of literals): no model may make a
// cube entirely true. It also checks the solver's side of the Theory
// contract on every call.
type cubeTheory struct {
	t     testing.TB
	s     *Solver
	n     int
	cubes [][]cnf.Lit
	occ   map[cnf.Lit][]int // cubes containing a literal
	view  []int8            // per variable: 0 unknown, ±1 as Assigned
	stack []cnf.Lit         // Assign calls not yet undone
	// lazy reports a violation only on every third Assign (and on the one
	// completing the assignment), so conflict clauses are often entirely
	// below the current decision level.
	lazy bool
	// phases answers Phase with random polarities.
	phases bool
	rng    *rand.Rand

	assigns, unassigns int
}

func newCubeTheory(t testing.TB, n int, cubes [][]cnf.Lit, r *rand.Rand) *cubeTheory {
	th := &cubeTheory{t: t, n: n, cubes: cubes, occ: map[cnf.Lit][]int{}, view: make([]int8, n+1), rng: r}
	for i, c := range cubes {
		for _, l := range c {
			th.occ[l] = append(th.occ[l], i)
		}
	}
	return th
}

func (th *cubeTheory) isTrue(l cnf.Lit) bool {
	x := th.view[l.Var()]
	return x != 0 && (x > 0) == l.IsPos()
}

func (th *cubeTheory) violated(i int) bool {
	for _, l := range th.cubes[i] {
		if !th.isTrue(l) {
			return false
		}
	}
	return true
}

func (th *cubeTheory) negation(i int) []cnf.Lit {
	out := make([]cnf.Lit, len(th.cubes[i]))
	for k, l := range th.cubes[i] {
		out[k] = -l
	}
	return out
}

func (th *cubeTheory) Assign(l cnf.Lit) []cnf.Lit {
	th.assigns++
	s := th.s
	if s.qhead != len(s.trail) {
		th.t.Fatalf("Assign(%d) before the propagation fixpoint", l)
	}
	if s.vals[toLit(l)] != valTrue {
		th.t.Fatalf("Assign(%d) of a literal that is not true", l)
	}
	if th.view[l.Var()] != 0 {
		th.t.Fatalf("Assign(%d) twice", l)
	}
	th.stack = append(th.stack, l)
	th.view[l.Var()] = 1
	if l < 0 {
		th.view[l.Var()] = -1
	}
	if th.lazy {
		if len(th.stack)%3 != 0 && len(th.stack) != th.n {
			return nil
		}
		for i := range th.cubes {
			if th.violated(i) {
				return th.negation(i)
			}
		}
		return nil
	}
	for _, i := range th.occ[l] {
		if th.violated(i) {
			return th.negation(i)
		}
	}
	return nil
}

func (th *cubeTheory) Unassign(l cnf.Lit) {
	th.unassigns++
	if len(th.stack) == 0 || th.stack[len(th.stack)-1] != l {
		th.t.Fatalf("Unassign(%d) out of LIFO order (top %v)", l, th.stack[max(0, len(th.stack)-1):])
	}
	if th.s.vals[toLit(l)] != valTrue {
		th.t.Fatalf("Unassign(%d) of a literal that is not true", l)
	}
	th.stack = th.stack[:len(th.stack)-1]
	th.view[l.Var()] = 0
}

func (th *cubeTheory) Phase(v int32) (bool, bool) {
	if !th.phases {
		return false, false
	}
	return th.rng.IntN(2) == 0, true
}

// propCubeTheory adds theory propagation: a cube with all literals but one
// true implies the negation of the remaining one.
type propCubeTheory struct{ *cubeTheory }

func (th propCubeTheory) Propagate() []cnf.Lit {
	s := th.s
	if s.thead != len(s.trail) {
		th.t.Fatalf("Propagate before the theory saw the whole trail")
	}
	for i, c := range th.cubes {
		open := -1
		ok := true
		for k, l := range c {
			if th.isTrue(l) {
				continue
			}
			if th.view[l.Var()] != 0 || open >= 0 {
				ok = false
				break
			}
			open = k
		}
		if !ok {
			continue
		}
		if open < 0 { // violated (possible in lazy mode): a conflict
			return th.negation(i)
		}
		out := []cnf.Lit{-c[open]}
		for k, l := range c {
			if k != open {
				out = append(out, -l)
			}
		}
		return out
	}
	return nil
}

func randomCubes(r *rand.Rand, n, k int) [][]cnf.Lit {
	cubes := make([][]cnf.Lit, k)
	for i := range cubes {
		size := 1 + r.IntN(3)
		if n < 3 {
			size = 1
		}
		c := random3SAT(r, n, 1)[0][:size]
		cubes[i] = slices.Clone(c)
	}
	return cubes
}

func cubeClauses(cubes [][]cnf.Lit) [][]cnf.Lit {
	var out [][]cnf.Lit
	for _, c := range cubes {
		nc := make([]cnf.Lit, len(c))
		for k, l := range c {
			nc[k] = -l
		}
		out = append(out, nc)
	}
	return out
}

// bruteForce reports whether some assignment of n ≤ 20 variables satisfies
// cls, makes the assumptions true and passes ok.
func bruteForce(n int, cls [][]cnf.Lit, assumptions []cnf.Lit, ok func(val func(int32) bool) bool) bool {
	units := make([][]cnf.Lit, len(assumptions))
	for i, a := range assumptions {
		units[i] = []cnf.Lit{a}
	}
	for m := 0; m < 1<<n; m++ {
		val := func(v int32) bool { return m>>(v-1)&1 != 0 }
		if satisfies(cls, val) && satisfies(units, val) && (ok == nil || ok(val)) {
			return true
		}
	}
	return false
}

func noCube(cubes [][]cnf.Lit) func(val func(int32) bool) bool {
	return func(val func(int32) bool) bool {
		for _, c := range cubes {
			all := true
			for _, l := range c {
				if val(l.Var()) != l.IsPos() {
					all = false
					break
				}
			}
			if all {
				return false
			}
		}
		return true
	}
}

// checkTheoryAtSat checks that after Sat the theory has seen exactly the
// model.
func checkTheoryAtSat(t *testing.T, th *cubeTheory, s *Solver, msg string) {
	t.Helper()
	require.Len(t, th.stack, th.n, msg)
	for v := 1; v <= th.n; v++ {
		require.Equal(t, s.Value(int32(v)), th.view[v] > 0, msg)
	}
}

// TestCubeTheoryBruteForce runs small random formulas with a forbidden-cube
// theory (eager, lazy, with and without propagation, assumptions) against
// brute force.
func TestCubeTheoryBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	count := 3000
	if testing.Short() {
		count = 500
	}
	nsat := 0
	var tot statTotals
	for i := 0; i < count; i++ {
		n := 3 + r.IntN(10)
		cls := random3SAT(r, n, r.IntN(3*n))
		cubes := randomCubes(r, n, r.IntN(2*n))
		th := newCubeTheory(t, n, cubes, r)
		th.lazy = i%3 == 1
		th.phases = i%2 == 0
		var theory Theory = th
		if i%4 >= 2 {
			theory = propCubeTheory{th}
		}
		opt := optionVariants[i%len(optionVariants)]
		opt.Theory = theory
		s := newWith(n, cls, opt)
		th.s = s
		if i%2 == 1 {
			fastReduce(s)
		}
		var assumptions []cnf.Lit
		if i%5 == 0 {
			assumptions = random3SAT(r, n, 1)[0][:min(n, 1+r.IntN(3))]
		}
		res := s.SolveAssuming(context.Background(), assumptions)
		tot.add(s.Stats())
		want := bruteForce(n, cls, assumptions, noCube(cubes))
		msg := fmt.Sprintf("instance %d n=%d cls=%v cubes=%v assume=%v", i, n, cls, cubes, assumptions)
		if want {
			nsat++
			require.Equal(t, Sat, res, msg)
			requireModel(t, s, cls, msg)
			require.True(t, noCube(cubes)(s.Value), msg)
			for _, a := range assumptions {
				require.Equal(t, a.IsPos(), s.Value(a.Var()), msg)
			}
			checkTheoryAtSat(t, th, s, msg)
		} else {
			require.Equal(t, Unsat, res, msg)
			failed := s.FailedAssumptions()
			for _, f := range failed {
				require.Contains(t, assumptions, f, msg)
			}
			require.False(t, bruteForce(n, cls, failed, noCube(cubes)), msg)
		}
		// The theory has seen exactly the level-0 literals (or, after Sat,
		// everything); either way Assign and Unassign calls balance.
		require.Equal(t, th.assigns-th.unassigns, len(th.stack), msg)
		// Incremental: one more clause, solve again.
		extra := random3SAT(r, n, 1)[0]
		s.AddClause(extra)
		require.Len(t, th.stack, s.decisionLevel0Lits(), msg)
		cls = append(cls, extra)
		res = s.Solve(context.Background())
		want = bruteForce(n, cls, nil, noCube(cubes))
		require.Equal(t, want, res == Sat, msg+" (incremental)")
		if want {
			requireModel(t, s, cls, msg)
			checkTheoryAtSat(t, th, s, msg)
		}
	}
	t.Logf("%d instances, %d SAT; %s", count, nsat, tot)
}

// decisionLevel0Lits counts the assigned literals the theory has seen at
// level 0 (test helper).
func (s *Solver) decisionLevel0Lits() int {
	if s.decisionLevel() != 0 {
		panic("not at level 0")
	}
	return s.thead
}

// TestCubeTheoryDifferential: larger random 3-SAT with forbidden cubes,
// against gini given the cubes' negations as clauses.
func TestCubeTheoryDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	count := 1000
	if testing.Short() {
		count = 200
	}
	nsat := 0
	var tot statTotals
	for i := 0; i < count; i++ {
		n := 20 + r.IntN(80)
		cls := random3SAT(r, n, int((3.3+0.9*r.Float64())*float64(n)))
		cubes := randomCubes(r, n, r.IntN(n/2))
		for k := range cubes { // longer cubes are rarely violated
			if len(cubes[k]) == 1 {
				cubes[k] = random3SAT(r, n, 1)[0][:2]
			}
		}
		if i%5 == 0 {
			// Theory-heavy: half of the clauses become forbidden cubes.
			half := len(cls) / 2
			cubes = append(cubes, cubeClauses(cls[half:])...)
			cls = cls[:half]
		}
		th := newCubeTheory(t, n, cubes, r)
		th.lazy = i%3 == 2
		th.phases = i%4 == 1
		var theory Theory = th
		if i%2 == 1 {
			theory = propCubeTheory{th}
		}
		opt := optionVariants[i%len(optionVariants)]
		opt.Theory = theory
		s := newWith(n, cls, opt)
		th.s = s
		if i%3 == 0 {
			fastReduce(s)
		}
		res := s.Solve(context.Background())
		tot.add(s.Stats())
		all := append(slices.Clone(cls), cubeClauses(cubes)...)
		want := giniSolve(n, all, nil)
		msg := fmt.Sprintf("instance %d n=%d", i, n)
		if want {
			nsat++
			require.Equal(t, Sat, res, msg)
			requireModel(t, s, all, msg)
			checkTheoryAtSat(t, th, s, msg)
		} else {
			require.Equal(t, Unsat, res, msg)
		}
	}
	t.Logf("%d instances, %d SAT; %s", count, nsat, tot)
}

// atMostK allows at most k of its variables to be true.
type atMostK struct {
	in   map[int32]bool
	k    int
	true []cnf.Lit
}

func (a *atMostK) Assign(l cnf.Lit) []cnf.Lit {
	if l < 0 || !a.in[l.Var()] {
		return nil
	}
	a.true = append(a.true, l)
	if len(a.true) <= a.k {
		return nil
	}
	out := make([]cnf.Lit, len(a.true))
	for i, x := range a.true {
		out[i] = -x
	}
	return out
}

func (a *atMostK) Unassign(l cnf.Lit) {
	if l > 0 && a.in[l.Var()] {
		if a.true[len(a.true)-1] != l {
			panic("atMostK: not LIFO")
		}
		a.true = a.true[:len(a.true)-1]
	}
}

func (a *atMostK) Phase(v int32) (bool, bool) {
	if a.in[v] {
		return true, true // provoke conflicts
	}
	return false, false
}

func TestAtMostKBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 1000; i++ {
		n := 4 + r.IntN(9)
		cls := random3SAT(r, n, r.IntN(4*n))
		th := &atMostK{in: map[int32]bool{}, k: r.IntN(4)}
		for v := 1; v <= n; v++ {
			if r.IntN(2) == 0 {
				th.in[int32(v)] = true
			}
		}
		opt := optionVariants[i%len(optionVariants)]
		opt.Theory = th
		s := newWith(n, cls, opt)
		res := s.Solve(context.Background())
		within := func(val func(int32) bool) bool {
			c := 0
			for v := range th.in {
				if val(v) {
					c++
				}
			}
			return c <= th.k
		}
		want := bruteForce(n, cls, nil, within)
		msg := fmt.Sprintf("instance %d", i)
		require.Equal(t, want, res == Sat, msg)
		if want {
			requireModel(t, s, cls, msg)
			require.True(t, within(s.Value), msg)
		}
	}
}

// A theory whose pigeons must fly: at most 1 of 3 variables, with the clause
// "at least 2" — UNSAT only through theory conflicts.
func TestTheoryOnlyUnsat(t *testing.T) {
	th := &atMostK{in: map[int32]bool{1: true, 2: true, 3: true}, k: 1}
	s := New(3, Options{Theory: th})
	s.AddClause([]cnf.Lit{1, 2})
	s.AddClause([]cnf.Lit{1, 3})
	s.AddClause([]cnf.Lit{2, 3})
	require.Equal(t, Unsat, s.Solve(context.Background()))
	require.Positive(t, s.Stats().TheoryConflicts)
	require.Equal(t, Unsat, s.Solve(context.Background()))
}

// A theory conflict on level-0 literals makes the formula UNSAT for good.
func TestTheoryLevel0Conflict(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	th := newCubeTheory(t, 4, [][]cnf.Lit{{1, -2}}, r)
	s := New(4, Options{Theory: th})
	th.s = s
	s.AddClause([]cnf.Lit{1})
	s.AddClause([]cnf.Lit{-2})
	s.AddClause([]cnf.Lit{3, 4})
	require.Equal(t, Unsat, s.Solve(context.Background()))
	require.Empty(t, s.FailedAssumptions())
	require.False(t, s.AddClause([]cnf.Lit{3}))
}

type emptyConflict struct{}

func (emptyConflict) Assign(cnf.Lit) []cnf.Lit { return []cnf.Lit{} }
func (emptyConflict) Unassign(cnf.Lit)         {}
func (emptyConflict) Phase(int32) (bool, bool) { return false, false }

type badConflict struct{}

func (badConflict) Assign(l cnf.Lit) []cnf.Lit { return []cnf.Lit{l} } // true, not false
func (badConflict) Unassign(cnf.Lit)           {}
func (badConflict) Phase(int32) (bool, bool)   { return false, false }

func TestTheoryContractEdges(t *testing.T) {
	s := New(2, Options{Theory: emptyConflict{}})
	s.AddClause([]cnf.Lit{1, 2})
	require.Equal(t, Unsat, s.Solve(context.Background()))

	b := New(2, Options{Theory: badConflict{}})
	b.AddClause([]cnf.Lit{1, 2})
	require.Panics(t, func() { b.Solve(context.Background()) })
}

// statTotals sums the theory-related counters over a test.
type statTotals struct{ conflicts, thConflicts, late, thProps, reductions, compactions, chrono int64 }

func (t *statTotals) add(s Stats) {
	t.conflicts += s.Conflicts
	t.thConflicts += s.TheoryConflicts
	t.late += s.LateConflicts
	t.thProps += s.TheoryPropagations
	t.reductions += s.Reductions
	t.compactions += s.Compactions
	t.chrono += s.ChronoBacktracks
}

func (t statTotals) String() string {
	return fmt.Sprintf("conflicts %d (theory %d, late %d), theory propagations %d, reductions %d, compactions %d, chronological backtracks %d",
		t.conflicts, t.thConflicts, t.late, t.thProps, t.reductions, t.compactions, t.chrono)
}
