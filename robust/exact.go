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

// ConfirmMax bounds the instances Confirm searches over: the search is
// exponential in them.
const ConfirmMax = 6

// Limits bound a search: Steps per search (one cycle, one component, one
// level tried), and a Deadline for all of them (zero: none). A search cut
// short answers nothing, and the static answer stands.
type Limits struct {
	Steps    int
	Deadline time.Time
}

func (l Limits) search(w *Workload, levels []history.Level) *search {
	return &search{w: w, levels: levels, budget: l.Steps, deadline: l.Deadline}
}

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
// beyond ConfirmMax instances or past lim.
func Confirm(w *Workload, levels []history.Level, c Cycle, lim Limits) (*Execution, bool) {
	set := map[int32]bool{}
	for _, e := range c.Edges {
		for _, i := range []int32{e.From, e.To} {
			for q := i; q >= 0 && !set[q]; q = w.prev(q) {
				set[q] = true
			}
		}
	}
	if len(set) > ConfirmMax {
		return nil, false
	}
	members := make([]int32, 0, len(set))
	for i := range set {
		members = append(members, i)
	}
	slices.Sort(members)
	return lim.search(w, levels).run(members)
}

type search struct {
	w        *Workload
	levels   []history.Level
	budget   int
	deadline time.Time
	// order is the arbitration order being built; vis[i] the visible set
	// of order[i] as positions.
	order []int32
	vis   [][]bool
	found *Execution
}

func (s *search) run(members []int32) (*Execution, bool) {
	used := make([]bool, len(members))
	s.permute(members, used)
	return s.found, s.found != nil
}

// permute extends the arbitration order by every instance whose session
// predecessors are already placed, then chooses its visible set.
func (s *search) permute(members []int32, used []bool) bool {
	if s.budget <= 0 || s.found != nil {
		return false
	}
	if len(s.order) == len(members) {
		s.budget--
		if ex := s.cyclic(); ex != nil {
			s.found = ex
			return false
		}
		return true
	}
	for i, m := range members {
		if used[i] {
			continue
		}
		if q := s.w.prev(m); q >= 0 && !slices.Contains(s.order, q) {
			continue
		}
		used[i] = true
		s.order = append(s.order, m)
		ok := s.chooseVis(members, used)
		s.order = s.order[:len(s.order)-1]
		used[i] = false
		if !ok {
			return false
		}
	}
	return true
}

