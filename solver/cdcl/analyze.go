package cdcl

// analyze derives the first-UIP clause from a conflicting clause whose
// literals are all false and at least one of which is at the current
// decision level. confl is the clause's literals; c is its reference, or
// crefUndef for a clause that is not in the database (a theory conflict).
// The learnt clause is left in s.learnt with the asserting literal first
// and a literal of the backjump level second; analyze returns the backjump
// level and the clause's LBD.
func (s *Solver) analyze(confl []lit, c cref) (btLevel int, lbd int) {
	s.learnt = append(s.learnt[:0], litUndef)
	dl := int32(s.decisionLevel())
	pathC := 0
	p := litUndef
	pv := ^uint32(0)
	index := len(s.trail) - 1
	for {
		if c != crefUndef && s.isLearnt(c) {
			s.bumpClause(c)
			s.setFlag(c, flUsed)
			if old := s.lbd(c); old > 2 {
				if n := s.computeLBD(confl); n+1 < old {
					s.setLBD(c, n)
				}
			}
		}
		for _, q := range confl {
			v := q.v()
			if v == pv || s.seen[v] != 0 {
				continue
			}
			lv := s.vd[v].level
			if lv == 0 {
				continue
			}
			s.bumpVar(v)
			s.seen[v] = 1
			if lv >= dl {
				pathC++
			} else {
				s.learnt = append(s.learnt, q)
			}
		}
		// The next literal of this level on the trail (a learnt
		// clause's literal of a lower level may sit above it).
		for s.seen[s.trail[index].v()] == 0 || s.vd[s.trail[index].v()].level < dl {
			index--
		}
		p = s.trail[index]
		index--
		pv = p.v()
		s.seen[pv] = 0
		pathC--
		if pathC <= 0 {
			break
		}
		c = s.vd[pv].reason
		confl = s.clits(c)
	}
	s.learnt[0] = p ^ 1
	s.stats.LearnedLits += int64(len(s.learnt))

	// Recursive minimisation: drop literals implied by the others.
	s.toClear = append(s.toClear[:0], s.learnt...)
	if !s.opt.NoMinimize {
		var abstract uint32
		for _, q := range s.learnt[1:] {
			abstract |= s.abstractLevel(q.v())
		}
		j := 1
		for _, q := range s.learnt[1:] {
			if s.vd[q.v()].reason == crefUndef || !s.redundant(q, abstract) {
				s.learnt[j] = q
				j++
			}
		}
		s.stats.MinimizedLits += int64(len(s.learnt) - j)
		s.learnt = s.learnt[:j]
	}
	for _, q := range s.toClear {
		s.seen[q.v()] = 0
	}

	// Put a literal of the highest remaining level second.
	if len(s.learnt) > 1 {
		mi := 1
		for i := 2; i < len(s.learnt); i++ {
			if s.vd[s.learnt[i].v()].level > s.vd[s.learnt[mi].v()].level {
				mi = i
			}
		}
		s.learnt[1], s.learnt[mi] = s.learnt[mi], s.learnt[1]
		btLevel = int(s.vd[s.learnt[1].v()].level)
	}
	return btLevel, s.computeLBD(s.learnt)
}

func (s *Solver) abstractLevel(v uint32) uint32 { return 1 << (uint32(s.vd[v].level) & 31) }

// redundant reports whether p (a literal of the learnt clause, seen) is
// implied by the other literals of the clause, following reasons
// depth-first. Literals proved redundant stay marked seen (and are recorded
// in toClear) so later queries reuse the work; a failed query unmarks what it
// marked.
func (s *Solver) redundant(p lit, abstract uint32) bool {
	s.stack = append(s.stack[:0], p)
	top := len(s.toClear)
	for len(s.stack) > 0 {
		q := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		qv := q.v()
		for _, r := range s.clits(s.vd[qv].reason) {
			v := r.v()
			if v == qv || s.seen[v] != 0 || s.vd[v].level == 0 {
				continue
			}
			if s.vd[v].reason != crefUndef && s.abstractLevel(v)&abstract != 0 {
				s.seen[v] = 1
				s.stack = append(s.stack, r)
				s.toClear = append(s.toClear, r)
				continue
			}
			for _, t := range s.toClear[top:] {
				s.seen[t.v()] = 0
			}
			s.toClear = s.toClear[:top]
			return false
		}
	}
	return true
}

// computeLBD counts the distinct decision levels of the literals.
func (s *Solver) computeLBD(lits []lit) int {
	s.lbdStamp++
	if s.lbdStamp == 0 { // wrapped: reset the stamps
		clear(s.levelStamp)
		s.lbdStamp = 1
	}
	n := 0
	for _, q := range lits {
		lv := s.vd[q.v()].level
		if s.levelStamp[lv] != s.lbdStamp {
			s.levelStamp[lv] = s.lbdStamp
			n++
		}
	}
	return n
}

// analyzeFinal computes, for an assumption p that is false, the subset of
// the assumptions that implies ¬p, and stores it (with p) in s.failed as
// public literals. All decisions on the trail are assumptions when it is
// called.
func (s *Solver) analyzeFinal(p lit) {
	s.failed = append(s.failed[:0], p.ext())
	if s.decisionLevel() == 0 {
		return
	}
	s.seen[p.v()] = 1
	for i := len(s.trail) - 1; i >= int(s.trailLim[0]); i-- {
		q := s.trail[i]
		v := q.v()
		if s.seen[v] == 0 {
			continue
		}
		if r := s.vd[v].reason; r == crefUndef {
			s.failed = append(s.failed, q.ext())
		} else {
			for _, t := range s.clits(r) {
				if t.v() != v && s.vd[t.v()].level > 0 {
					s.seen[t.v()] = 1
				}
			}
		}
		s.seen[v] = 0
	}
	s.seen[p.v()] = 0
}
