package weak

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cdcl"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/verdict"
)

// DefaultMaxModels bounds the writer choices Check tries on reads with
// several candidate writers when Options.MaxModels is 0.
const DefaultMaxModels = 20000

// A model with fewer than moreCyclesMin cycles (one per component) is
// searched for more, up to moreCyclesRounds times.
const (
	moreCyclesMin    = 8
	moreCyclesRounds = 16
)

// Choice is the writer chosen for a read event with several candidate
// writers.
type Choice struct {
	Txn    history.TxnID // the reader
	Op     int32         // index of the read in the reader's Ops
	Key    history.KeyID
	Value  history.ValueID
	Writer history.TxnID
}

// describe names the choice in one line.
func (ch Choice) describe(h *history.History) string {
	return fmt.Sprintf("%s op %d read key %s = %s from %s", h.TxnString(ch.Txn), ch.Op, h.KeyString(ch.Key), h.ValueString(ch.Key, ch.Value), h.TxnString(ch.Writer))
}

// DescribeChoices lists the first max choices in one line, and how many
// more there are.
func DescribeChoices(h *history.History, cs []Choice, max int) string {
	var b strings.Builder
	for i, ch := range cs {
		if i == max {
			fmt.Fprintf(&b, "; and %d more", len(cs)-max)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(ch.describe(h))
	}
	return b.String()
}

// ambRead is a read event with several candidate writers.
type ambRead struct {
	txn   history.TxnID
	op    int32
	key   history.KeyID
	value history.ValueID
	// cands are the candidate writers (ascending); choose keeps those
	// taken as committed.
	cands []history.TxnID
	// slot is the event's index in evAll.
	slot int32
}

// narrow makes kept, a subset of a's candidates, its candidates, unless it
// is empty (no candidate fits: left for the search to report) or all of
// them. It returns how many were dropped and whether one is left.
func (a *ambRead) narrow(kept []history.TxnID) (dropped int, single bool) {
	if len(kept) == 0 || len(kept) == len(a.cands) {
		return 0, false
	}
	dropped = len(a.cands) - len(kept)
	a.cands = kept
	return dropped, len(kept) == 1
}

// compactEvents keeps the events with placeholders in evAll and leaves
// them out of ev, so that the saturation sees the certain part only.
func (c *checker) compactEvents() {
	c.evAll, c.allLo, c.allHi = c.ev, c.evLo, c.evHi
	c.ambAt = make([]int32, len(c.evAll))
	for i := range c.ambAt {
		c.ambAt[i] = -1
	}
	for i, a := range c.amb {
		c.ambAt[a.slot] = int32(i)
	}
	ev := make([]event, 0, len(c.evAll)-len(c.amb))
	lo, hi := make([]int32, c.n), make([]int32, c.n)
	for t := range c.n {
		lo[t] = int32(len(ev))
		for _, e := range c.evAll[c.allLo[t]:c.allHi[t]] {
			if e.writer >= 0 {
				ev = append(ev, e)
			}
		}
		hi[t] = int32(len(ev))
	}
	c.ev, c.evLo, c.evHi = ev, lo, hi
}

// chooser searches a writer for every ambiguous read (c.amb) such that the
// saturation of the resulting read-from relation is acyclic: a
// counterexample-guided loop over a SAT solver whose models are writer
// choices. Each cyclic model yields, per reported cycle, a clause that
// forbids the choices the cycle's derivation used, which no model that
// keeps them all can avoid (the premises of every edge only grow with wr).
type chooser struct {
	c *checker
	s *cdcl.Solver
	// off[i]+j+1 is the variable of "read i reads from amb[i].cands[j]".
	off []int32
	// nv counts the variables; off[i] is -1 until read i is active.
	nv int32
	// pref[i] is read i's preferred candidate, its choice while inactive.
	pref []int32
	// ambOf[slot]: the ambiguous read of an evAll slot, or -1.
	ambOf []int32
	// choice[i]: the index of the candidate chosen for read i.
	choice []int32
	// prevIn[t]: t's session predecessor among the transactions taken,
	// or T⊥.
	prevIn []history.TxnID
	// Scratch for deps and reach.
	mark   []int32
	round  int32
	deps   []int32
	bround int32
	stamp  []int32
	dist   []int32
	parent []history.TxnID
	pamb   []int32
	bfs    round01
	// varRead[v], varCand[v]: the read and candidate index of variable v,
	// or -1 (auxiliary variables).
	varRead, varCand []int32
	// inclVar[k] is the inclusion variable of c.opt[k].
	inclVar []int32
	// optDeps are the optional transactions the last depsOf needs included.
	optDeps []history.TxnID
	optMark []int32
	// th is the solver's theory, nil when models are only re-saturated.
	th *coTheory
	// onBlock, for tests, sees every blocking clause as (read, candidate
	// index) pairs.
	onBlock func(reads, cands []int32)
	// pos are the positions of a topological order of the certain part
	// that follows the file where it can (of co′: the theory's ids; of
	// so ∪ wr in the probe), nil without one; byPos, while the first guesses are made, the writers of each
	// version an ambiguous read reads, sorted by pos.
	pos   []int32
	byPos *versionsByPos
	// sel, in the core search (core.go), is each read's selector
	// variable: the read must read from a candidate only while it holds,
	// and a read with no true literal reads nothing. Nil otherwise.
	sel []int32
}

// testHook, if set (by tests), sees each chooser before the search.
var testHook func(ch *chooser)

// round01 is the deque of a 0-1 BFS.
type round01 struct{ front, back []history.TxnID }

// choose decides the level with the ambiguous reads c.amb (Check has
// validated the transactions and found nothing).
func (c *checker) choose(res *Result, opt Options) error {
	t0 := time.Now()
	defer func() { res.Timings["choose"] = time.Since(t0) }()
	maxModels := opt.MaxModels
	if maxModels == 0 {
		maxModels = DefaultMaxModels
	}
	c.addOptional()
	res.Counters["unknown_optional"] = int64(len(c.opt))
	if !opt.noProbe && len(c.opt) == 0 {
		if ok, err := c.probe(res); ok || err != nil {
			return err
		}
	}
	ch := &chooser{c: c}
	// The candidates before pruning, for the core (prune replaces slices).
	orig := make([][]history.TxnID, len(c.amb))
	for i := range c.amb {
		orig[i] = c.amb[i].cands
	}
	refuted := false
	if !opt.noPrune {
		tp := time.Now()
		c.likely = make([]history.TxnID, len(c.amb))
		for i := range c.likely {
			c.likely[i] = -1
		}
		pruned, err := c.pruneByClocks()
		if err == nil && !opt.clocksOnly {
			var more int
			more, err = c.prune()
			pruned += more
		}
		res.Timings["prune"] = time.Since(tp)
		res.Counters["candidates_pruned"] = int64(pruned)
		res.Counters["prune_clock_rounds"] = int64(c.clockRounds)
		if err != nil {
			return err
		}
	}
	if err := ch.init(opt.Resaturate); err != nil {
		return err
	}
	if testHook != nil {
		testHook(ch)
	}

	var first []Violation
	models := 0
	for {
		if models >= maxModels {
			res.Verdict = verdict.Unknown
			res.Reason = fmt.Sprintf("duplicate values: %d choices of writers for the reads with several candidate writers (%d) all gave a cyclic commit order; the search stops there (Options.MaxModels); use --level ser/si", models, len(c.amb))
			break
		}
		ts := time.Now()
		ch.syncTheory()
		r := ch.s.Solve(c.ctx)
		res.Timings["choose_solve"] += time.Since(ts)
		if r == cdcl.Sat && ch.th != nil && (len(ch.th.pending) > 0 || ch.th.dirty) {
			// The theory left out edges that close cycles through
			// inactive reads (activate them) or stale edges (rebuild):
			// solve again before saturating.
			continue
		}
		if r == cdcl.Unknown {
			if err := c.ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("weak: the writer-choice solver stopped without an answer")
		}
		if r == cdcl.Unsat {
			res.Verdict = verdict.Violated
			if first == nil {
				// The theory refuted every choice before any model: report
				// the cycles of the preferred choice, cyclic like all.
				for i := range ch.choice {
					ch.choice[i] = ch.pref[i]
				}
				var viol []Violation
				omitted := 0
				if ch.preferredInclusion() {
					var err error
					viol, omitted, err = ch.saturate(opt.MaxCycles)
					if err != nil {
						return err
					}
				}
				ch.explainCycles(viol)
				first, res.CyclesOmitted = viol, omitted
				if len(viol) == 0 {
					// No cycle: the preferred choice needs an unknown-status
					// transaction that cannot commit; its findings say why.
					res.Findings = append(res.Findings, ch.excludedFindings()...)
				}
			}
			res.Violations = first
			refuted = true
			break
		}
		models++
		ch.readModel()
		ts = time.Now()
		viol, omitted, err := ch.saturate(opt.MaxCycles)
		res.Timings["choose_saturate"] += time.Since(ts)
		if err != nil {
			return err
		}
		if len(viol) == 0 {
			res.Verdict = verdict.Satisfied
			res.Chosen = ch.chosen(nil)
			ch.included(res)
			break
		}
		ts = time.Now()
		if len(viol) < moreCyclesMin {
			more, err := ch.moreCycles(viol, moreCyclesRounds)
			if err != nil {
				return err
			}
			viol = append(viol, more...)
		}
		res.Timings["choose_more"] += time.Since(ts)
		ts = time.Now()
		certain := false
		for vi := range viol {
			reads := ch.explainCycle(&viol[vi])
			if len(reads) == 0 && len(ch.optDeps) == 0 {
				certain = true
			}
			ch.block(reads)
		}
		res.Timings["choose_deps"] += time.Since(ts)
		res.Counters["choice_cycles"] += int64(len(viol))
		if first == nil || certain {
			first = viol
			res.CyclesOmitted = omitted
			if certain {
				// A cycle that needs no choice: violated whatever the
				// ambiguous reads read from.
				res.Verdict = verdict.Violated
				res.Violations = viol
				break
			}
		}
	}
	if refuted {
		if err := c.findCore(res, orig); err != nil {
			return err
		}
	}
	res.Counters["choice_models"] = int64(models)
	ch.counters(res)
	return nil
}

// counters records the solver's and the theory's counters in res.
func (ch *chooser) counters(res *Result) {
	res.Counters["choice_vars"] = int64(ch.s.NumVars())
	if ch.th != nil {
		res.Counters["choice_theory_conflicts"] = ch.th.conflicts
		res.Counters["choice_theory_builds"] = ch.th.builds
	}
	st := ch.s.Stats()
	res.Counters["choice_decisions"] = st.Decisions
	res.Counters["choice_conflicts"] = st.Conflicts
	res.Counters["choice_restarts"] = st.Restarts
	res.Counters["choice_propagations"] = st.Propagations
}

// syncTheory activates the reads the theory asks for and rebuilds its
// graph when the inactive reads changed.
func (ch *chooser) syncTheory() {
	th := ch.th
	if th == nil {
		return
	}
	for {
		for _, i := range th.takePending() {
			ch.activate(int(i))
		}
		if !th.dirty {
			return
		}
		// activate added clauses, so the solver is back at level 0.
		for _, cl := range th.build() {
			ch.s.AddClause(cl)
		}
	}
}

// explainCycle fills v.Choices with the current choices its edges depend
// on, and returns those reads (all of them when a premise could not be
// traced).
func (ch *chooser) explainCycle(v *Violation) []int32 {
	reads, ok := ch.depsOf(v.Cycle)
	if !ok {
		// Every choice of the model: its reads and its inclusions.
		c := ch.c
		reads = ch.chosenReads()
		ch.optDeps = ch.optDeps[:0]
		for _, t := range c.opt {
			if c.in[t] {
				ch.optDeps = append(ch.optDeps, t)
			}
		}
	}
	v.Choices = ch.chosen(reads)
	return reads
}

// explainCycles is explainCycle for each violation.
func (ch *chooser) explainCycles(viol []Violation) {
	for vi := range viol {
		ch.explainCycle(&viol[vi])
	}
}

// init builds the solver: exactly one candidate per ambiguous read, with
// a preferred candidate as the first guess.
func (ch *chooser) init(resaturate bool) error {
	c := ch.c
	ch.off = make([]int32, len(c.amb))
	ch.pref = make([]int32, len(c.amb))
	ch.choice = make([]int32, len(c.amb))
	for i := range ch.off {
		ch.off[i] = -1 // inactive: the theory takes the reads as soft
	}
	var copt cdcl.Options
	if !resaturate {
		th, err := ch.newTheory()
		if err != nil {
			return err
		}
		if th != nil {
			ch.th, copt.Theory = th, th
		}
	}
	if ch.th != nil {
		ch.pos = ch.th.ids
		ch.byPos = newVersionsByPos(c, ch.pos)
	}
	for i, a := range c.amb {
		ch.pref[i] = int32(ch.preferred(i, a))
		ch.choice[i] = ch.pref[i]
	}
	ch.byPos = nil
	if ch.th != nil {
		ch.th.build()
	}
	ch.s = cdcl.New(0, copt)
	ch.ambOf = c.ambAt
	ch.prevIn = make([]history.TxnID, c.n)
	ch.setSessions()
	ch.initOptional()
	ch.mark = make([]int32, len(c.amb))
	ch.stamp = make([]int32, c.n)
	ch.dist = make([]int32, c.n)
	ch.parent = make([]history.TxnID, c.n)
	ch.pamb = make([]int32, c.n)
	return nil
}

// activate gives read i its variables and exactly-one clauses, preferring
// its current choice. A read no clause mentions keeps its preferred
// writer without any: the clauses are satisfiable with or without it, so
// an answer over the active reads is an answer over all of them.
func (ch *chooser) activate(i int) {
	if ch.off[i] >= 0 {
		return
	}
	n := len(ch.c.amb[i].cands)
	ch.off[i] = ch.nv
	ch.nv += int32(n)
	for j := range n {
		ch.setVar(ch.off[i]+int32(j)+1, int32(i), int32(j))
	}
	cl := make([]cnf.Lit, n, n+1)
	for j := range cl {
		cl[j] = ch.lit(i, j)
	}
	a := &ch.c.amb[i]
	if ch.c.optional(a.txn) {
		// The read happens iff its transaction is included.
		for _, l := range cl {
			ch.s.AddClause([]cnf.Lit{l.Not(), ch.incl(a.txn)})
		}
		ch.s.AddClause(append(cl, ch.incl(a.txn).Not()))
	} else if ch.sel != nil {
		ch.nv++
		ch.setVar(ch.nv, -1, -1)
		ch.sel[i] = ch.nv
		ch.s.AddClause(append(cl, cnf.Lit(ch.nv).Not()))
	} else {
		ch.s.AddClause(cl)
	}
	for j, w := range a.cands {
		if ch.c.optional(w) {
			ch.s.AddClause([]cnf.Lit{cl[j].Not(), ch.incl(w)})
		}
	}
	ch.atMostOne(cl[:n])
	ch.s.SetPhase(ch.lit(i, int(ch.choice[i])).Var(), true)
	if ch.th != nil {
		ch.th.activated(i)
	}
}

// setVar records what variable v stands for.
func (ch *chooser) setVar(v, read, cand int32) {
	for int(v) >= len(ch.varRead) {
		ch.varRead = append(ch.varRead, -1)
		ch.varCand = append(ch.varCand, -1)
	}
	ch.varRead[v], ch.varCand[v] = read, cand
}

func (ch *chooser) lit(i, j int) cnf.Lit { return cnf.Lit(ch.off[i] + int32(j) + 1) }

// atMostOne adds "at most one of lits": pairwise for a few, else a
// sequential counter with auxiliary variables.
func (ch *chooser) atMostOne(lits []cnf.Lit) {
	if len(lits) <= 6 {
		for a := range lits {
			for b := a + 1; b < len(lits); b++ {
				ch.s.AddClause([]cnf.Lit{lits[a].Not(), lits[b].Not()})
			}
		}
		return
	}
	// s_k: one of lits[0..k] is true.
	prev := cnf.Lit(0)
	for k, x := range lits {
		if k == len(lits)-1 {
			ch.s.AddClause([]cnf.Lit{x.Not(), prev.Not()})
			break
		}
		ch.nv++
		ch.setVar(ch.nv, -1, -1)
		sk := cnf.Lit(ch.nv)
		ch.s.AddClause([]cnf.Lit{x.Not(), sk})
		if prev != 0 {
			ch.s.AddClause([]cnf.Lit{prev.Not(), sk})
			ch.s.AddClause([]cnf.Lit{x.Not(), prev.Not()})
		}
		prev = sk
	}
}

// readModel reads the choice of the solver's model.
func (ch *chooser) readModel() {
	ch.readInclusion()
	for i, a := range ch.c.amb {
		if ch.off[i] < 0 {
			ch.choice[i] = ch.pref[i]
			continue
		}
		ch.choice[i] = -1 // none: only in the core search
		for j := range a.cands {
			if ch.s.Value(ch.lit(i, j).Var()) {
				ch.choice[i] = int32(j)
				break
			}
		}
	}
}

// block forbids the current choices of reads.
func (ch *chooser) block(reads []int32) {
	cl := make([]cnf.Lit, 0, len(reads))
	cands := make([]int32, 0, len(reads))
	for _, i := range reads {
		ch.activate(int(i))
		cl = append(cl, ch.lit(int(i), int(ch.choice[i])).Not())
		cands = append(cands, ch.choice[i])
	}
	if ch.onBlock != nil {
		ch.onBlock(reads, cands)
	}
	for _, t := range ch.optDeps {
		cl = append(cl, ch.incl(t).Not())
	}
	ch.s.AddClause(cl)
}

// chosen returns the current choices of reads (all of them if nil).
func (ch *chooser) chosen(reads []int32) []Choice {
	c := ch.c
	var out []Choice
	add := func(i int32) {
		a := c.amb[i]
		out = append(out, Choice{Txn: a.txn, Op: a.op, Key: a.key, Value: a.value, Writer: a.cands[ch.choice[i]]})
	}
	if reads == nil {
		for i := range c.amb {
			if c.in[c.amb[i].txn] {
				add(int32(i))
			}
		}
		return out
	}
	sorted := slices.Clone(reads)
	slices.Sort(sorted)
	for _, i := range sorted {
		add(i)
	}
	if out == nil {
		out = []Choice{}
	}
	return out
}

// saturate fills the placeholders with the current choice, saturates and
// returns the cycles of co′.
func (ch *chooser) saturate(maxCycles int) ([]Violation, int, error) {
	c := ch.c
	ev := append(c.ev[:0:0], c.evAll...)
	for i, a := range c.amb {
		if len(a.cands) > 0 && ch.choice[i] >= 0 {
			ev[a.slot].writer = a.cands[ch.choice[i]]
		}
	}
	c.ev, c.evLo, c.evHi = ev, c.allLo, c.allHi
	ch.ambOf = c.ambAt
	if ch.sel != nil {
		ch.dropUnchosen()
	}
	if err := c.resaturate(); err != nil {
		return nil, 0, err
	}
	if c.causalCycle {
		return c.causal, c.causalOmitted, nil
	}
	tmp := &Result{Counters: map[string]int64{}}
	if err := c.cycles(tmp, maxCycles); err != nil {
		return nil, 0, err
	}
	return tmp.Violations, tmp.CyclesOmitted, nil
}

// dropUnchosen leaves out of the events the reads with no writer chosen
// (core search), keeping ambOf in step.
func (ch *chooser) dropUnchosen() {
	c := ch.c
	ev := make([]event, 0, len(c.ev))
	ambOf := make([]int32, 0, len(c.ev))
	lo, hi := make([]int32, c.n), make([]int32, c.n)
	for t := range c.n {
		lo[t] = int32(len(ev))
		for k := c.evLo[t]; k < c.evHi[t]; k++ {
			if a := c.ambAt[k]; a >= 0 && ch.choice[a] < 0 {
				continue
			}
			ev = append(ev, c.ev[k])
			ambOf = append(ambOf, c.ambAt[k])
		}
		hi[t] = int32(len(ev))
	}
	c.ev, c.evLo, c.evHi, ch.ambOf = ev, lo, hi, ambOf
}
