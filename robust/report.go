package robust

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// The reports of the robust and allocate commands: JSON-ready structs and
// their text. Levels are written as the level table names them, in upper
// case in prose ("WC_1 at SI reads …").

// LevelCount is one level's share of an allocation.
type LevelCount struct {
	Level   string  `json:"level"`
	Count   int     `json:"count"`
	Percent float64 `json:"percent"`
}

// TypeShares is the allocation of one program type.
type TypeShares struct {
	Type   string       `json:"type"`
	Levels []LevelCount `json:"levels"`
}

// WorkloadInfo sizes a workload.
type WorkloadInfo struct {
	Source    string `json:"source"`
	Instances int    `json:"instances"`
	Types     int    `json:"types"`
	Keys      int    `json:"keys"`
	Sessions  int    `json:"sessions"`
	// Edges counts the static dependency graph's edges.
	Edges int64 `json:"static_edges"`
}

// CycleEdge is one edge of a reported cycle.
type CycleEdge struct {
	From      string `json:"from"`
	FromLevel string `json:"from_level"`
	To        string `json:"to"`
	ToLevel   string `json:"to_level"`
	Relation  string `json:"relation"`
	Key       string `json:"key,omitempty"`
	Reason    string `json:"reason"`
}

// CycleReport is a static critical cycle in words.
type CycleReport struct {
	Form   string      `json:"form"`
	Middle string      `json:"middle"`
	Edges  []CycleEdge `json:"edges"`
	Why    string      `json:"why"`
	// Confirmed: Confirm found a non-serializable execution of the
	// cycle's instances (Counterexample lists them in arbitration order),
	// so the workload is not robust for certain, not only by the static
	// criterion.
	Confirmed      bool     `json:"confirmed"`
	Counterexample []string `json:"counterexample,omitempty"`
}

// RobustReport is what `hyperiso robust` prints.
type RobustReport struct {
	Schema   int          `json:"hyperiso_robust"`
	Workload WorkloadInfo `json:"workload"`
	// Verdict is "robust" or "not-robust".
	Verdict  string        `json:"verdict"`
	Levels   []LevelCount  `json:"levels"`
	Culprits []string      `json:"culprits"`
	Cycles   []CycleReport `json:"cycles"`
	// Exact is the exact search's answer, when asked for.
	Exact *ExactReport `json:"exact,omitempty"`
	// CounterexampleFile is where the first confirmed cycle's execution
	// (or the exact search's) was written, if anywhere.
	CounterexampleFile string `json:"counterexample_file,omitempty"`
	// Patterns: some instance names a key pattern with an unbound
	// parameter, so no cycle is confirmed and the exact search declines.
	Patterns  bool               `json:"patterns,omitempty"`
	TimingsMS map[string]float64 `json:"timings_ms"`
}

// ExactReport is Exact's answer in words.
type ExactReport struct {
	// Verdict is "robust", "not-robust" or "undecided".
	Verdict string `json:"verdict"`
	// Counterexample lists a non-serializable execution's instances in
	// arbitration order.
	Counterexample []string `json:"counterexample,omitempty"`
	// TooLarge gives the sizes of the components the search could not
	// cover.
	TooLarge []int `json:"too_large,omitempty"`
}

// NewExactReport renders r for w.
func NewExactReport(w *Workload, r ExactResult) *ExactReport {
	out := &ExactReport{Verdict: "undecided"}
	switch {
	case r.Counterexample != nil:
		out.Verdict = "not-robust"
		for _, m := range r.Counterexample.Members {
			out.Counterexample = append(out.Counterexample, w.Instances[m].Name)
		}
	case r.Decided:
		out.Verdict = "robust"
	}
	for _, g := range r.TooLarge {
		out.TooLarge = append(out.TooLarge, len(g))
	}
	return out
}

// InstanceLevel is one instance's allocated level and why.
type InstanceLevel struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Level string `json:"level"`
	Rule  string `json:"rule"`
	Why   string `json:"why"`
	// Refined is the level Refine lowers it to, when it does.
	Refined string `json:"refined,omitempty"`
}

// PriorSISER is the allocation earlier approaches give (SI everywhere,
// SER for the middles of SI's critical cycles), for comparison.
type PriorSISER struct {
	SI  int `json:"si"`
	SER int `json:"ser"`
}

