package execoracle

import (
	"fmt"
	"slices"
	"strings"
)

// chainOptions enumerates the chains V(α1) ⊆ V(α2) ⊆ ... of t's store
// reads (each inside the placed transactions) and returns VIS = base ∪ last
// set for each, with the chain. With rr (t at RR) every read must also pass
// itemOK, VIS is every placed transaction, and one chain is enough.
//
// A predicate read observes each of its keys with a set of its own, each
// containing the previous read's; its V(α), which the next read's
// contains, is their union. A key's set is taken minimal: the previous
// set, or it plus one writer of the key AR-after the previous set's latest
// one; any larger set with the same latest writer only grows the union,
// which can only constrain the later reads and VIS(T).
func (s *search) chainOptions(t int, base uint32, rr bool) []option {
	p := s.p
	reads := p.reads[t]
	var found []option
	seen := map[uint32]bool{}
	chain := make([]uint32, len(reads))
	var walk func(i int, prev uint32) bool
	walk = func(i int, prev uint32) bool {
		if i == len(reads) {
			v := base | prev
			if rr {
				v = s.placed
			}
			if !seen[v] {
				seen[v] = true
				found = append(found, option{vis: v, reads: slices.Clone(chain)})
			}
			return rr
		}
		r := &reads[i]
		if r.pred != nil {
			var fan func(ki int, u uint32) bool
			fan = func(ki int, u uint32) bool {
				if ki == len(r.pk) {
					chain[i] = u
					return walk(i+1, u)
				}
				k := r.pk[ki]
				w0 := s.latest(prev & p.regW[k])
				after := w0 < 0
				for d := 0; d <= len(s.order); d++ {
					v := prev // d == len(s.order): no writer added
					if d < len(s.order) {
						w := s.order[d]
						after = after || w == w0
						if !after || w == w0 || p.regW[k]&(1<<w) == 0 {
							continue
						}
						v |= 1 << w
					}
					if !s.keyOK(r, ki, v) {
						continue
					}
					if rr && r.pin[ki] {
						if w := s.latest(s.placed & p.regW[k]); w >= 0 && v&(1<<w) == 0 {
							continue
						}
					}
					if fan(ki+1, u|v) {
						return true
					}
				}
				return false
			}
			return fan(0, prev)
		}
		free := s.placed &^ prev
		for sub := free; ; sub = (sub - 1) & free {
			v := prev | sub
			if s.readOK(r, v) && (!rr || s.itemOK(r, v)) {
				chain[i] = v
				if walk(i+1, v) {
					return true
				}
			}
			if sub == 0 {
				break
			}
		}
		return false
	}
	walk(0, 0)
	return found
}

// minimal keeps the options whose VIS contains no other option's VIS.
func minimal(opts []option) []option {
	if len(opts) <= 1 {
		return opts
	}
	out := opts[:0:0]
	for i, o := range opts {
		keep := true
		for j, q := range opts {
			if i != j && q.vis&^o.vis == 0 && (q.vis != o.vis || j < i) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, o)
		}
	}
	return out
}

// explain says why t has no option after the current prefix (Replay).
func (s *search) explain(t int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "transaction %d (%v) after %v: no visible set meets its axioms and reproduces its reads", t, s.p.lvl[t], s.order)
	for i := range s.p.reads[t] {
		r := &s.p.reads[t][i]
		ok := false
		free := s.placed
		for sub := free; ; sub = (sub - 1) & free {
			if s.readOK(r, sub) {
				ok = true
				break
			}
			if sub == 0 {
				break
			}
		}
		if !ok && r.pred != nil && (s.p.lvl[t] == RC || s.p.lvl[t] == RR) {
			// Each key on its own set: name a key no set explains.
			ok = true
			for ki := range r.pk {
				kok := false
				for sub := free; ; sub = (sub - 1) & free {
					if s.keyOK(r, ki, sub) {
						kok = true
						break
					}
					if sub == 0 {
						break
					}
				}
				if !kok {
					fmt.Fprintf(&b, "; op %d %v: row %d can be read from no visible set", r.op, s.p.h.Txns[t].Ops[r.op], s.p.keys[r.pk[ki]])
					return b.String()
				}
			}
		}
		if !ok {
			fmt.Fprintf(&b, "; op %d %v can be read from no visible set", r.op, s.p.h.Txns[t].Ops[r.op])
			break
		}
	}
	return b.String()
}
