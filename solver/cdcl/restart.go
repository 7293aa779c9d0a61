package cdcl

import (
	"cmp"
	"math"
	"slices"
)

// RestartPolicy selects when the search restarts.
type RestartPolicy int

const (
	// RestartGlucose restarts when the LBD of recent learnt clauses (a
	// window of 50) is much worse than the average so far, and blocks
	// restarts when the trail is unusually long (the solver may be close to
	// a model), as in Glucose.
	RestartGlucose RestartPolicy = iota
	// RestartLuby restarts after Luby-sequence multiples of LubyUnit
	// conflicts, as in MiniSat.
	RestartLuby
	// RestartNone never restarts.
	RestartNone
)

// ReducePolicy selects which learnt clauses are deleted periodically.
type ReducePolicy int

const (
	// ReduceLBD keeps glue clauses (LBD ≤ 2) forever and deletes half of
	// the others, worst LBD first, sparing clauses used since the last
	// reduction once.
	ReduceLBD ReducePolicy = iota
	// ReduceActivity deletes the half of the learnt clauses with the lowest
	// activity, as in MiniSat.
	ReduceActivity
	// ReduceNone keeps every learnt clause.
	ReduceNone
)

const (
	glucoseWindow   = 50      // LBD window of the restart test
	glucoseK        = 0.8     // restart when window average * K > global average
	glucoseTrailWin = 5000    // trail-length window of the blocking test
	glucoseR        = 1.4     // block when trail > R * recent average trail
	blockMinConfl   = 10000   // no blocking before this many conflicts
	firstReduce     = 2000    // conflicts before the first reduction
	reduceInc       = 300     // growth of the reduction interval
	lubyDefaultUnit = 100     // conflicts per Luby unit
	varDecayStart   = 0.8     // initial VSIDS decay (ramps up to VarDecay)
	defaultVarDecay = 0.95    // final VSIDS decay
	defaultClaDecay = 0.999   // clause activity decay
	checkEvery      = 1 << 9  // search iterations between context checks
	compactMinWaste = 1 << 14 // least garbage (words) worth a compaction
)

// ring is a fixed-size window with a running sum.
type ring struct {
	buf  []int
	head int
	n    int
	sum  int64
}

func newRing(size int) ring { return ring{buf: make([]int, size)} }

func (r *ring) push(x int) {
	if r.n == len(r.buf) {
		r.sum -= int64(r.buf[r.head])
	} else {
		r.n++
	}
	r.buf[r.head] = x
	r.sum += int64(x)
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
}

func (r *ring) full() bool   { return r.n == len(r.buf) }
func (r *ring) avg() float64 { return float64(r.sum) / float64(r.n) }
func (r *ring) reset()       { r.head, r.n, r.sum = 0, 0, 0 }

func luby(y float64, x int) float64 {
	size, seq := 1, 0
	for size < x+1 {
		seq++
		size = 2*size + 1
	}
	for size-1 != x {
		size = (size - 1) >> 1
		seq--
		x %= size
	}
	return math.Pow(y, float64(seq))
}

// resetRestarts starts the restart schedule afresh (at each Solve call).
func (s *Solver) resetRestarts() {
	s.conflictsSinceRestart = 0
	s.lubyIdx = 0
	s.lubyLimit = int64(luby(2, 0) * float64(s.opt.LubyUnit))
	s.lbdWin.reset()
	s.trailWin.reset()
}

// afterConflict records a conflict's LBD and trail size for the restart
// policy.
func (s *Solver) afterConflict(lbd, trailSize int) {
	s.conflictsSinceRestart++
	if s.opt.Restarts != RestartGlucose {
		return
	}
	s.lbdSum += int64(lbd)
	s.lbdCount++
	s.trailWin.push(trailSize)
	if s.stats.Conflicts > blockMinConfl && s.lbdWin.full() && s.trailWin.full() &&
		float64(trailSize) > glucoseR*s.trailWin.avg() {
		s.lbdWin.reset()
		s.stats.BlockedRestarts++
	}
	s.lbdWin.push(lbd)
}

// restartDue reports whether the policy wants a restart now.
func (s *Solver) restartDue() bool {
	switch s.opt.Restarts {
	case RestartGlucose:
		return s.lbdWin.full() &&
			s.lbdWin.avg()*glucoseK > float64(s.lbdSum)/float64(s.lbdCount)
	case RestartLuby:
		return s.conflictsSinceRestart >= s.lubyLimit
	}
	return false
}

