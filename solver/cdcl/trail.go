package cdcl

// varData is what the solver knows about an assigned variable.
type varData struct {
	reason cref  // clause that implied it, crefUndef for decisions and units
	level  int32 // decision level of the assignment
}

// tempReason records the reason clause of a theory propagation, to be freed
// when the literal at trail position pos is unassigned.
type tempReason struct {
	c   cref
	pos int32
}

func (s *Solver) decisionLevel() int { return len(s.trailLim) }

func (s *Solver) newDecisionLevel() { s.trailLim = append(s.trailLim, int32(len(s.trail))) }

// enqueue makes p true with the given reason at the current level.
func (s *Solver) enqueue(p lit, from cref) {
	s.enqueueAt(p, from, len(s.trailLim))
}

// enqueueAt makes p true with the given reason at the given level, at
// most the current one.
func (s *Solver) enqueueAt(p lit, from cref, level int) {
	s.vals[p] = valTrue
	s.vals[p^1] = valFalse
	s.vd[p>>1] = varData{from, int32(level)}
	s.trail = append(s.trail, p)
}

// cancelUntil backtracks to the given level: unassigns every literal above
// it, in reverse trail order, telling the theory about exactly those
// literals it has been told were assigned (a LIFO suffix of its Assigns),
// saves phases and puts variables back in the decision heap. A literal of
// the given level or below that sits above the level's end on the trail
// (chronological backtracking assigns a learnt clause's literal at its own
// level above later levels) stays assigned, moved down in trail order,
// with its theory reason; the theory is told about it again.
func (s *Solver) cancelUntil(level int) {
	if s.decisionLevel() <= level {
		return
	}
	lim := int(s.trailLim[level])
	kept := false
	for i := len(s.trail) - 1; i >= lim; i-- {
		p := s.trail[i]
		if i < s.thead {
			s.th.Unassign(p.ext())
		}
		v := p.v()
		if int(s.vd[v].level) <= level {
			kept = true
			continue
		}
		s.vals[p] = valUndef
		s.vals[p^1] = valUndef
		s.phase[v] = p&1 == 0
		if s.heapIdx[v] < 0 {
			s.heapInsert(v)
		}
	}
	if !kept {
		for len(s.temps) > 0 && int(s.temps[len(s.temps)-1].pos) >= lim {
			s.free(s.temps[len(s.temps)-1].c)
			s.temps = s.temps[:len(s.temps)-1]
		}
		s.trail = s.trail[:lim]
	} else {
		s.keepBelow(level, lim)
	}
	s.trailLim = s.trailLim[:level]
	s.qhead = lim
	if s.thead > lim {
		s.thead = lim
	}
}

// keepBelow moves the literals of level at most level from trail[lim:]
// down to lim, in order, with the theory reasons they have (freeing the
// others').
func (s *Solver) keepBelow(level, lim int) {
	tk := len(s.temps)
	for tk > 0 && int(s.temps[tk-1].pos) >= lim {
		tk--
	}
	ti, tw, w := tk, tk, lim
	for i := lim; i < len(s.trail); i++ {
		p := s.trail[i]
		keep := int(s.vd[p.v()].level) <= level
		for ti < len(s.temps) && int(s.temps[ti].pos) == i {
			if keep {
				s.temps[tw] = tempReason{s.temps[ti].c, int32(w)}
				tw++
			} else {
				s.free(s.temps[ti].c)
			}
			ti++
		}
		if keep {
			s.trail[w] = p
			w++
		}
	}
	s.temps = s.temps[:tw]
	s.trail = s.trail[:w]
}
