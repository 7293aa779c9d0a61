package robust

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// A static critical cycle is evidence that a workload may not be robust;
// an execution is proof. Confirm searches, for the instances of a cycle
// (with their session predecessors), for an abstract execution in which
// every instance satisfies its level (MixIso Definition 3.5) and whose
// dependency graph with session order has a cycle. Such an execution of
// some instances extends to the whole workload: the others run after them
// in arbitration, each seeing everything before it, which satisfies every
// level and changes no read of the first ones. So a found execution proves
// the workload not robust, and its history is a counterexample that
// `check --level mixed` accepts and `check --level ser` rejects.

// ExactMax bounds the instances (with their session predecessors) one SAT
// question takes: the encoding grows with the cube of them (TRANSVis).
const ExactMax = 64

// exactLimit is ExactMax, lowered by tests to send small components
// down the path of large ones.
var exactLimit = ExactMax

// Limits bound a search: Steps conflicts per SAT question (one cycle, one
// component, one level tried; 0: none), and a Deadline for all of them
// (zero: none). A search cut short answers nothing, and the static answer
// stands.
type Limits struct {
	Steps    int
	Deadline time.Time
}

func (l Limits) expired() bool { return !l.Deadline.IsZero() && time.Now().After(l.Deadline) }

// Execution is an abstract execution of some instances of a workload.
type Execution struct {
	// Members are the instances, in arbitration order.
	Members []int32
	// Vis[i][j]: Members[j] is visible to Members[i] (j < i).
	Vis [][]bool
	// ReadFrom[i] maps each key Members[i] reads to the position in
	// Members of the instance it reads from, or -1 for the initial state.
	ReadFrom []map[KeyID]int
}

// Confirm looks for a non-serializable execution of the cycle's instances
// and their session predecessors at the given levels. It gives up (false)
// beyond ExactMax instances or past lim.
func Confirm(w *Workload, levels []history.Level, c Cycle, lim Limits) (*Execution, bool) {
	set := map[int32]bool{}
	for _, e := range c.Edges {
		for _, i := range []int32{e.From, e.To} {
			for q := i; q >= 0 && !set[q]; q = w.prev(q) {
				set[q] = true
			}
		}
	}
	if len(set) > ExactMax || lim.expired() || w.Patterned() {
		return nil, false
	}
	ex, _ := newSATGroup(w, slices.Sorted(maps.Keys(set)), int64(lim.Steps)).solve(levels, lim)
	return ex, ex != nil
}

// levelAxioms are the axioms a level adds to RA's (MixIso Table 2).
type levelAxioms struct{ transVis, prefix, noConflict, totalVis bool }

func axiomsFor(l history.Level) levelAxioms {
	switch classOf(l) {
	case classSER:
		return levelAxioms{totalVis: true}
	case classSI:
		return levelAxioms{prefix: true, noConflict: true}
	case classPSI:
		return levelAxioms{transVis: true, noConflict: true}
	case classPC:
		return levelAxioms{prefix: true}
	}
	if l.AtLeast(history.CC) {
		return levelAxioms{transVis: true}
	}
	return levelAxioms{}
}

