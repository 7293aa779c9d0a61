package weak

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cdcl"
	"github.com/hyperiso/hyperiso/solver/cnf"
)

// Budget of the core search (after a violation with duplicate values):
// models re-saturated and wall time, over the first refutation and the
// minimisation together. Beyond it the core found so far is reported,
// marked not minimal.
const (
	coreMaxModels = 5000
	coreMaxTime   = 5 * time.Second
)

// Core is a minimal unsatisfiable core of read-from choices: reads with
// several candidate writers such that every choice of a writer for each of
// them closes a cycle of co′, whatever the other such reads read from,
// even nothing (they are left out: premises only grow with wr, so reading
// nothing is the weakest choice). Minimal: leaving out any one of them
// too, some choice avoids every cycle.
type Core struct {
	Reads []CoreRead
	// Minimal is false when the budget ran out before the deletion
	// finished: Reads is still a core, but may not be minimal.
	Minimal bool
	// Cycle is one cycle the core closes: with each core read reading
	// from its first candidate in Writers order preferred by the search,
	// and the other ambiguous reads left out. Nil if none was found.
	Cycle *Violation
}

// CoreRead is one read of a Core and its candidate writers (before
// pruning, ascending).
type CoreRead struct {
	Txn     history.TxnID
	Op      int32
	Key     history.KeyID
	Value   history.ValueID
	Writers []history.TxnID
}

// Describe names the read and its candidates: "T3's read of x=5 (from T1
// or T2)".
func (r CoreRead) Describe(h *history.History) string {
	ws := make([]string, len(r.Writers))
	for i, w := range r.Writers {
		ws[i] = h.TxnString(w)
	}
	return fmt.Sprintf("%s's read of %s=%s (op %d, from %s)", h.TxnString(r.Txn), h.KeyString(r.Key), h.ValueString(r.Key, r.Value), r.Op, strings.Join(ws, " or "))
}

