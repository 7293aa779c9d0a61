package cdcl

import (
	"fmt"
	"math"
	"slices"
)

// cref is a clause reference: the offset of the clause header in the arena.
type cref = uint32

const crefUndef cref = ^cref(0)

// Clause layout in the arena (all words are lits, reinterpreted):
//
//	c+0  size (number of literals)
//	c+1  flags in the low byte, LBD above
//	c+2  activity (float32 bits) for learnt clauses; forwarding address
//	     while the arena is being compacted
//	c+3… the literals; for long clauses lits[0] and lits[1] are watched,
//	     and a clause that is the reason of a literal has it at lits[0]
//	     (binary reasons may have it at either position).
const hdrSize = 3

const (
	flLearnt  = 1 << 0 // learnt (reducible unless binary or glue)
	flDeleted = 1 << 1 // deleted; space is reclaimed by compaction
	flUsed    = 1 << 2 // took part in conflict analysis since the last reduction
	flTemp    = 1 << 3 // reason clause of a theory propagation, freed on backtrack
	flReloc   = 1 << 4 // moved during compaction; c+2 holds the new address

	lbdShift = 8
	maxLBD   = 1<<24 - 1
)

// reserve makes room in the arena for words more words. The arena grows as
// append would (by a quarter when large), but only when Options.Fit allows
// the new arena, allocated while the old one is live, and the growth of the
// watch and clause lists that comes with the clauses it holds. It returns
// false, with s.memErr set, on a refusal.
func (s *Solver) reserve(words int) bool {
	if len(s.arena)+words <= cap(s.arena) {
		return true
	}
	if s.memErr != nil {
		return false
	}
	n := cap(s.arena)
	switch {
	case n < 1<<16:
		n = max(2*n, 1<<10)
	default:
		n += n / 4
	}
	return s.growArena(max(n, len(s.arena)+words))
}

// Grow makes room for clauses more clauses with lits literals in all, as
// AddClause will store them, in one allocation (no copy of the arena as it
// grows, no slack): for callers that know their CNF. It returns false, with
// Err set, when Options.Fit refuses.
func (s *Solver) Grow(clauses, lits int) bool {
	if s.memErr != nil {
		return false
	}
	if n := len(s.arena) + clauses*hdrSize + lits; n > cap(s.arena) && !s.growArena(n) {
		return false
	}
	if n := len(s.clauses) + clauses; n > cap(s.clauses) {
		s.clauses = slices.Grow(s.clauses, n-len(s.clauses))
	}
	return true
}

// growArena moves the arena to one of capacity n words, if Options.Fit
// allows it.
func (s *Solver) growArena(n int) bool {
	if s.opt.Fit != nil {
		if err := s.opt.Fit(s.growBytes(n), fmt.Sprintf("the solver's clause database (%d clauses, %d learnt, %d variables)", len(s.clauses), len(s.learnts), s.nVars)); err != nil {
			s.memErr = err
			return false
		}
	}
	a := make([]lit, len(s.arena), n)
	// In pieces: one copy of a large arena cannot be preempted, and a
	// collection that must stop the world would wait for it, and with it
	// the goroutine that honours a deadline.
	const piece = 1 << 18
	for i := 0; i < len(a); i += piece {
		copy(a[i:min(i+piece, len(a))], s.arena[i:])
	}
	s.arena = a
	return true
}

// growBytes estimates what moving the arena to n words allocates: the new
// arena (4 bytes a word) and, for the clauses the added words will hold,
// two watchers of 8 bytes each and a clause reference of 4 (doubled: the
// lists grow by append), the average clause taken from the arena so far
// (a binary clause, 5 words, at first).
func (s *Solver) growBytes(n int) int64 {
	avg := int64(hdrSize + 2)
	if k := len(s.clauses) + len(s.learnts); k > 0 && len(s.arena) > 0 {
		avg = max(int64(len(s.arena))/int64(k), hdrSize+1)
	}
	added := int64(n - len(s.arena))
	return 4*int64(n) + added/avg*2*(2*8+4)
}

// alloc appends a clause to the arena and returns its reference; reserve
// first makes room for it (an alloc past the capacity grows the arena
// unchecked).
func (s *Solver) alloc(lits []lit, flags uint32) cref {
	n := len(s.arena)
	if uint64(n)+uint64(len(lits))+hdrSize >= uint64(binFlag) {
		panic("cdcl: clause arena exceeds 2^31 words")
	}
	s.arena = append(s.arena, lit(len(lits)), lit(flags), 0)
	s.arena = append(s.arena, lits...)
	return cref(n)
}

