package cdcl

import (
	"context"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// Result is the outcome of a Solve call.
type Result int

const (
	// Unknown: the search was cancelled (context or conflict limit).
	Unknown Result = iota
	// Sat: a model was found; read it with Value.
	Sat
	// Unsat: the clauses (with the theory, under the assumptions) have no
	// model.
	Unsat
)

func (r Result) String() string {
	switch r {
	case Sat:
		return "SAT"
	case Unsat:
		return "UNSAT"
	}
	return "UNKNOWN"
}

// Options configures a Solver. The zero value is the recommended
// configuration.
type Options struct {
	// Theory, if not nil, is consulted on every assignment (see Theory). If
	// it also implements TheoryPropagator, theory propagation is enabled.
	Theory Theory
	// Seed, if not zero, perturbs the initial variable order and drives
	// random decisions (RandomVarFreq); zero keeps the index order.
	Seed uint64
	// Restarts selects the restart policy (default Glucose-style).
	Restarts RestartPolicy
	// LubyUnit is the number of conflicts per Luby unit (default 100).
	LubyUnit int
	// Reduce selects the learnt-clause deletion policy (default by LBD).
	Reduce ReducePolicy
	// NoPhaseSaving makes decisions without a theory opinion negative
	// instead of reusing each variable's last value.
	NoPhaseSaving bool
	// NoTheoryPhase ignores Theory.Phase.
	NoTheoryPhase bool
	// NoReuseTrail makes restarts go back to level 0 instead of keeping the
	// decisions the heuristic would repeat.
	NoReuseTrail bool
	// NoMinimize disables recursive learnt-clause minimisation.
	NoMinimize bool
	// VarDecay is the final VSIDS decay factor (default 0.95; it ramps up
	// from 0.8).
	VarDecay float64
	// ClauseDecay is the learnt-clause activity decay (default 0.999).
	ClauseDecay float64
	// RandomVarFreq is the probability of a random decision variable
	// (default 0).
	RandomVarFreq float64
	// Chrono, if positive, backtracks chronologically (one level, not to
	// the backjump level) after a conflict whose backjump would undo more
	// than Chrono levels (Nadel and Ryvchin 2018): the decisions in between
	// stay, and with them the theory's work on them.
	Chrono int
	// ConflictLimit, if positive, makes a Solve call give up with Unknown
	// after that many conflicts.
	ConflictLimit int64
	// Fit, if not nil, is asked before the clause database grows whether
	// need more bytes fit the memory budget (the growth of the clause
	// arena, which is copied while the old one is live, with the watch
	// lists that grow with it): original clauses (AddClause, Grow), learnt
	// clauses and the theory's reasons alike. On a refusal the solver
	// stops: AddClause and Grow return false and Solve Unknown, and Err
	// returns Fit's error. A compaction the budget refuses is skipped.
	Fit func(need int64, what string) error
}

// Stats are cumulative counters over the solver's lifetime.
type Stats struct {
	Decisions          int64 // decisions (excluding assumptions)
	RandomDecisions    int64 // of which random
	Conflicts          int64 // conflicts (clausal and theory)
	Propagations       int64 // literals processed by unit propagation
	Learned            int64 // learnt clauses (including units)
	LearnedLits        int64 // literals in learnt clauses before minimisation
	MinimizedLits      int64 // literals removed by minimisation
	Restarts           int64
	BlockedRestarts    int64
	ReusedRestarts     int64 // restarts that kept some decision levels
	Reductions         int64 // learnt-clause database reductions
	Deleted            int64 // learnt clauses deleted by reduction
	Compactions        int64 // arena compactions
	TheoryAssigns      int64 // Theory.Assign calls
	TheoryConflicts    int64 // conflict clauses from the theory
	LateConflicts      int64 // conflicts whose clause lay below the current level
	ChronoBacktracks   int64 // conflicts followed by a one-level backtrack (Options.Chrono)
	TheoryPropagations int64 // literals implied by TheoryPropagator
	Clauses            int   // current original clauses (non-unit)
	LearntClauses      int   // current learnt clauses (non-unit)
	ArenaWords         int   // size of the clause arena in 32-bit words
}

// Solver is a CDCL(T) SAT solver. It is not safe for concurrent use.
type Solver struct {
	opt   Options
	th    Theory
	thp   TheoryPropagator
	ok    bool // false once the formula is unsatisfiable at level 0
	nVars int

	// Assignment and trail.
	vals     []int8    // per literal
	vd       []varData // per variable
	trail    []lit
	trailLim []int32 // trail position of each decision level
	qhead    int     // trail[:qhead] have been unit-propagated
	thead    int     // trail[:thead] have been passed to Theory.Assign

	// Clause database.
	arena   []lit
	wasted  int
	clauses []cref // original clauses of size ≥ 2
	learnts []cref // learnt clauses of size ≥ 2
	temps   []tempReason
	watches [][]watcher // per literal: clauses to visit when it becomes false

	// Heuristic.
	act      []float64
	varInc   float64
	varDecay float64
	claInc   float32
	heap     []uint32
	heapIdx  []int32 // position in heap, -1 if absent
	phase    []bool  // saved polarity (true = positive)
	rng      uint64

	// Analysis scratch.
	seen       []uint8
	learnt     []lit
	stack      []lit
	toClear    []lit
	levelStamp []uint32
	lbdStamp   uint32
	thBuf      []lit
	addBuf     []lit
	reduceBuf  []cref

	// Restarts and reduction.
	conflictsSinceRestart int64
	lubyIdx               int
	lubyLimit             int64
	lbdWin, trailWin      ring
	lbdSum, lbdCount      int64
	nextReduce            int64
	reduceInterval        int64
	simpAssigns           int
	compactMin            int // compactMinWaste; lowered by tests

	// memErr is Options.Fit's refusal, which ends every later Solve.
	memErr error

	// Interface state.
	assumptions []lit
	failed      []cnf.Lit
	model       []bool
	modelValid  bool
	stats       Stats
}

// New returns a solver with variables 1..numVars (more are created on demand
// by AddClause and assumptions).
func New(numVars int, opt Options) *Solver {
	if opt.LubyUnit <= 0 {
		opt.LubyUnit = lubyDefaultUnit
	}
	if opt.VarDecay <= 0 || opt.VarDecay >= 1 {
		opt.VarDecay = defaultVarDecay
	}
	if opt.ClauseDecay <= 0 || opt.ClauseDecay >= 1 {
		opt.ClauseDecay = defaultClaDecay
	}
	s := &Solver{
		opt:            opt,
		th:             opt.Theory,
		ok:             true,
		varInc:         1,
		varDecay:       min(varDecayStart, opt.VarDecay),
		claInc:         1,
		levelStamp:     []uint32{0},
		lbdWin:         newRing(glucoseWindow),
		trailWin:       newRing(glucoseTrailWin),
		reduceInterval: firstReduce,
		nextReduce:     firstReduce,
		simpAssigns:    -1,
		compactMin:     compactMinWaste,
	}
	if p, ok := opt.Theory.(TheoryPropagator); ok {
		s.thp = p
	}
	// splitmix64 of the seed, never zero.
	z := opt.Seed + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	s.rng = z ^ z>>31 | 1
	s.growTo(numVars)
	return s
}

// growTo makes variables 1..n exist.
func (s *Solver) growTo(n int) {
	if n <= s.nVars {
		return
	}
	if n > 1<<30 {
		panic(fmt.Sprintf("cdcl: %d variables is too many", n))
	}
	for v := s.nVars; v < n; v++ {
		s.vals = append(s.vals, valUndef, valUndef)
		s.watches = append(s.watches, nil, nil)
		s.vd = append(s.vd, varData{crefUndef, 0})
		a := 0.0
		if s.opt.Seed != 0 {
			a = s.randFloat() * 1e-5
		}
		s.act = append(s.act, a)
		s.phase = append(s.phase, false)
		s.seen = append(s.seen, 0)
		s.heapIdx = append(s.heapIdx, -1)
		s.levelStamp = append(s.levelStamp, 0)
		s.nVars++
		s.heapInsert(uint32(v))
	}
	if cap(s.trail) < n {
		// Doubling: exact growth made adding variables one at a time
		// quadratic (a copy of the trail per NewVar).
		t := make([]lit, len(s.trail), max(n, 2*cap(s.trail)))
		copy(t, s.trail)
		s.trail = t
	}
}

// NumVars returns the number of variables.
func (s *Solver) NumVars() int { return s.nVars }

// NewVar creates a variable and returns it.
func (s *Solver) NewVar() int32 {
	s.growTo(s.nVars + 1)
	return int32(s.nVars)
}

// SetPhase sets the saved polarity of variable v, used for its next
// decision when the theory has no opinion (and phase saving is on); it is
// overwritten whenever v is unassigned. Like AddClause it first backtracks
// to level 0.
func (s *Solver) SetPhase(v int32, positive bool) {
	s.cancelUntil(0)
	s.modelValid = false
	s.growTo(int(v))
	s.phase[v-1] = positive
}

// SetActivity sets the decision activity of variable v, which orders
// decisions until conflicts bump activities (each bump adds at least 1:
// values below that only break ties among variables no conflict has
// touched). Like AddClause it first backtracks to level 0.
func (s *Solver) SetActivity(v int32, a float64) {
	s.cancelUntil(0)
	s.modelValid = false
	s.growTo(int(v))
	s.act[v-1] = a * s.varInc
	if i := s.heapIdx[v-1]; i >= 0 {
		s.heapUp(int(i))
		s.heapDown(int(s.heapIdx[v-1]))
	}
}

// AddClause adds a clause (a disjunction of literals; variables beyond
// NumVars are created). It may be called between Solve calls; the solver
// first backtracks to level 0. It returns false if the formula has become
// unsatisfiable at level 0 (by this clause or before), or the clause did
// not fit the memory budget (Err says so).
func (s *Solver) AddClause(c []cnf.Lit) bool {
	s.cancelUntil(0)
	s.modelValid = false
	if !s.ok || s.memErr != nil {
		return false
	}
	buf := s.addBuf[:0]
	for _, l := range c {
		p := toLit(l) // panics on 0
		s.growTo(int(l.Var()))
		buf = append(buf, p)
	}
	slices.Sort(buf)
	j := 0
	prev := litUndef
	for _, p := range buf {
		switch {
		case s.vals[p] == valTrue || p == prev^1:
			s.addBuf = buf
			return true // satisfied at level 0, or a tautology
		case s.vals[p] == valFalse || p == prev:
			continue
		}
		buf[j] = p
		j++
		prev = p
	}
	buf = buf[:j]
	s.addBuf = buf
	switch len(buf) {
	case 0:
		s.ok = false
	case 1:
		s.enqueue(buf[0], crefUndef)
		if s.propagate() != crefUndef {
			s.ok = false
		}
	default:
		if !s.reserve(hdrSize + len(buf)) {
			return false
		}
		cr := s.alloc(buf, 0)
		s.clauses = append(s.clauses, cr)
		s.attach(cr)
	}
	return s.ok
}

// Solve decides the clauses added so far (with the theory). It checks ctx
// (its Err) every few hundred conflicts or decisions and returns Unknown
// when it is done.
func (s *Solver) Solve(ctx context.Context) Result { return s.SolveAssuming(ctx, nil) }

// SolveAssuming decides the clauses under the assumption that every literal
// of assumptions is true. After Unsat, FailedAssumptions tells which
// assumptions were needed.
func (s *Solver) SolveAssuming(ctx context.Context, assumptions []cnf.Lit) Result {
	s.cancelUntil(0)
	s.failed = s.failed[:0]
	s.modelValid = false
	if s.memErr != nil {
		return Unknown
	}
	if !s.ok {
		return Unsat
	}
	s.assumptions = s.assumptions[:0]
	for _, l := range assumptions {
		p := toLit(l)
		s.growTo(int(l.Var()))
		s.assumptions = append(s.assumptions, p)
	}
	// Already-true assumptions open empty levels, so there can be more
	// levels than variables.
	for len(s.levelStamp) <= s.nVars+len(s.assumptions) {
		s.levelStamp = append(s.levelStamp, 0)
	}
	s.resetRestarts()
	res := s.search(ctx)
	if res == Sat {
		s.model = s.model[:0]
		for v := 0; v < s.nVars; v++ {
			s.model = append(s.model, s.vals[2*v] == valTrue)
		}
		s.modelValid = true
	} else {
		s.cancelUntil(0)
	}
	return res
}

// search is the CDCL loop.
func (s *Solver) search(ctx context.Context) Result {
	// ctx.Err, not a receive from ctx.Done: a context may know that its
	// deadline has passed before its timer has closed Done.
	poll := ctx.Done() != nil
	startConflicts := s.stats.Conflicts
	for iter := 0; ; iter++ {
		if poll && iter%checkEvery == 0 && ctx.Err() != nil {
			return Unknown
		}
		confl, thConfl := s.propagateAll()
		if s.memErr != nil {
			return Unknown
		}
		if confl != crefUndef || thConfl {
			s.stats.Conflicts++
			lits := s.thBuf
			if !thConfl {
				lits = s.clits(confl)
			}
			maxL := int32(0)
			for _, p := range lits {
				maxL = max(maxL, s.vd[p.v()].level)
			}
			if maxL == 0 {
				s.ok = false
				return Unsat
			}
			trailSize := len(s.trail)
			if int(maxL) < s.decisionLevel() { // a theory clause may lie below the current level
				s.stats.LateConflicts++
				s.cancelUntil(int(maxL))
			}
			bt, lbd := s.analyze(lits, confl)
			if dl := s.decisionLevel(); s.opt.Chrono > 0 && dl-bt > s.opt.Chrono {
				// Chronological backtracking: one level back, the clause's
				// literal at its own level, the decisions between kept.
				s.stats.ChronoBacktracks++
				s.cancelUntil(dl - 1)
			} else {
				s.cancelUntil(bt)
			}
			s.learn(lbd, bt)
			s.decayActivities()
			s.afterConflict(lbd, trailSize)
			if s.opt.ConflictLimit > 0 && s.stats.Conflicts-startConflicts >= s.opt.ConflictLimit {
				return Unknown
			}
			continue
		}
		if s.restartDue() {
			s.restart()
			continue
		}
		if s.decisionLevel() == 0 {
			s.simplify()
		}
		if s.opt.Reduce != ReduceNone && s.stats.Conflicts >= s.nextReduce {
			s.reduceDB()
		}
		next := litUndef
		for s.decisionLevel() < len(s.assumptions) {
			p := s.assumptions[s.decisionLevel()]
			if v := s.vals[p]; v == valTrue {
				s.newDecisionLevel() // already true: a dummy level keeps levels aligned
				continue
			} else if v == valFalse {
				s.analyzeFinal(p)
				return Unsat
			}
			next = p
			break
		}
		if next == litUndef {
			next = s.pickBranch()
			if next == litUndef {
				return Sat
			}
			s.stats.Decisions++
		}
		s.newDecisionLevel()
		s.enqueue(next, crefUndef)
	}
}

// learn adds the clause in s.learnt (asserting literal first) and asserts
// it at level, the backjump level (the current one, or below it after a
// chronological backtrack).
func (s *Solver) learn(lbd, level int) {
	s.stats.Learned++
	if len(s.learnt) == 1 {
		s.enqueueAt(s.learnt[0], crefUndef, 0)
		return
	}
	if !s.reserve(hdrSize + len(s.learnt)) {
		return // Solve returns Unknown before going on
	}
	c := s.alloc(s.learnt, flLearnt)
	s.setLBD(c, lbd)
	s.learnts = append(s.learnts, c)
	s.attach(c)
	s.bumpClause(c)
	s.enqueueAt(s.learnt[0], c, level)
}

// Err returns why the solver stopped short of an answer for good: the
// memory budget's refusal (Options.Fit) of a clause, learnt or original;
// nil otherwise.
func (s *Solver) Err() error { return s.memErr }

// FailedAssumptions returns, after SolveAssuming returned Unsat, a subset of
// the assumptions that is unsatisfiable together with the clauses (and the
// theory). It is empty when the clauses are unsatisfiable on their own.
func (s *Solver) FailedAssumptions() []cnf.Lit { return slices.Clone(s.failed) }

// Value returns the value of variable v in the model found by the last
// Solve call (false when there is none or v is out of range).
func (s *Solver) Value(v int32) bool {
	return s.modelValid && v >= 1 && int(v) <= len(s.model) && s.model[v-1]
}

// Model returns the last model, indexed by variable-1, or nil.
func (s *Solver) Model() []bool {
	if !s.modelValid {
		return nil
	}
	return slices.Clone(s.model)
}

// Stats returns the solver's counters.
func (s *Solver) Stats() Stats {
	st := s.stats
	st.Clauses = len(s.clauses)
	st.LearntClauses = len(s.learnts)
	st.ArenaWords = len(s.arena)
	return st
}