// restart backtracks and advances the schedule. Unless NoReuseTrail is set
// it keeps the decision levels that the heuristic would redo anyway (every
// decision more active than the next decision variable: "reusing the
// trail", van der Tak, Ramos and Heule 2011), which spares the theory from
// undoing and redoing them. Assumption levels are kept too: they would be
// re-decided first.
func (s *Solver) restart() {
	s.stats.Restarts++
	s.conflictsSinceRestart = 0
	s.lbdWin.reset()
	if s.opt.Restarts == RestartLuby {
		s.lubyIdx++
		s.lubyLimit = int64(luby(2, s.lubyIdx) * float64(s.opt.LubyUnit))
	}
	s.cancelUntil(s.restartLevel())
}

// restartLevel is the level a restart backtracks to.
func (s *Solver) restartLevel() int {
	dl := s.decisionLevel()
	if s.opt.NoReuseTrail {
		return 0
	}
	for len(s.heap) > 0 && s.vals[2*s.heap[0]] != valUndef {
		s.heapPop() // assigned: it returns to the heap when unassigned
	}
	if len(s.heap) == 0 {
		return dl
	}
	next := s.act[s.heap[0]]
	level := min(len(s.assumptions), dl)
	for level < dl && s.act[s.trail[s.trailLim[level]].v()] > next {
		level++
	}
	if level > 0 {
		s.stats.ReusedRestarts++
	}
	return level
}

// reduceDB deletes about half of the reducible learnt clauses (not binary,
// not a reason, and for ReduceLBD not glue), then cleans the watch lists and
// compacts the arena if it has become sparse.
func (s *Solver) reduceDB() {
	s.stats.Reductions++
	s.reduceInterval += reduceInc
	s.nextReduce = s.stats.Conflicts + s.reduceInterval

	cand := s.reduceBuf[:0]
	for _, c := range s.learnts {
		if s.csize(c) > 2 && !s.locked(c) {
			cand = append(cand, c)
		}
	}
	switch s.opt.Reduce {
	case ReduceLBD:
		// Worst first: high LBD, then low activity.
		slices.SortFunc(cand, func(a, b cref) int {
			if la, lb := s.lbd(a), s.lbd(b); la != lb {
				return lb - la
			}
			return cmp.Compare(s.activity(a), s.activity(b))
		})
	default:
		slices.SortFunc(cand, func(a, b cref) int {
			return cmp.Compare(s.activity(a), s.activity(b))
		})
	}
	target := len(s.learnts) / 2
	removed := 0
	for _, c := range cand {
		if removed >= target {
			break
		}
		if s.opt.Reduce == ReduceLBD {
			if s.lbd(c) <= 2 {
				break // sorted: only glue clauses remain
			}
			if s.cflags(c)&flUsed != 0 {
				s.clrFlag(c, flUsed)
				continue
			}
		}
		s.free(c)
		removed++
	}
	s.reduceBuf = cand[:0]
	s.stats.Deleted += int64(removed)
	j := 0
	for _, c := range s.learnts {
		if !s.deleted(c) {
			s.learnts[j] = c
			j++
		}
	}
	s.learnts = s.learnts[:j]
	s.cleanWatches()
	s.maybeCompact()
}

// simplify removes clauses satisfied at level 0. It runs at level 0 after a
// propagation fixpoint, when new level-0 literals have appeared.
func (s *Solver) simplify() {
	if len(s.trail) == s.simpAssigns {
		return
	}
	s.simpAssigns = len(s.trail)
	removed := false
	for _, list := range []*[]cref{&s.clauses, &s.learnts} {
		j := 0
		for _, c := range *list {
			if s.satisfied(c) {
				if s.locked(c) {
					for _, p := range s.clits(c)[:2] {
						if s.vd[p.v()].reason == c {
							s.vd[p.v()].reason = crefUndef
						}
					}
				}
				s.free(c)
				removed = true
				continue
			}
			(*list)[j] = c
			j++
		}
		*list = (*list)[:j]
	}
	if removed {
		s.cleanWatches()
		s.maybeCompact()
	}
}

func (s *Solver) satisfied(c cref) bool {
	for _, p := range s.clits(c) {
		if s.vals[p] == valTrue {
			return true
		}
	}
	return false
}