func (s *Solver) csize(c cref) int         { return int(s.arena[c]) }
func (s *Solver) cflags(c cref) uint32     { return uint32(s.arena[c+1]) & 0xff }
func (s *Solver) setFlag(c cref, f uint32) { s.arena[c+1] |= lit(f) }
func (s *Solver) clrFlag(c cref, f uint32) { s.arena[c+1] &^= lit(f) }
func (s *Solver) isLearnt(c cref) bool     { return s.arena[c+1]&flLearnt != 0 }
func (s *Solver) deleted(c cref) bool      { return s.arena[c+1]&flDeleted != 0 }
func (s *Solver) lbd(c cref) int           { return int(uint32(s.arena[c+1]) >> lbdShift) }

func (s *Solver) setLBD(c cref, lbd int) {
	if lbd > maxLBD {
		lbd = maxLBD
	}
	s.arena[c+1] = s.arena[c+1]&0xff | lit(uint32(lbd)<<lbdShift)
}

func (s *Solver) activity(c cref) float32 { return math.Float32frombits(uint32(s.arena[c+2])) }
func (s *Solver) setActivity(c cref, a float32) {
	s.arena[c+2] = lit(math.Float32bits(a))
}

// clits returns the literals of c as a slice of the arena (valid until the
// next allocation).
func (s *Solver) clits(c cref) []lit {
	return s.arena[c+hdrSize : c+hdrSize+cref(s.arena[c])]
}

// free marks c deleted. Watches must be cleaned by the caller (cleanWatches).
func (s *Solver) free(c cref) {
	s.setFlag(c, flDeleted)
	s.wasted += hdrSize + s.csize(c)
}

// locked reports whether c is the reason of a currently assigned literal.
func (s *Solver) locked(c cref) bool {
	lits := s.clits(c)
	for i := 0; i < 2 && i < len(lits); i++ {
		p := lits[i]
		if s.vals[p] == valTrue && s.vd[p.v()].reason == c {
			return true
		}
	}
	return false
}

// bumpClause increases the activity of a learnt clause.
func (s *Solver) bumpClause(c cref) {
	a := s.activity(c) + s.claInc
	s.setActivity(c, a)
	if a > 1e20 {
		for _, d := range s.learnts {
			s.setActivity(d, s.activity(d)*1e-20)
		}
		s.claInc *= 1e-20
	}
}

// maybeCompact compacts the arena when more than a fifth of it is garbage
// and the memory budget (Options.Fit) allows the new arena.
func (s *Solver) maybeCompact() {
	if s.wasted > len(s.arena)/5 && s.wasted > s.compactMin {
		if s.opt.Fit != nil && s.opt.Fit(4*int64(s.compactSize()), "the solver's clause database (compaction)") != nil {
			return
		}
		s.compact()
	}
}

// compactSize is the capacity of a compacted arena, in words.
func (s *Solver) compactSize() int { return len(s.arena) - s.wasted + len(s.arena)/8 }

// compact copies every live clause into a fresh arena and rewrites every
// reference: watch lists, reasons of assigned variables, the clause lists
// and the theory reason stack.
func (s *Solver) compact() {
	old := s.arena
	s.arena = make([]lit, 0, s.compactSize())
	move := func(c cref) cref {
		if uint32(old[c+1])&flReloc != 0 {
			return cref(old[c+2])
		}
		n := s.alloc(old[c+hdrSize:c+hdrSize+cref(old[c])], uint32(old[c+1])&^flReloc)
		s.arena[n+2] = old[c+2]
		old[c+1] |= flReloc
		old[c+2] = lit(n)
		return n
	}
	// Reasons first, so that clauses keep the order in which they were
	// learnt where possible (locality of the watch lists matters little).
	for _, p := range s.trail {
		vd := &s.vd[p.v()]
		if vd.reason != crefUndef {
			if uint32(old[vd.reason+1])&flDeleted != 0 {
				vd.reason = crefUndef // removed by simplification at level 0
				continue
			}
			vd.reason = move(vd.reason)
		}
	}
	for i := range s.temps {
		s.temps[i].c = move(s.temps[i].c)
	}
	for _, list := range []*[]cref{&s.clauses, &s.learnts} {
		j := 0
		for _, c := range *list {
			if uint32(old[c+1])&flDeleted == 0 {
				(*list)[j] = move(c)
				j++
			}
		}
		*list = (*list)[:j]
	}
	for l, ws := range s.watches {
		j := 0
		for _, w := range ws {
			c := w.c &^ binFlag
			if uint32(old[c+1])&flDeleted == 0 {
				w.c = move(c) | w.c&binFlag
				ws[j] = w
				j++
			}
		}
		s.watches[l] = ws[:j]
	}
	s.wasted = 0
	s.stats.Compactions++
}