// JSONL writes the execution as a history in JSON Lines: each member a
// committed transaction with its declared level, in its session (or one
// of its own), reading before writing; the member at arbitration position
// i has id i+1 and writes i+1 to every key it writes, a read returns its
// writer's value (0 for the initial state), and each key's version order
// is arbitration's, stated outright, so that the history has exactly the
// execution's dependencies. Keys are named as in the workload.
func (ex *Execution) JSONL(w *Workload, levels []history.Level) []byte {
	pos := map[int32]int{}
	for i, m := range ex.Members {
		pos[m] = i
	}
	// Members in session order, as the format wants each session's lines.
	members := slices.Clone(ex.Members)
	slices.SortFunc(members, func(a, c int32) int {
		pa, pc := &w.Instances[a], &w.Instances[c]
		if pa.Session != pc.Session {
			return int(pa.Session) - int(pc.Session)
		}
		return int(pa.Index) - int(pc.Index)
	})
	key := func(k KeyID) string { return strconv.Quote(w.Keys[k]) }
	var buf bytes.Buffer
	buf.WriteString(`{"hyperiso":1,"init":"zero","meta":{"about":` + strconv.Quote("counterexample to the robustness of "+w.Source) + "}}\n")
	for _, m := range members {
		p := &w.Instances[m]
		i := pos[m]
		sess := int64(p.Session)
		if p.Session < 0 {
			sess = int64(len(w.Sessions)) + int64(m)
		}
		var ops []string
		for _, k := range p.Reads {
			ops = append(ops, fmt.Sprintf(`["r",%s,%d]`, key(k), ex.ReadFrom[i][k]+1))
		}
		for _, k := range p.Writes {
			ops = append(ops, fmt.Sprintf(`["w",%s,%d]`, key(k), i+1))
		}
		level := levels[m]
		if classOf(level) == classSER {
			level = history.SER // a level above SER is not one a transaction declares
		}
		fmt.Fprintf(&buf, `{"session":%d,"id":%d,"level":%q,"ops":[%s]}`+"\n", sess, i+1, level.String(), strings.Join(ops, ","))
	}
	var orders []string
	keys := map[KeyID]bool{}
	for _, m := range ex.Members {
		for _, k := range w.Instances[m].Writes {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		prev := -1
		for i, m := range ex.Members {
			if containsKey(w.Instances[m].Writes, k) {
				if prev >= 0 {
					orders = append(orders, fmt.Sprintf("[%s,%d,%d]", key(k), prev+1, i+1))
				}
				prev = i
			}
		}
	}
	if len(orders) > 0 {
		fmt.Fprintf(&buf, `{"version_order":[%s]}`+"\n", strings.Join(orders, ","))
	}
	return buf.Bytes()
}

// History reads the execution's JSONL back as a history, for checking.
func (ex *Execution) History(w *Workload, levels []history.Level) (*history.History, error) {
	return jsonl.Parse(bytes.NewReader(ex.JSONL(w, levels)), "counterexample.jsonl", jsonl.Options{})
}

// ExactResult is the answer of Exact.
type ExactResult struct {
	// Decided: every component was searched to the end.
	Decided bool
	// Robust holds when Decided and no component has a non-serializable
	// execution; Counterexample is one when some component has.
	Robust         bool
	Counterexample *Execution
	// TooLarge lists, for an undecided answer, the components (with
	// their session predecessors) the search could not cover: more than
	// ExactMax instances, or the budget or deadline ran out.
	TooLarge [][]int32
}

// Exact decides robustness exactly where the workload lets it: a
// dependency cycle of an execution is a cycle of the static graph, so it
// lies in one strongly connected component, and (see Confirm) a
// non-serializable execution restricted to its cycle's instances and
// their session predecessors stays one, while one of a component's
// instances extends to the whole workload. So the workload is robust
// exactly when no component, with its session predecessors, has a
// non-serializable execution of its own, which Exact searches for
// component by component, one SAT question each (sat.go). A component
// without a static critical cycle is robust without a question (the
// static criterion is sound); one over ExactMax instances is proved
// robust by chainProof when its shape allows, else searched through small
// sets around its culprits (local), which can only refute; that, or a
// question over budget, leaves the answer undecided unless a
// counterexample turns up, and the static criterion's (Check) stands
// then. A workload with unbound key patterns is undecided.
func Exact(w *Workload, levels []history.Level, lim Limits) ExactResult {
	if w.Patterned() {
		return ExactResult{} // the encoding needs concrete read and write sets
	}
	x := newIndex(w)
	comp := x.sccs()
	return x.exact(levels, comp, lim)
}

// groups lists each component's instances, in component order of first
// appearance.
func (x *index) groups(comp []int32) [][]int32 {
	at := map[int32]int{}
	var out [][]int32
	for i := range x.w.Instances {
		c := comp[i]
		j, ok := at[c]
		if !ok {
			j = len(out)
			at[c] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], int32(i))
	}
	return out
}

