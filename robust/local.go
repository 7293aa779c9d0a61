package robust

import (
	"maps"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// A component over ExactMax instances is too large for one SAT question,
// yet most questions about it are decided by two facts:
//
//   - Static robustness is sound (Theorem 6.16): a component in which no
//     instance is the middle of a static critical cycle has no
//     non-serializable execution. So Exact answers robust for it, and a
//     lowering that leaves its component statically robust is safe.
//   - Extension (exact.go): a non-serializable execution of any set of
//     instances closed under session predecessors extends to the whole
//     workload. So a counterexample found among a few instances around a
//     culprit decides "not robust" for all of them.
//
// local searches such small sets, each one SAT question of a few
// instances: the culprit's printed static critical cycle; the culprit with
// each instance it conflicts with (lost updates, most of a benchmark's
// refusals); and cycles through the culprit and one other instance that
// can close a cycle without writing what it reads (a reader), joined by
// shortest static paths both ways (long forks and write skews through a
// chain of writers, as TPC-C's Order-Status needs). None of that can show
// that no counterexample exists; it leaves the question undecided then.

// localPairs bounds the conflicting instances paired with a culprit, and
// localReaders the other readers tried, with localEnds ways out of each.
const (
	localPairs   = 64
	localReaders = 128
	localEnds    = 3
)

// culprits lists the instances of group g that are the middle of a static
// critical cycle at levels.
func (x *index) culprits(levels []history.Level, g []int32, comp []int32) []int32 {
	var out []int32
	for _, p := range g {
		if cls := classOf(levels[p]); cls != classSER {
			if _, ok := x.critical(p, cls, comp); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// local looks for a counterexample among small sets around culprit m of a
// component (see above): the execution, or nil.
func (x *index) local(levels []history.Level, m int32, comp []int32, lim Limits, tried map[string]bool) *Execution {
	w := x.w
	ask := func(set map[int32]bool) *Execution {
		closed := map[int32]bool{}
		for i := range set {
			for q := i; q >= 0 && !closed[q]; q = w.prev(q) {
				closed[q] = true
			}
		}
		members := slices.Sorted(maps.Keys(closed))
		if len(members) < 2 || len(members) > ExactMax || lim.expired() {
			return nil
		}
		key := setKey(members, levels)
		if tried[key] {
			return nil
		}
		tried[key] = true
		ex, _ := newSATGroup(w, members, int64(lim.Steps)).solve(levels, lim)
		return ex
	}
	cls := classOf(levels[m])
	if c, ok := x.critical(m, cls, comp); ok {
		c.Edges = append(c.Edges, x.path(c.Edges[1].To, c.Edges[0].From, m, comp)...)
		set := map[int32]bool{}
		for _, e := range c.Edges {
			set[e.From], set[e.To] = true, true
		}
		if ex := ask(set); ex != nil {
			return ex
		}
	}
	// The culprit with one instance it conflicts with.
	n := 0
	for _, j := range x.conflicting(m, comp) {
		if n == localPairs || lim.expired() {
			break
		}
		n++
		if ex := ask(map[int32]bool{m: true, j: true}); ex != nil {
			return ex
		}
	}
	// m →rw a ⇝ b → m, for a writer b of another key m reads.
	var ins []int32
	for _, k := range w.Instances[m].Reads {
		for _, q := range x.writers[k] {
			if q != m && comp[q] == comp[m] && !slices.Contains(ins, q) && len(ins) < localPairs {
				ins = append(ins, q)
			}
		}
	}
	for _, a := range ins {
		for _, b := range ins {
			if a == b || lim.expired() {
				continue
			}
			p := x.path(a, b, m, comp)
			if p == nil {
				continue
			}
			set := map[int32]bool{m: true, a: true, b: true}
			for _, e := range p {
				set[e.From], set[e.To] = true, true
			}
			if ex := ask(set); ex != nil {
				return ex
			}
		}
	}
	// Two readers: m →rw a ⇝ r, r →rw b ⇝ m.
	outs := func(p int32) []int32 {
		var out []int32
		for _, k := range w.Instances[p].Reads {
			for _, q := range x.writers[k] {
				if q != p && comp[q] == comp[p] && !slices.Contains(out, q) {
					out = append(out, q)
					if len(out) == localEnds {
						return out
					}
				}
			}
		}
		return out
	}
	n = 0
	for _, r := range x.groupOf(m, comp) {
		if r == m || !x.reader(r) {
			continue
		}
		if n == localReaders || lim.expired() {
			break
		}
		n++
		for _, a := range outs(m) {
			p1 := x.path(a, r, m, comp)
			if p1 == nil && a != r {
				continue
			}
			for _, b := range outs(r) {
				p2 := x.path(b, m, r, comp)
				if p2 == nil && b != m {
					continue
				}
				set := map[int32]bool{m: true, r: true, a: true, b: true}
				for _, e := range append(p1, p2...) {
					set[e.From], set[e.To] = true, true
				}
				if ex := ask(set); ex != nil {
					return ex
				}
			}
		}
	}
	return nil
}

// reader reports whether instance p reads a key it does not write: only
// such an instance has an rw edge that can go against arbitration.
func (x *index) reader(p int32) bool {
	in := &x.w.Instances[p]
	for _, k := range in.Reads {
		if !containsKey(in.Writes, k) {
			return true
		}
	}
	return false
}

// conflicting lists the instances of p's component that share a key with
// p, one of them writing it, nearest keys first.
func (x *index) conflicting(p int32, comp []int32) []int32 {
	in := &x.w.Instances[p]
	seen := map[int32]bool{p: true}
	var out []int32
	add := func(list []int32) {
		for _, q := range list {
			if !seen[q] && comp[q] == comp[p] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	for _, k := range in.Writes {
		add(x.writers[k])
		add(x.readers[k])
	}
	for _, k := range in.Reads {
		add(x.writers[k])
	}
	return out
}

// groupOf lists the instances of p's component.
func (x *index) groupOf(p int32, comp []int32) []int32 {
	var out []int32
	for i := range x.w.Instances {
		if comp[i] == comp[p] {
			out = append(out, int32(i))
		}
	}
	return out
}

// setKey names a question: the members and their levels.
func setKey(members []int32, levels []history.Level) string {
	b := make([]byte, 0, 5*len(members))
	for _, m := range members {
		b = append(b, byte(m), byte(m>>8), byte(m>>16), byte(m>>24), byte(levels[m]))
	}
	return string(b)
}
