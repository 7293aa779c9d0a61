package cdcl

// watcher is an entry of a long clause's watch list: the clause and a
// blocker literal of it; when the blocker is true the clause is satisfied
// and need not be visited.
type watcher struct {
	c       cref
	blocker lit
}

// binWatcher is an entry of a binary clause's watch list: the other literal
// (implied when the watched one becomes false) and the clause, kept as the
// reason for analysis.
type binWatcher struct {
	other lit
	c     cref
}

// attach registers c in the watch lists of its first two literals.
// watches[p] and bins[p] hold the clauses to visit when p becomes false.
func (s *Solver) attach(c cref) {
	lits := s.clits(c)
	if len(lits) == 2 {
		s.bins[lits[0]] = append(s.bins[lits[0]], binWatcher{lits[1], c})
		s.bins[lits[1]] = append(s.bins[lits[1]], binWatcher{lits[0], c})
		return
	}
	s.watches[lits[0]] = append(s.watches[lits[0]], watcher{c, lits[1]})
	s.watches[lits[1]] = append(s.watches[lits[1]], watcher{c, lits[0]})
}

// cleanWatches drops deleted clauses from every watch list. With bins
// false only the long-clause lists are visited (binary clauses are never
// deleted by reduction).
func (s *Solver) cleanWatches(bins bool) {
	for l, ws := range s.watches {
		j := 0
		for _, w := range ws {
			if !s.deleted(w.c) {
				ws[j] = w
				j++
			}
		}
		s.watches[l] = ws[:j]
	}
	if !bins {
		return
	}
	for l, bs := range s.bins {
		j := 0
		for _, b := range bs {
			if !s.deleted(b.c) {
				bs[j] = b
				j++
			}
		}
		s.bins[l] = bs[:j]
	}
}