// withPreds closes a component's instances under session predecessors.
func (x *index) withPreds(g []int32) []int32 {
	set := map[int32]bool{}
	for _, i := range g {
		for q := i; q >= 0 && !set[q]; q = x.w.prev(q) {
			set[q] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// exact searches the components of comp that hold two or more instances
// and a static critical cycle (see Exact).
func (x *index) exact(levels []history.Level, comp []int32, lim Limits) ExactResult {
	res := ExactResult{Decided: true, Robust: true}
	for _, g := range x.groups(comp) {
		if len(g) < 2 {
			continue
		}
		culprits := x.culprits(levels, g, comp)
		if len(culprits) == 0 {
			continue // statically robust, which is sound (local.go)
		}
		members := x.withPreds(g)
		var found *Execution
		decided := false
		switch {
		case lim.expired():
		case len(members) <= exactLimit:
			found, decided = newSATGroup(x.w, members, int64(lim.Steps)).solve(levels, lim)
		case x.chainProof(levels, g):
			decided = true // robust by the shape of the component (proof.go)
		default:
			tried := map[string]bool{}
			for _, m := range culprits {
				if found = x.local(levels, m, comp, lim, tried); found != nil {
					break
				}
			}
		}
		if found != nil {
			return ExactResult{Decided: true, Robust: false, Counterexample: found}
		}
		if !decided {
			res.Decided, res.Robust = false, false
			res.TooLarge = append(res.TooLarge, members)
		}
	}
	return res
}

// RefineExact lowers instances beyond Refine where the exact search can
// vouch for it: in order of their level, strongest first (an instance at
// SER costs most, so it is offered the first chance), then in workload
// order, each instance is tried at every strictly weaker level, weakest
// first, and keeps the first at which its component still has no
// non-serializable execution. Lowering one instance can only change its
// own component's answer, so only that component is searched, one SAT
// encoding per component asked under assumptions for each level tried.
// An instance whose component (with session predecessors) holds more than
// ExactMax instances keeps its level unless the component stays
// statically robust; there each lower level is refuted, when it can be,
// by a counterexample among a few instances (local.go), strongest level
// first, since a counterexample at a level is one at every weaker level;
// a level neither shown safe nor refuted counts as undecided. Every
// instance not yet tried when lim's deadline passes keeps its level too.
// levels must be robust (Refine's answer is); the result is, the second
// result marks the instances lowered, and the third counts the undecided
// questions.
func RefineExact(w *Workload, levels []history.Level, lim Limits) ([]history.Level, []bool, int) {
	if w.Patterned() {
		return slices.Clone(levels), make([]bool, len(levels)), 0
	}
	x := newIndex(w)
	comp := x.sccs()
	out := slices.Clone(levels)
	lowered := make([]bool, len(levels))
	undecided := 0
	// Each instance's component, closed under session predecessors, when
	// it holds a cycle at all; its encoding is built when first asked,
	// when the component is small enough for one.
	type group struct {
		members []int32
		sat     *satGroup
		large   bool
		tried   map[string]bool
	}
	of := make([]*group, len(levels))
	for _, g := range x.groups(comp) {
		if len(g) < 2 {
			continue
		}
		m := x.withPreds(g)
		gr := &group{members: m, large: len(m) > exactLimit, tried: map[string]bool{}}
		for _, i := range g {
			of[i] = gr
		}
	}
	rank := map[history.Level]int{}
	for i, r := range history.Levels {
		rank[r.Level] = i
	}
	idx := make([]int32, len(levels))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return rank[levels[a]] - rank[levels[b]] })
	for _, i := range idx {
		gr := of[i]
		if gr == nil {
			continue // alone in its component: Refine did it
		}
		if gr.large {
			undecided += x.refuteLocal(out, i, comp, gr.members, lim, gr.tried, lowered)
			continue
		}
		for j := len(history.Levels) - 1; j >= 0 && !lim.expired(); j-- {
			l := history.Levels[j].Level
			if !Supported(l) || l == out[i] || !out[i].AtLeast(l) {
				continue
			}
			if gr.sat == nil {
				gr.sat = newSATGroup(w, gr.members, int64(lim.Steps))
			}
			old := out[i]
			out[i] = l
			if ok, _ := gr.sat.robust(out, lim); ok {
				lowered[i] = true
				break
			}
			out[i] = old
		}
	}
	return out, lowered, undecided
}

// refuteLocal tries instance i of a component (g, with session
// predecessors) too large for one question at each weaker level,
// strongest first: a level at which the component stays statically
// robust, or is robust by chainProof, is safe and the weakest safe one is
// kept; a level refuted by a local counterexample refutes every weaker
// one; the rest are undecided, which it counts.
func (x *index) refuteLocal(out []history.Level, i int32, comp []int32, g []int32, lim Limits, tried map[string]bool, lowered []bool) int {
	undecided := 0
	var refuted []history.Level
	best := out[i]
	for j := range history.Levels {
		l := history.Levels[j].Level
		if !Supported(l) || l == out[i] || !out[i].AtLeast(l) || slices.ContainsFunc(refuted, func(f history.Level) bool { return f.AtLeast(l) }) {
			continue
		}
		if _, bad := x.critical(i, classOf(l), comp); !bad {
			best = l // statically safe; table order makes the last the weakest
			continue
		}
		if lim.expired() {
			undecided++
			continue
		}
		old := out[i]
		out[i] = l
		proved := x.chainProof(out, g)
		var ex *Execution
		if !proved {
			ex = x.local(out, i, comp, lim, tried)
		}
		out[i] = old
		switch {
		case proved:
			best = l
		case ex != nil:
			refuted = append(refuted, l)
		default:
			undecided++
		}
	}
	if best != out[i] {
		out[i], lowered[i] = best, true
	}
	return undecided
}