// AllocationReport is what `hyperiso allocate` prints.
type AllocationReport struct {
	Schema   int          `json:"hyperiso_allocation"`
	Workload WorkloadInfo `json:"workload"`
	Levels   []LevelCount `json:"levels"`
	ByType   []TypeShares `json:"by_type"`
	Prior    PriorSISER   `json:"prior_si_ser"`
	// Refined is the allocation after Refine, and Lowered how many
	// instances it puts below the rules' level.
	Refined []LevelCount `json:"refined_levels"`
	Lowered int          `json:"lowered"`
	// ExactRefined and ExactLowered are RefineExact's answer, when asked
	// for: the levels, and how many instances it puts below Refine's.
	ExactRefined []LevelCount `json:"exact_refined_levels,omitempty"`
	ExactLowered int          `json:"exact_lowered,omitempty"`
	// ExactUndecided counts the lower levels, tried in components too
	// large for one SAT question, that the search neither showed safe
	// nor refuted (the instance kept its level).
	ExactUndecided int                `json:"exact_undecided,omitempty"`
	Allocation     []InstanceLevel    `json:"allocation"`
	TimingsMS      map[string]float64 `json:"timings_ms"`
}

// Info sizes w; edges is the static graph's edge count.
func Info(w *Workload, edges int64) WorkloadInfo {
	types := map[string]bool{}
	for i := range w.Instances {
		types[w.Instances[i].Type] = true
	}
	return WorkloadInfo{Source: w.Source, Instances: len(w.Instances), Types: len(types), Keys: len(w.Keys), Sessions: len(w.Sessions), Edges: edges}
}

// Counts turns levels into shares, strongest first.
func Counts(levels []history.Level) []LevelCount {
	out := []LevelCount{}
	for _, s := range Shares(levels) {
		out = append(out, LevelCount{Level: s.Level.String(), Count: s.Count, Percent: pct(s.Count, len(levels))})
	}
	return out
}

func pct(c, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(c) * 100 / float64(n)
}

func up(l history.Level) string { return strings.ToUpper(l.String()) }

// NewRobustReport renders rep for w.
func NewRobustReport(w *Workload, rep *Report) *RobustReport {
	out := &RobustReport{Schema: 1, Workload: Info(w, rep.Edges), Verdict: "robust", Levels: Counts(rep.Levels), Culprits: []string{}, Cycles: []CycleReport{}, TimingsMS: map[string]float64{}}
	if !rep.Robust {
		out.Verdict = "not-robust"
	}
	out.Patterns = w.Patterned()
	for _, c := range rep.Culprits {
		out.Culprits = append(out.Culprits, w.Instances[c].Name)
	}
	for _, c := range rep.Cycles {
		out.Cycles = append(out.Cycles, describeCycle(w, rep.Levels, c))
	}
	return out
}

// edgeReason says one static dependency in words.
func edgeReason(w *Workload, levels []history.Level, e Edge) string {
	a := fmt.Sprintf("%s at %s", w.Instances[e.From].Name, up(levels[e.From]))
	b := fmt.Sprintf("%s at %s", w.Instances[e.To].Name, up(levels[e.To]))
	switch e.Rel {
	case WR:
		return fmt.Sprintf("%s writes %s that %s reads", a, w.Keys[e.Key], b)
	case WW:
		return fmt.Sprintf("%s writes %s that %s writes too", a, w.Keys[e.Key], b)
	case RW:
		return fmt.Sprintf("%s reads %s that %s writes", a, w.Keys[e.Key], b)
	}
	return fmt.Sprintf("%s comes before %s in their session", a, b)
}

