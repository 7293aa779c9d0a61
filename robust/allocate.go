package robust

import (
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// Rule is the allocation rule of Theorem 6.18 that gave an instance its
// level.
type Rule uint8

const (
	// A1: write-only, or reads a single key and writes none and is first
	// in its session: RA.
	A1 Rule = iota + 1
	// A2: reads several keys and writes none, or reads one key after
	// another instance of its session: PC.
	A2
	// A3: reads and writes, and every instance that writes a key it reads
	// also writes a key it writes: PSI.
	A3
	// A4: otherwise: SER.
	A4
)

func (r Rule) String() string { return fmt.Sprintf("A%d", int(r)) }

// Allocation is the answer of Allocate: per instance, its level, the rule
// and, for A4, the dependency that forced it.
type Allocation struct {
	Levels []history.Level
	Rules  []Rule
	// Forced is, for an A4 instance, an rw edge to an instance that
	// writes a key it reads but none it writes.
	Forced []Edge
}

// ruleLevel maps each rule to its level.
var ruleLevel = map[Rule]history.Level{A1: history.RA, A2: history.PC, A3: history.PSI, A4: history.SER}

// Allocate gives every instance the level the rules of Theorem 6.18 allow;
// the resulting workload is statically robust. Its cost is, per
// read-write instance, the writers of the keys it writes and the writers
// of the keys it reads but does not write, until one fails A3: linear in
// the static graph's edges.
func Allocate(w *Workload) *Allocation {
	x := newIndex(w)
	n := len(w.Instances)
	a := &Allocation{Levels: make([]history.Level, n), Rules: make([]Rule, n), Forced: make([]Edge, n)}
	for i := range n {
		p := &w.Instances[i]
		r := A3
		switch {
		case p.WriteOnly() || (p.SingleKeyReadOnly() && w.prev(int32(i)) < 0):
			// A single-key reader later in a session is not A1's: its
			// session predecessor is visible to it without what that one
			// saw, and a cycle can close through session order (see
			// Check); PC's prefix rules that out.
			r = A1
		case p.ReadOnly():
			r = A2
		default:
			if e, ok := x.conflictingRead(int32(i)); ok {
				r, a.Forced[i] = A4, e
			}
		}
		a.Rules[i], a.Levels[i] = r, ruleLevel[r]
	}
	return a
}

// conflictingRead finds an instance that writes a key p reads without
// writing any key p writes (the condition A3 forbids). Each candidate's
// write set is intersected with p's directly rather than marking every
// writer of p's keys first: most read-write instances of a large workload
// fail A3 at their first candidate, so the search rarely goes far.
func (x *index) conflictingRead(p int32) (Edge, bool) {
	in := &x.w.Instances[p]
	must := x.w.mustWrites(p)
	for _, k := range in.Reads {
		if containsKey(must, k) {
			continue // every writer of k conflicts with p on k
		}
		for _, q := range x.writers[k] {
			if q != p && !intersects(x.w.mustWrites(q), must) {
				return Edge{From: p, To: q, Rel: RW, Key: k}, true
			}
		}
	}
	return Edge{}, false
}

// intersects reports whether two sorted key sets share a key.
func intersects(a, b []KeyID) bool {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] == b[0]:
			return true
		case a[0] < b[0]:
			a = a[1:]
		default:
			b = b[1:]
		}
	}
	return false
}

// Why says in words why instance i got its level.
func (a *Allocation) Why(w *Workload, i int) string {
	p := &w.Instances[i]
	switch a.Rules[i] {
	case A1:
		if p.WriteOnly() {
			return "A1: writes only, reads nothing first"
		}
		return fmt.Sprintf("A1: reads only one key (%s)", w.Keys[p.Reads[0]])
	case A2:
		if len(p.Reads) == 1 {
			return fmt.Sprintf("A2: reads only one key (%s), but after %s in its session", w.Keys[p.Reads[0]], w.Instances[w.prev(int32(i))].Name)
		}
		return fmt.Sprintf("A2: read-only over %d keys", len(p.Reads))
	case A3:
		return "A3: reads and writes; every instance that writes a key it reads also writes a key it writes"
	}
	e := a.Forced[i]
	q := &w.Instances[e.To]
	return fmt.Sprintf("A4: reads %s that %s writes, and %s writes none of the keys it writes (%s)",
		w.Keys[e.Key], q.Name, q.Name, keyList(w, p.Writes))
}

func keyList(w *Workload, ks []KeyID) string {
	const max = 5
	var names []string
	for i, k := range ks {
		if i == max {
			names = append(names, fmt.Sprintf("and %d more", len(ks)-max))
			break
		}
		names = append(names, w.Keys[k])
	}
	return strings.Join(names, ", ")
}

// Share counts instances per level.
type Share struct {
	Level history.Level
	Count int
}

// Shares counts levels, in the level table's order (strongest first), for
// the levels that occur.
func Shares(levels []history.Level) []Share {
	count := map[history.Level]int{}
	for _, l := range levels {
		count[l]++
	}
	var out []Share
	for _, r := range history.Levels {
		if c := count[r.Level]; c > 0 {
			out = append(out, Share{r.Level, c})
		}
	}
	return out
}
