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
	s.vals[p] = valTrue
	s.vals[p^1] = valFalse
	s.vd[p>>1] = varData{from, int32(len(s.trailLim))}
	s.trail = append(s.trail, p)
}

// cancelUntil backtracks to the given level: unassigns every literal above
// it, in reverse trail order, telling the theory about exactly those
// literals it has been told were assigned (a LIFO suffix of its Assigns),
// saves phases and puts variables back in the decision heap.
func (s *Solver) cancelUntil(level int) {
	if s.decisionLevel() <= level {
		return
	}
	lim := int(s.trailLim[level])
	for i := len(s.trail) - 1; i >= lim; i-- {
		p := s.trail[i]
		if i < s.thead {
			s.th.Unassign(p.ext())
		}
		s.vals[p] = valUndef
		s.vals[p^1] = valUndef
		v := p.v()
		s.phase[v] = p&1 == 0
		if s.heapIdx[v] < 0 {
			s.heapInsert(v)
		}
	}
	for len(s.temps) > 0 && int(s.temps[len(s.temps)-1].pos) >= lim {
		s.free(s.temps[len(s.temps)-1].c)
		s.temps = s.temps[:len(s.temps)-1]
	}
	s.trail = s.trail[:lim]
	s.trailLim = s.trailLim[:level]
	s.qhead = lim
	if s.thead > lim {
		s.thead = lim
	}
}