func describeCycle(w *Workload, levels []history.Level, c Cycle) CycleReport {
	out := CycleReport{Form: c.Form.String(), Middle: w.Instances[c.Middle].Name}
	for _, e := range c.Edges {
		ce := CycleEdge{
			From: w.Instances[e.From].Name, FromLevel: levels[e.From].String(),
			To: w.Instances[e.To].Name, ToLevel: levels[e.To].String(),
			Relation: e.Rel.String(), Reason: edgeReason(w, levels, e),
		}
		if e.Key >= 0 {
			ce.Key = w.Keys[e.Key]
		}
		out.Edges = append(out.Edges, ce)
	}
	in, rw := c.Edges[0], c.Edges[1]
	m := w.Instances[c.Middle].Name
	p1, p3, y := w.Instances[in.From].Name, w.Instances[rw.To].Name, w.Keys[rw.Key]
	lv := up(levels[c.Middle])
	switch c.Form {
	case S1:
		out.Why = fmt.Sprintf("at %s, %s can read %s without seeing %s's write of it, although it depends on %s, which depends on %s: %s does not make what %s saw visible with it", lv, m, y, p3, p1, p3, lv, p1)
	case S2:
		out.Why = fmt.Sprintf("at PSI, %s can read %s without seeing %s's write of it, although it depends on %s, which depends on %s: they write no common key, so PSI does not order them", m, y, p3, p1, p3)
	case S3:
		out.Why = fmt.Sprintf("at PC, %s's snapshot can miss %s's write of %s while %s, which depends on %s, is ordered before %s by a write: PC does not stop a lost update", m, p3, y, p1, p3, m)
	case S4:
		out.Why = fmt.Sprintf("at SI, %s can read %s without seeing %s's write of it while %s reads a key %s writes: they write no common key, a write skew", m, y, p3, p1, m)
	}
	out.Why += fmt.Sprintf("; running %s at SER removes this cycle", m)
	return out
}