// Describe says what the core means in one line, listing at most max
// reads.
func (c *Core) Describe(h *history.History, max int) string {
	var b strings.Builder
	b.WriteString("every choice of writer for these reads closes a cycle (whatever the other reads with several candidate writers read)")
	if !c.Minimal {
		b.WriteString(" [not minimised: budget exhausted]")
	}
	b.WriteString(": ")
	for i, r := range c.Reads {
		if i == max {
			fmt.Fprintf(&b, ", and %d more", len(c.Reads)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Describe(h))
	}
	return b.String()
}

// findCore computes res.Core after choose proved a violation that needs
// choices. orig are the candidates of c.amb before pruning. It runs a
// second counterexample-guided search, without the theory (whose certain
// part includes the reads pruning left with one candidate, which a core
// must be free to leave out): every read with its original candidates, an
// exactly-one constraint enabled by a selector literal per read, and each
// model (a read with no true literal reads nothing) re-saturated and its
// cycles blocked. Unsatisfiability under some selectors means those reads
// form a core; the failed assumptions give a first one, which deletion
// shrinks.
func (c *checker) findCore(res *Result, orig [][]history.TxnID) error {
	if len(c.opt) > 0 || len(c.amb) == 0 {
		// Inclusion of unknown-status transactions is not covered.
		return nil
	}
	t0 := time.Now()
	defer func() { res.Timings["core"] = time.Since(t0) }()
	pruned := make([][]history.TxnID, len(c.amb))
	for i := range c.amb {
		pruned[i], c.amb[i].cands = c.amb[i].cands, orig[i]
	}
	defer func() {
		for i := range c.amb {
			c.amb[i].cands = pruned[i]
		}
	}()
	ch := &chooser{c: c, sel: make([]int32, len(c.amb))}
	if err := ch.init(true); err != nil {
		return err
	}
	assume := make([]cnf.Lit, 0, len(c.amb))
	owner := map[cnf.Lit]int32{}
	for i := range c.amb {
		ch.activate(i)
		l := cnf.Lit(ch.sel[i])
		assume = append(assume, l)
		owner[l] = int32(i)
	}
	deadline := t0.Add(coreMaxTime)
	models := 0
	// solve decides the selectors of as: unsat (with the failed ones),
	// or done false when the budget ran out.
	solve := func(as []cnf.Lit) (unsat bool, failed []cnf.Lit, done bool, err error) {
		for {
			if models >= coreMaxModels || time.Now().After(deadline) {
				return false, nil, false, nil
			}
			switch ch.s.SolveAssuming(c.ctx, as) {
			case cdcl.Unsat:
				return true, ch.s.FailedAssumptions(), true, nil
			case cdcl.Unknown:
				return false, nil, false, c.ctx.Err()
			}
			models++
			ch.readModel()
			viol, _, err := ch.saturate(1)
			if err != nil {
				return false, nil, false, err
			}
			if len(viol) == 0 {
				return false, nil, true, nil
			}
			if len(viol) < moreCyclesMin {
				more, err := ch.moreCycles(viol, moreCyclesRounds)
				if err != nil {
					return false, nil, false, err
				}
				viol = append(viol, more...)
			}
			for _, v := range viol {
				reads, ok := ch.depsOf(v.Cycle)
				if !ok {
					reads = ch.chosenReads()
				}
				ch.block(reads)
			}
		}
	}
	unsat, core, done, err := solve(assume)
	res.Counters["core_models"] = int64(models)
	if err != nil {
		return err
	}
	minimal := done
	switch {
	case !done:
		core = assume // every read: a core, since the whole is refuted
	case !unsat:
		// Cannot happen: the refutation of choose holds here too.
		return fmt.Errorf("weak: internal error: the core search found an acyclic choice the search refuted")
	}
	for i := 0; minimal && i < len(core); {
		try := slices.Delete(slices.Clone(core), i, i+1)
		unsat, failed, done, err := solve(try)
		if err != nil {
			return err
		}
		switch {
		case !done:
			minimal = false
		case unsat:
			// Keep try's order: the reads before i, each needed in a
			// larger set, are needed in every subset, so failed has them
			// all, and i indexes the first read not yet tried.
			in := map[cnf.Lit]bool{}
			for _, l := range failed {
				in[l] = true
			}
			core = slices.DeleteFunc(try, func(l cnf.Lit) bool { return !in[l] })
		default:
			i++
		}
	}
	res.Counters["core_models"] = int64(models)
	var reads []int32
	for _, l := range core {
		reads = append(reads, owner[l])
	}
	slices.Sort(reads)
	out := &Core{Minimal: minimal, Reads: make([]CoreRead, 0, len(reads))}
	for i := range ch.choice {
		ch.choice[i] = -1
	}
	for _, i := range reads {
		a := c.amb[i]
		out.Reads = append(out.Reads, CoreRead{Txn: a.txn, Op: a.op, Key: a.key, Value: a.value, Writers: slices.Clone(a.cands)})
		ch.choice[i] = ch.pref[i]
	}
	viol, _, err := ch.saturate(1)
	if err != nil {
		return err
	}
	if len(reads) == 0 {
		// The reads with one candidate close a cycle on their own (the
		// search may have refuted the choices before meeting it): report
		// those cycles, which need no choice.
		if len(viol) > 0 {
			res.Violations = viol
			for vi := range viol {
				viol[vi].Choices = []Choice{}
			}
		}
		return nil
	}
	if len(viol) > 0 {
		v := viol[0]
		ch.explainCycle(&v)
		out.Cycle = &v
	}
	res.Core = out
	return nil
}

// chosenReads lists the reads that read from a writer in the current
// choice.
func (ch *chooser) chosenReads() []int32 {
	var out []int32
	for i, j := range ch.choice {
		if j >= 0 && ch.c.in[ch.c.amb[i].txn] {
			out = append(out, int32(i))
		}
	}
	return out
}
