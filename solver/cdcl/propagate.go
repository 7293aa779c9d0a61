package cdcl

// propagate runs unit propagation over the unprocessed part of the trail.
// It returns a conflicting clause, or crefUndef at a fixpoint. It does not
// allocate except when a watch list outgrows its capacity.
func (s *Solver) propagate() cref {
	vals := s.vals
	arena := s.arena
	watches := s.watches
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead]
		s.qhead++
		s.stats.Propagations++
		fl := p ^ 1 // the literal that just became false

		ws := watches[fl]
		i, j, n := 0, 0, len(ws)
	next:
		for i < n {
			w := ws[i]
			i++
			bv := vals[w.blocker]
			if bv == valTrue {
				ws[j] = w
				j++
				continue
			}
			if w.c&binFlag != 0 {
				ws[j] = w
				j++
				if bv == valUndef {
					s.enqueue(w.blocker, w.c&^binFlag)
					continue
				}
				c := w.c &^ binFlag
				for i < n {
					ws[j] = ws[i]
					i++
					j++
				}
				watches[fl] = ws[:j]
				s.qhead = len(s.trail)
				return c
			}
			c := w.c
			size := cref(arena[c])
			lits := arena[c+hdrSize : c+hdrSize+size]
			if lits[0] == fl {
				lits[0], lits[1] = lits[1], fl
			}
			first := lits[0]
			nw := watcher{c, first}
			if first != w.blocker && vals[first] == valTrue {
				ws[j] = nw
				j++
				continue
			}
			for k := 2; k < len(lits); k++ {
				if q := lits[k]; vals[q] != valFalse {
					lits[1], lits[k] = q, fl
					watches[q] = append(watches[q], nw)
					continue next
				}
			}
			// No new watch: the clause is unit or conflicting.
			ws[j] = nw
			j++
			if vals[first] == valFalse {
				for i < n {
					ws[j] = ws[i]
					i++
					j++
				}
				watches[fl] = ws[:j]
				s.qhead = len(s.trail)
				return c
			}
			s.enqueue(first, c)
		}
		watches[fl] = ws[:j]
	}
	return crefUndef
}

// propagateAll alternates unit propagation and the theory until both are at
// a fixpoint. It returns a conflicting clause (confl), or thConfl=true when
// the theory reported a conflict, whose literals are then in s.thBuf.
func (s *Solver) propagateAll() (confl cref, thConfl bool) {
	for {
		if confl = s.propagate(); confl != crefUndef || s.th == nil {
			return confl, false
		}
		for s.thead < len(s.trail) {
			p := s.trail[s.thead]
			s.thead++ // counted as seen by the theory even if it conflicts
			s.stats.TheoryAssigns++
			if cl := s.th.Assign(p.ext()); cl != nil {
				s.loadTheoryClause(cl, false)
				s.stats.TheoryConflicts++
				return crefUndef, true
			}
		}
		if s.thp == nil {
			return crefUndef, false
		}
		cl := s.thp.Propagate()
		if cl == nil {
			return crefUndef, false
		}
		s.loadTheoryClause(cl, true)
		first := s.thBuf[0]
		switch s.vals[first] {
		case valTrue:
			// Already implied; nothing to do.
		case valFalse:
			s.stats.TheoryConflicts++
			return crefUndef, true
		default:
			if !s.reserve(hdrSize + len(s.thBuf)) {
				return crefUndef, false // search stops: s.memErr
			}
			c := s.alloc(s.thBuf, flTemp)
			s.temps = append(s.temps, tempReason{c, int32(len(s.trail))})
			s.enqueue(first, c)
			s.stats.TheoryPropagations++
		}
	}
}
