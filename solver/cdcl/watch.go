package cdcl

// watcher is an entry of a watch list. For a long clause, c is the clause
// and blocker one of its literals (when the blocker is true the clause is
// satisfied and is not visited). For a binary clause, c carries binFlag and
// blocker is the other literal, so propagation never touches the clause.
type watcher struct {
	c       cref
	blocker lit
}

// binFlag marks binary-clause watchers (clause references stay below 2^31).
const binFlag cref = 1 << 31

// attach registers c in the watch lists of its first two literals.
// watches[p] holds the clauses to visit when p becomes false.
func (s *Solver) attach(c cref) {
	lits := s.clits(c)
	wc := c
	if len(lits) == 2 {
		wc |= binFlag
	}
	s.watches[lits[0]] = append(s.watches[lits[0]], watcher{wc, lits[1]})
	s.watches[lits[1]] = append(s.watches[lits[1]], watcher{wc, lits[0]})
}

// cleanWatches drops deleted clauses from every watch list.
func (s *Solver) cleanWatches() {
	for l, ws := range s.watches {
		j := 0
		for _, w := range ws {
			if !s.deleted(w.c &^ binFlag) {
				ws[j] = w
				j++
			}
		}
		s.watches[l] = ws[:j]
	}
}