// WriteText writes the robustness report for people.
func (r *RobustReport) WriteText(out io.Writer) error {
	var b strings.Builder
	writeInfo(&b, r.Workload)
	b.WriteString("levels:")
	for _, l := range r.Levels {
		fmt.Fprintf(&b, " %s %d", strings.ToUpper(l.Level), l.Count)
	}
	b.WriteString("\n")
	if r.Verdict == "robust" {
		b.WriteString("ROBUST: the static dependency graph has no critical cycle (Theorem 6.16, with session order), so every history these instances can produce at these levels is serializable\n")
		_, err := io.WriteString(out, b.String())
		return err
	}
	names := r.Culprits
	more := ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(" and %d more", len(r.Culprits)-10)
	}
	fmt.Fprintf(&b, "NOT ROBUST: %d instance(s) can be the middle of a critical cycle: %s%s\n", len(r.Culprits), strings.Join(names, ", "), more)
	for i, c := range r.Cycles {
		fmt.Fprintf(&b, "cycle %d, form %s, middle %s:\n", i+1, c.Form, c.Middle)
		for _, e := range c.Edges {
			fmt.Fprintf(&b, "  %s (%s)\n", e.Reason, e.Relation)
		}
		fmt.Fprintf(&b, "  why: %s\n", c.Why)
		switch {
		case c.Confirmed && i == 0 && r.CounterexampleFile != "":
			fmt.Fprintf(&b, "  confirmed: this execution of %s is not serializable; written to %s (hyperiso check --level mixed accepts it, --level ser rejects it)\n", strings.Join(c.Counterexample, ", "), r.CounterexampleFile)
		case c.Confirmed:
			fmt.Fprintf(&b, "  confirmed: an execution of %s is not serializable (--counterexample FILE writes it)\n", strings.Join(c.Counterexample, ", "))
		case r.Patterns:
			b.WriteString("  not confirmed: the workload has key patterns with unbound parameters, and the search for an execution needs concrete keys\n")
		default:
			b.WriteString("  not confirmed: no non-serializable execution of these instances was found within the search bound; the static criterion over-approximates\n")
		}
	}
	if e := r.Exact; e != nil {
		verdict := e.Verdict
		if verdict == "undecided" && r.Patterns {
			verdict = "undecided-patterns"
		}
		switch verdict {
		case "robust":
			b.WriteString("exact search: ROBUST after all: no strongly connected component of the static graph has a non-serializable execution, so none of these cycles occurs in an execution\n")
		case "not-robust":
			fmt.Fprintf(&b, "exact search: NOT ROBUST, an execution of %s is not serializable\n", strings.Join(e.Counterexample, ", "))
		case "undecided-patterns":
			b.WriteString("exact search: undecided, the workload has key patterns with unbound parameters and the search needs concrete keys; the static answer stands\n")
		default:
			fmt.Fprintf(&b, "exact search: undecided for %d component(s) (%s instances with session predecessors): over %d instances, neither proved robust nor refuted by a counterexample among a few of them, or the budget or time ran out; the static answer stands\n", len(e.TooLarge), joinInts(e.TooLarge), ExactMax)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func writeInfo(b *strings.Builder, wi WorkloadInfo) {
	fmt.Fprintf(b, "workload %s: %d instances of %d types, %d keys, %d sessions; static dependency graph %d edges\n",
		wi.Source, wi.Instances, wi.Types, wi.Keys, wi.Sessions, wi.Edges)
}

// NewAllocationReport renders a for w; prior is the SI/SER comparison,
// refined and lowered Refine's answer.
func NewAllocationReport(w *Workload, a *Allocation, edges int64, prior PriorSISER, refined []history.Level, lowered []bool) *AllocationReport {
	out := &AllocationReport{Schema: 1, Workload: Info(w, edges), Levels: Counts(a.Levels), Prior: prior, Refined: Counts(refined), TimingsMS: map[string]float64{}}
	byType := map[string][]history.Level{}
	var types []string
	for i := range w.Instances {
		p := &w.Instances[i]
		if _, ok := byType[p.Type]; !ok {
			types = append(types, p.Type)
		}
		byType[p.Type] = append(byType[p.Type], a.Levels[i])
		il := InstanceLevel{Name: p.Name, Type: p.Type, Level: a.Levels[i].String(), Rule: a.Rules[i].String(), Why: a.Why(w, i)}
		if lowered[i] {
			il.Refined = refined[i].String()
			out.Lowered++
		}
		out.Allocation = append(out.Allocation, il)
	}
	slices.Sort(types)
	for _, t := range types {
		out.ByType = append(out.ByType, TypeShares{Type: t, Levels: Counts(byType[t])})
	}
	return out
}

// PriorAllocation is the allocation earlier approaches give: SI for every
// instance except the middles of the critical cycles that all-SI has,
// which get SER (one pass suffices: whether an instance is a middle does
// not depend on the other instances' levels).
func PriorAllocation(w *Workload) (PriorSISER, error) {
	si := make([]history.Level, len(w.Instances))
	for i := range si {
		si[i] = history.SI
	}
	rep, err := Check(w, CheckOptions{Levels: si})
	if err != nil {
		return PriorSISER{}, err
	}
	return PriorSISER{SI: len(si) - len(rep.Culprits), SER: len(rep.Culprits)}, nil
}

// WriteText writes the allocation for people: shares, shares per type,
// the prior SI/SER allocation, and per instance when list is set.
func (r *AllocationReport) WriteText(out io.Writer, list bool) error {
	var b strings.Builder
	writeInfo(&b, r.Workload)
	n := r.Workload.Instances
	b.WriteString("allocation by the rules A1–A4 (Theorem 6.18; statically robust):\n")
	for _, l := range r.Levels {
		fmt.Fprintf(&b, "  %-4s %7d  %5.1f%%\n", strings.ToUpper(l.Level), l.Count, l.Percent)
	}
	b.WriteString("by type:\n")
	for _, t := range r.ByType {
		var parts []string
		for _, l := range t.Levels {
			parts = append(parts, fmt.Sprintf("%s %d", strings.ToUpper(l.Level), l.Count))
		}
		fmt.Fprintf(&b, "  %-20s %s\n", t.Type, strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "prior SI/SER allocation (SI except the middles of SI's critical cycles): SI %d (%.1f%%), SER %d (%.1f%%)\n",
		r.Prior.SI, pct(r.Prior.SI, n), r.Prior.SER, pct(r.Prior.SER, n))
	fmt.Fprintf(&b, "refined by the static criterion (Theorem 6.16, each instance at the weakest level at which it is the middle of no critical cycle): %d instances lower than the rules give\n", r.Lowered)
	for _, l := range r.Refined {
		fmt.Fprintf(&b, "  %-4s %7d  %5.1f%%\n", strings.ToUpper(l.Level), l.Count, l.Percent)
	}
	if r.ExactRefined != nil {
		fmt.Fprintf(&b, "refined by the exact search: %d instances lower still; %d lower levels undecided (components over %d instances)\n", r.ExactLowered, r.ExactUndecided, ExactMax)
		for _, l := range r.ExactRefined {
			fmt.Fprintf(&b, "  %-4s %7d  %5.1f%%\n", strings.ToUpper(l.Level), l.Count, l.Percent)
		}
	}
	if list {
		b.WriteString("per instance:\n")
		for _, in := range r.Allocation {
			refined := ""
			if in.Refined != "" {
				refined = fmt.Sprintf(" (refined: %s)", strings.ToUpper(in.Refined))
			}
			fmt.Fprintf(&b, "  %-20s %-4s %s%s\n", in.Name, strings.ToUpper(in.Level), in.Why, refined)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func joinInts(xs []int) string {
	var parts []string
	for i, x := range xs {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, ", ")
}