// chooseVis tries every visible set of the last placed instance that its
// level allows, recursing into permute for the rest.
func (s *search) chooseVis(members []int32, used []bool) bool {
	k := len(s.order) - 1
	t := s.order[k]
	ax := axiomsFor(s.levels[t])
	for mask := 0; mask < 1<<k; mask++ {
		s.budget--
		if s.budget&0xfff == 0 && !s.deadline.IsZero() && time.Now().After(s.deadline) {
			s.budget = 0
		}
		if s.budget <= 0 {
			return false
		}
		v := make([]bool, k)
		for j := range k {
			v[j] = mask&(1<<j) != 0
		}
		if !s.allowed(k, v, ax) {
			continue
		}
		s.vis = append(s.vis, v)
		ok := s.permute(members, used)
		s.vis = s.vis[:len(s.vis)-1]
		if !ok {
			return false
		}
	}
	return true
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

// allowed checks the axioms of the instance at arbitration position k
// with visible set v (positions before k).
func (s *search) allowed(k int, v []bool, ax levelAxioms) bool {
	t := s.order[k]
	for j := range k {
		u := s.order[j]
		switch {
		case !v[j] && s.w.soBefore(u, t): // SESSION
			return false
		case !v[j] && ax.totalVis:
			return false
		case !v[j] && ax.noConflict && intersects(s.w.Instances[u].Writes, s.w.Instances[t].Writes):
			return false
		}
		if v[j] {
			continue
		}
		// u invisible: nothing that sees u (TRANSVis) or comes after u in
		// arbitration (PREFIX) may be visible.
		for i := j + 1; i < k; i++ {
			if !v[i] {
				continue
			}
			if ax.prefix || (ax.transVis && s.vis[i][j]) {
				return false
			}
		}
	}
	return true
}

// cyclic computes the execution's dependencies and returns it when they
// and session order close a cycle.
func (s *search) cyclic() *Execution {
	n := len(s.order)
	w := s.w
	edge := make([][]bool, n)
	for i := range edge {
		edge[i] = make([]bool, n)
	}
	rf := make([]map[KeyID]int, n)
	for i := range n {
		t := &w.Instances[s.order[i]]
		rf[i] = map[KeyID]int{}
		for _, k := range t.Reads {
			from := -1
			for j := i - 1; j >= 0; j-- {
				if s.vis[i][j] && containsKey(w.Instances[s.order[j]].Writes, k) {
					from = j
					break
				}
			}
			rf[i][k] = from
			if from >= 0 {
				edge[from][i] = true
			}
			for j := from + 1; j < n; j++ {
				if j != i && containsKey(w.Instances[s.order[j]].Writes, k) {
					edge[i][j] = true // rw: j overwrites what i read
				}
			}
		}
		for j := range i {
			if w.soBefore(s.order[j], s.order[i]) || intersects(w.Instances[s.order[j]].Writes, t.Writes) {
				edge[j][i] = true
			}
		}
	}
	// Only rw edges point backwards in arbitration; a cycle needs one.
	for k := range n {
		for a := range n {
			if edge[a][k] {
				for b := range n {
					edge[a][b] = edge[a][b] || edge[k][b]
				}
			}
		}
	}
	for a := range n {
		if edge[a][a] {
			ex := &Execution{Members: slices.Clone(s.order), ReadFrom: rf}
			for i := range n {
				ex.Vis = append(ex.Vis, slices.Clone(s.vis[i]))
			}
			return ex
		}
	}
	return nil
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
	// ConfirmMax instances, or the budget ran out.
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
// component by component. A component over ConfirmMax instances, or a
// search over budget steps, leaves the answer undecided; the static
// criterion's (Check) stands then.
func Exact(w *Workload, levels []history.Level, lim Limits) ExactResult {
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

// exact searches the components of comp that hold two or more instances.
func (x *index) exact(levels []history.Level, comp []int32, lim Limits) ExactResult {
	res := ExactResult{Decided: true, Robust: true}
	for _, g := range x.groups(comp) {
		if len(g) < 2 {
			continue
		}
		members := x.withPreds(g)
		found, decided := x.searchGroup(levels, members, lim)
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

// searchGroup searches one component's executions: a counterexample, or
// whether the search covered them all.
func (x *index) searchGroup(levels []history.Level, members []int32, lim Limits) (*Execution, bool) {
	if len(members) > ConfirmMax {
		return nil, false
	}
	s := lim.search(x.w, levels)
	if ex, ok := s.run(members); ok {
		return ex, true
	}
	return nil, s.budget > 0
}

// RefineExact lowers instances beyond Refine where the exact search can
// vouch for it: in order of their level, strongest first (an instance at
// SER costs most, so it is offered the first chance), then in workload
// order, each instance is tried at every strictly weaker level, weakest
// first, and keeps the first at which its component still has no
// non-serializable execution. Lowering one instance can only change its
// own component's answer, so only that component is searched; an
// instance whose component is too large for the search keeps its level.
// levels must be robust (Refine's answer is); the result is, and the
// second result marks the instances lowered.
func RefineExact(w *Workload, levels []history.Level, lim Limits) ([]history.Level, []bool) {
	x := newIndex(w)
	comp := x.sccs()
	out := slices.Clone(levels)
	lowered := make([]bool, len(levels))
	// Each instance's component, closed under session predecessors, when
	// it is small enough to search and holds a cycle at all.
	members := make([][]int32, len(levels))
	for _, g := range x.groups(comp) {
		if len(g) < 2 {
			continue
		}
		if m := x.withPreds(g); len(m) <= ConfirmMax {
			for _, i := range g {
				members[i] = m
			}
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
		if members[i] == nil {
			continue // alone in its component (Refine did it) or too large
		}
		for j := len(history.Levels) - 1; j >= 0; j-- {
			l := history.Levels[j].Level
			if !Supported(l) || l == out[i] || !out[i].AtLeast(l) {
				continue
			}
			old := out[i]
			out[i] = l
			if ex, decided := x.searchGroup(out, members[i], lim); ex == nil && decided {
				lowered[i] = true
				break
			}
			out[i] = old
		}
	}
	return out, lowered
}
