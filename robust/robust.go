package robust

import (
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// Form is the shape of a static critical cycle P1 → P2 →rw P3 ⇝ P1
// (Theorem 6.16); P2, the middle instance, is what makes it critical.
type Form uint8

const (
	// S1: P2 at RA or CC, any edge into it, session order included.
	S1 Form = iota + 1
	// S2: P2 at PSI, any edge into it, session order included, and P3
	// writes no key P2 writes.
	S2
	// S3: P2 at PC, a ww or rw edge into it from outside its session past.
	S3
	// S4: P2 at SI, rw edges in and out on different keys, P3 writes no key
	// P2 writes, P1 not before P2 in its session.
	S4
)

func (f Form) String() string { return fmt.Sprintf("S%d", int(f)) }

// Cycle is one static critical cycle: Edges[0] is P1 → P2, Edges[1] is
// P2 →rw P3, the rest lead from P3 back to P1.
type Cycle struct {
	Form   Form
	Middle int32
	Edges  []Edge
}

// Report is the answer of Check.
type Report struct {
	// Robust: no static critical cycle, so every history the workload can
	// produce under the allocation is serializable (Theorem 6.16).
	Robust bool
	// Levels is the allocation checked, one level per instance.
	Levels []history.Level
	// Culprits are the instances that are the middle of some static
	// critical cycle, in workload order: raising each to a level whose
	// form its cycles do not fit (SER always) removes them.
	Culprits []int32
	// Cycles holds one cycle for each of the first MaxCycles culprits.
	Cycles []Cycle
	// Edges counts the static dependency graph's edges.
	Edges int64
}

// CheckOptions tune Check.
type CheckOptions struct {
	// Levels overrides the declared levels when non-nil (one per instance).
	Levels []history.Level
	// Default is the level of an instance that declares none; LevelNone
	// makes such an instance an error.
	Default history.Level
	// MaxCycles bounds the cycles reported (0: 1).
	MaxCycles int
}

// LevelsOf resolves the allocation Check would check: opt.Levels, else the
// declared levels with opt.Default for instances that declare none.
func LevelsOf(w *Workload, opt CheckOptions) ([]history.Level, error) {
	if opt.Levels != nil {
		if len(opt.Levels) != len(w.Instances) {
			return nil, fmt.Errorf("%d levels for %d instances", len(opt.Levels), len(w.Instances))
		}
		for i, l := range opt.Levels {
			if !Supported(l) {
				return nil, fmt.Errorf("instance %q: level %q is outside robustness's levels (%s)", w.Instances[i].Name, l, SupportedList(", "))
			}
		}
		return opt.Levels, nil
	}
	if opt.Default != history.LevelNone && !Supported(opt.Default) {
		return nil, fmt.Errorf("default level %q is outside robustness's levels (%s)", opt.Default, SupportedList(", "))
	}
	out := make([]history.Level, len(w.Instances))
	for i := range w.Instances {
		p := &w.Instances[i]
		l := p.Level
		if l == history.LevelNone {
			l = opt.Default
		}
		switch {
		case l == history.LevelNone:
			return nil, fmt.Errorf("%sinstance %q declares no level (give one, or a default level)", p.Pos.prefix(), p.Name)
		case !Supported(l):
			return nil, fmt.Errorf("%sinstance %q: level %q is outside robustness's levels (%s)", p.Pos.prefix(), p.Name, l, SupportedList(", "))
		}
		out[i] = l
	}
	return out, nil
}

// Check decides static robustness of w under an allocation (Theorem 6.16):
// whether its static dependency graph has a static critical cycle of one
// of the forms S1–S4. A cycle P1 → P2 → P3 ⇝ P1 exists exactly when P1,
// P2 and P3 lie in one strongly connected component, so Check computes the
// components once and then looks, per middle instance P2, for an edge in
// and an rw edge out that stay in P2's component and meet its form's side
// conditions: linear in the static graph's edges, and in practice far
// less, since only instances in non-trivial components are looked at.
func Check(w *Workload, opt CheckOptions) (*Report, error) {
	levels, err := LevelsOf(w, opt)
	if err != nil {
		return nil, err
	}
	x := newIndex(w)
	rep := &Report{Robust: true, Levels: levels, Edges: x.edges()}
	comp := x.sccs()
	n := len(w.Instances)
	// Instances per component: a component with one instance holds no
	// cycle between distinct instances.
	size := map[int32]int{}
	for i := range n {
		size[comp[i]]++
	}
	maxCycles := max(opt.MaxCycles, 1)
	for i := range n {
		p2 := int32(i)
		cls := classOf(levels[p2])
		if cls == classSER || size[comp[p2]] < 2 {
			continue
		}
		c, ok := x.critical(p2, cls, comp)
		if !ok {
			continue
		}
		rep.Robust = false
		rep.Culprits = append(rep.Culprits, p2)
		if len(rep.Cycles) < maxCycles {
			c.Edges = append(c.Edges, x.path(c.Edges[1].To, c.Edges[0].From, p2, comp)...)
			rep.Cycles = append(rep.Cycles, c)
		}
	}
	return rep, nil
}

// critical looks for a static critical cycle with middle p2 at class cls:
// it returns the cycle's first two edges.
func (x *index) critical(p2 int32, cls class, comp []int32) (Cycle, bool) {
	w := x.w
	p := &w.Instances[p2]
	c := comp[p2]
	// P3: an rw successor in the component, not after p2 in its session;
	// at PSI and SI it must write no key p2 writes.
	noConflict := cls == classPSI || cls == classSI
	out, found := Edge{}, false
	for _, y := range p.Reads {
		for _, q := range x.writers[y] {
			if q == p2 || comp[q] != c || w.soBefore(p2, q) || (noConflict && intersects(w.mustWrites(q), w.mustWrites(p2))) {
				continue
			}
			out, found = Edge{From: p2, To: q, Rel: RW, Key: y}, true
			break
		}
		if found {
			break
		}
	}
	if !found {
		return Cycle{}, false
	}
	// P1: a predecessor in the component by the edges the form allows.
	// An SI middle's rw edges in and out are on different keys without
	// asking: the key out is one p2 reads and does not write (P3 writes it
	// and does not conflict with p2), the key in one p2 writes.
	form := map[class]Form{classRA: S1, classPSI: S2, classPC: S3, classSI: S4}[cls]
	// Session order into p2 is visibility without transitivity or a
	// prefix: at RA, CC and PSI it closes a cycle like any edge, and there
	// it needs no dependency on p2's key, so even a single-key read-only
	// p2 can be the middle. One predecessor suffices: an earlier instance
	// of the session in p2's component puts every instance between them
	// there too.
	if cls == classRA || cls == classPSI {
		if q := w.prev(p2); q >= 0 && comp[q] == c {
			return Cycle{Form: form, Middle: p2, Edges: []Edge{{From: q, To: p2, Rel: SO, Key: -1}, out}}, true
		}
	}
	if x.singleKeyReader(p2, comp) {
		// The only dependency into it is wr on its key, from a writer it
		// sees; whatever overwrites what it read follows that writer in
		// arbitration, so it cannot close a cycle (Theorem 6.6). A key
		// no other instance of the component writes adds no edge on a
		// cycle, so only the keys written there count.
		return Cycle{}, false
	}
	in := func(q int32, rel Relation, k KeyID) bool {
		if q == p2 || comp[q] != c {
			return false
		}
		if (cls == classPC || cls == classSI) && w.soBefore(q, p2) {
			return false
		}
		return true
	}
	for _, k := range p.Writes {
		for _, q := range x.readers[k] {
			if in(q, RW, k) {
				return Cycle{Form: form, Middle: p2, Edges: []Edge{{From: q, To: p2, Rel: RW, Key: k}, out}}, true
			}
		}
	}
	if cls == classSI {
		return Cycle{}, false
	}
	for _, k := range p.Writes {
		for _, q := range x.writers[k] {
			if in(q, WW, k) {
				return Cycle{Form: form, Middle: p2, Edges: []Edge{{From: q, To: p2, Rel: WW, Key: k}, out}}, true
			}
		}
	}
	if cls == classPC {
		return Cycle{}, false
	}
	for _, k := range p.Reads {
		for _, q := range x.writers[k] {
			if in(q, WR, k) {
				return Cycle{Form: form, Middle: p2, Edges: []Edge{{From: q, To: p2, Rel: WR, Key: k}, out}}, true
			}
		}
	}
	return Cycle{}, false
}

// Refine lowers each instance of an allocation as far as the static
// criterion allows: to the weakest level strictly below its own (in the
// level table's order, weakest first) at which it is the middle of no
// static critical cycle. Whether an instance is a middle depends on its
// own level and the graph alone, never on the other instances' levels, so
// each instance is lowered on its own and the result is robust exactly
// when the input was. The rules of Theorem 6.18 are sufficient conditions
// on read and write sets; this asks the graph, and so can lower an
// instance the rules send to SER whose conflicts close no cycle. The
// second result marks the instances lowered.
func Refine(w *Workload, levels []history.Level) ([]history.Level, []bool, error) {
	if _, err := LevelsOf(w, CheckOptions{Levels: levels}); err != nil {
		return nil, nil, err
	}
	x := newIndex(w)
	comp := x.sccs()
	size := map[int32]int{}
	for i := range w.Instances {
		size[comp[i]]++
	}
	// Candidates weakest first; a level equivalent for the analysis to a
	// weaker candidate (CC to RA) adds nothing.
	var cands []history.Level
	seen := map[class]bool{}
	for i := len(history.Levels) - 1; i >= 0; i-- {
		l := history.Levels[i].Level
		if Supported(l) && !seen[classOf(l)] {
			seen[classOf(l)] = true
			cands = append(cands, l)
		}
	}
	out := slices.Clone(levels)
	lowered := make([]bool, len(levels))
	for i := range w.Instances {
		p2 := int32(i)
		for _, l := range cands {
			if l == levels[i] || !levels[i].AtLeast(l) {
				continue
			}
			if size[comp[p2]] >= 2 {
				if _, bad := x.critical(p2, classOf(l), comp); bad {
					continue
				}
			}
			out[i], lowered[i] = l, true
			break
		}
	}
	return out, lowered, nil
}

// singleKeyReader reports whether instance p writes nothing and reads
// only one key that another instance of its component writes.
func (x *index) singleKeyReader(p int32, comp []int32) bool {
	in := &x.w.Instances[p]
	if !in.ReadOnly() {
		return false
	}
	written := 0
	for _, k := range in.Reads {
		for _, q := range x.writers[k] {
			if q != p && comp[q] == comp[p] {
				written++
				break
			}
		}
	}
	return written <= 1
}
