package cdcl

// The decision heuristic is VSIDS: each variable has an activity, bumped
// when it takes part in conflict analysis (including the literals of theory
// conflict clauses) and decayed geometrically by growing the increment.
// Unassigned variables are kept in a binary max-heap by activity; assigned
// ones are removed lazily when they reach the top.

// heapInsert adds v to the decision heap.
func (s *Solver) heapInsert(v uint32) {
	s.heapIdx[v] = int32(len(s.heap))
	s.heap = append(s.heap, v)
	s.heapUp(len(s.heap) - 1)
}

func (s *Solver) heapUp(i int) {
	h, act := s.heap, s.act
	v := h[i]
	a := act[v]
	for i > 0 {
		p := (i - 1) >> 1
		if act[h[p]] >= a {
			break
		}
		h[i] = h[p]
		s.heapIdx[h[i]] = int32(i)
		i = p
	}
	h[i] = v
	s.heapIdx[v] = int32(i)
}

func (s *Solver) heapDown(i int) {
	h, act := s.heap, s.act
	n := len(h)
	v := h[i]
	a := act[v]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && act[h[c+1]] > act[h[c]] {
			c++
		}
		if act[h[c]] <= a {
			break
		}
		h[i] = h[c]
		s.heapIdx[h[i]] = int32(i)
		i = c
	}
	h[i] = v
	s.heapIdx[v] = int32(i)
}

// heapPop removes and returns the most active variable.
func (s *Solver) heapPop() uint32 {
	h := s.heap
	v := h[0]
	last := h[len(h)-1]
	s.heap = h[:len(h)-1]
	s.heapIdx[v] = -1
	if len(s.heap) > 0 {
		s.heap[0] = last
		s.heapIdx[last] = 0
		s.heapDown(0)
	}
	return v
}

// bumpVar increases v's activity, rescaling all activities when they grow
// too large.
func (s *Solver) bumpVar(v uint32) {
	s.act[v] += s.varInc
	if s.act[v] > 1e100 {
		for i := range s.act {
			s.act[i] *= 1e-100
		}
		s.varInc *= 1e-100
	}
	if i := s.heapIdx[v]; i >= 0 {
		s.heapUp(int(i))
	}
}

// decayActivities ages all variable and clause activities by growing the
// increments. The variable decay starts low (fast adaptation) and ramps up
// to Options.VarDecay, as in Glucose.
func (s *Solver) decayActivities() {
	if s.varDecay < s.opt.VarDecay && s.stats.Conflicts%5000 == 0 {
		s.varDecay += 0.01
		if s.varDecay > s.opt.VarDecay {
			s.varDecay = s.opt.VarDecay
		}
	}
	s.varInc /= s.varDecay
	s.claInc /= float32(s.opt.ClauseDecay)
}

// pickBranch chooses the next decision literal, or litUndef when every
// variable is assigned.
func (s *Solver) pickBranch() lit {
	v := ^uint32(0)
	if s.opt.RandomVarFreq > 0 && len(s.heap) > 0 && s.randFloat() < s.opt.RandomVarFreq {
		if w := s.heap[s.randIntn(len(s.heap))]; s.vals[2*w] == valUndef {
			v = w
			s.stats.RandomDecisions++
		}
	}
	for v == ^uint32(0) {
		if len(s.heap) == 0 {
			return litUndef
		}
		if w := s.heapPop(); s.vals[2*w] == valUndef {
			v = w
		}
	}
	pos := false
	ok := false
	if s.th != nil && !s.opt.NoTheoryPhase {
		pos, ok = s.th.Phase(int32(v) + 1)
	}
	if !ok && !s.opt.NoPhaseSaving {
		pos = s.phase[v]
	}
	if pos {
		return lit(2 * v)
	}
	return lit(2*v + 1)
}

// rand returns the next value of a xorshift64* generator.
func (s *Solver) rand() uint64 {
	s.rng ^= s.rng >> 12
	s.rng ^= s.rng << 25
	s.rng ^= s.rng >> 27
	return s.rng * 2685821657736338717
}

func (s *Solver) randFloat() float64 { return float64(s.rand()>>11) / (1 << 53) }

func (s *Solver) randIntn(n int) int { return int(s.rand() % uint64(n)) }
