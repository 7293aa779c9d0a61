package strong

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/verdict"
)

// Levels returns each transaction's level in a mixed-level history: the
// one it declares, or def when it declares none (T⊥ counts as SER). It
// fails for a transaction that may have committed and has no level when
// def is LevelNone, and for one that declares strict SER or mixed, which
// are no transaction levels MixIso defines.
func Levels(h *history.History, def history.Level) ([]history.Level, error) {
	out := make([]history.Level, len(h.Txns))
	out[history.InitTxn] = history.SER
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		l := tx.Level
		if l == history.LevelNone {
			l = def
		}
		switch r, _ := l.Row(); {
		case r.Declarable:
		case l == history.LevelNone:
			if tx.Status == history.Aborted {
				continue // takes no part
			}
			return nil, fmt.Errorf("%s declares no level and no default level is given", h.TxnString(history.TxnID(t)))
		default:
			return nil, fmt.Errorf("%s declares level %s; a mixed check takes %s", h.TxnString(history.TxnID(t)), l, history.LevelList(", ", history.IsDeclarable))
		}
		out[t] = l
	}
	return out, nil
}

// everyAt holds every transaction of h to level (T⊥ counts as SER).
func everyAt(h *history.History, level history.Level) []history.Level {
	out := make([]history.Level, len(h.Txns))
	for t := range out {
		out[t] = level
	}
	out[history.InitTxn] = history.SER
	return out
}

// pruneMixed runs hyperpolygraph.PruneMixed on g as the prune stage, with
// its timing and counters.
func (r *run) pruneMixed(g *hyperpolygraph.Graph, out *Outcome) {
	t := time.Now()
	r.enter(out, "prune")
	pairs, reads := hyperpolygraph.PruneMixed(g)
	out.TimingsMS["prune"] = ms(time.Since(t))
	out.Counters["ww_constraints_pruned"] = int64(len(g.WW))
	out.Counters["wr_constraints_pruned"] = int64(len(g.WR))
	out.Counters["mixed_pruned_pairs"], out.Counters["mixed_pruned_reads"] = int64(pairs), int64(reads)
}

// prepareMixed prunes g as far as every mix allows (hyperpolygraph.
// PruneMixed, on the certain part: call it after SplitOptional) and readies
// it for the per-model test (hyperpolygraph.NewMixed). An unknown-status
// transaction inconsistent at its own level was left out by the plan.
func (r *run) prepareMixed(g *hyperpolygraph.Graph, out *Outcome) *Violation {
	r.pruneMixed(g, out)
	m, viol := hyperpolygraph.NewMixed(g, r.levels)
	if viol != nil {
		return &Violation{Kind: UnwrittenRead, Reader: viol.Reader, Read: viol.Read}
	}
	r.mixed = m
	return nil
}

// mixedStrategy decides a mixed-level history like PSI and PC: the lazy
// search on gini, each model's compatible graph tested by
// Compatible.FindMixedCycles (a state graph of snapshots, commits and
// joins, and what non-prefix transactions see). The blame of the last
// structure ruled out goes with the refutation.
func mixedStrategy(r *run) Strategy {
	return Strategy{Name: "lazy-gini-mixed", solve: func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		var blames []hyperpolygraph.Blame
		var cycles [][]int
		var comp *hyperpolygraph.Compatible
		find := func(c *hyperpolygraph.Compatible, max int) [][]int {
			comp = c
			cycles, blames = c.FindMixedCycles(r.mixed.For(c.G), max)
			return cycles
		}
		err := lazySolve(ctx, enc, newGini(enc.NumVars), find, out)
		r.blame = nil
		if err == nil && !out.sat && len(blames) > 0 {
			// lazySolve reports the first structure of the last model, or
			// the one of certain edges alone that ended the search.
			r.blame = &blames[0]
			for i, cyc := range cycles {
				if slices.Equal(cycleEdges(comp, cyc), out.lastCycle) {
					r.blame = &blames[i]
					break
				}
			}
		}
		return err
	}}
}

// mixedWitness is the arbitration order of an accepted model, T⊥ left
// out, with each prefix-level transaction's snapshot (how many of the
// order it sees; -1 for the others).
func mixedWitness(c *hyperpolygraph.Compatible, m *hyperpolygraph.Mixed) (order []history.TxnID, snaps []int) {
	all, snap, _ := c.MixedOrder(m.For(c.G))
	for i, t := range all {
		if t == history.InitTxn {
			continue
		}
		order = append(order, t)
		if snap[i] > 0 {
			snap[i]-- // T⊥ comes first and is not listed
		}
		snaps = append(snaps, snap[i])
	}
	return order, snaps
}

// rcOptional makes optional the unknown-status transactions that only the
// re-reads of transactions whose reads are apart (RC, RR) can use (planUnknown looks at first reads)
// and, as planUnknown does, the unknown candidates of those transactions'
// reads. An optional transaction is decided by the solver, so making more
// of them optional is exact; those that cannot have committed stay out.
func rcOptional(h *history.History, levels []history.Level, p *unknownPlan) {
	ix := h.Index()
	var queue []history.TxnID
	add := func(w history.TxnID) {
		if h.Txns[w].Status == history.Unknown && !p.forced[w] && !p.optional[w] && !p.bad[w] {
			p.optional[w] = true
			p.nOpt++
			queue = append(queue, w)
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		if !levels[t].ReadsApart() || h.Txns[t].Status == history.Aborted {
			continue
		}
		touched := map[history.KeyID]bool{}
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsRead() && touched[op.Key] {
				for _, w := range ix.Writers(op.Key, op.Value) {
					if w != history.TxnID(t) {
						add(w)
					}
				}
			}
			touched[op.Key] = true
		}
	}
	for len(queue) > 0 {
		u := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, r := range ix.Reads(u) {
			for _, w := range ix.Candidates(u, r) {
				add(w)
			}
		}
	}
}

// SERFirst lets a mixed, PC or PSI check first try the whole history at
// SER; tests turn it off to put every history through the search.
var SERFirst = true

// serFirst decides a mixed (or PC, or PSI) history satisfied when the
// whole history is serializable: SER(T) implies every other level of T in the same
// execution (MixIso, Theorem 3.4; RC too, its reads seeing all of VIS), so
// a serial order is a witness for any mix. It needs the history to pass
// validation at SER (an RC transaction's non-repeatable read does not),
// and returns nil, to go on with the mixed search, when it does not or
// when SER is violated.
func serFirst(ctx context.Context, h *history.History, levels []history.Level, opt Options) (*Outcome, error) {
	out, err := wholeAt(ctx, h, history.SER, opt, "ser_first")
	if out == nil || err != nil {
		return out, err
	}
	// A serial order: a prefix-level transaction sees everything before it.
	out.Snapshots = make([]int, len(out.Order))
	for i, t := range out.Order {
		out.Snapshots[i] = -1
		if prefixLevel(levels[t]) {
			out.Snapshots[i] = i
		}
	}
	return out, nil
}

// siFirst decides a PC, PSI or mixed history satisfied when the whole
// history satisfies SI and no transaction asks for more (SER): SI(T)
// implies each weaker level of T in the same execution (MixIso, Theorem
// 3.4), so SI's commit order is a witness, with SI's snapshots for the
// prefix levels (PC, SI) and none for the others. SI's pipeline prunes
// with all of SI's strength, which the searches of PC, PSI and mixes
// lack: on a history recorded at snapshot isolation it settles what they
// take seconds over. It returns nil, to go on with the search, when SI is
// violated or cannot be checked (validation), or some transaction (T⊥
// aside, which Levels puts at SER) is SER.
func siFirst(ctx context.Context, h *history.History, levels []history.Level, opt Options) (*Outcome, error) {
	// SI's witness is one only for levels SI implies (not SER, not RR).
	if slices.ContainsFunc(levels[1:], func(l history.Level) bool { return l != history.LevelNone && !history.SI.AtLeast(l) }) {
		return nil, nil
	}
	out, err := wholeAt(ctx, h, history.SI, opt, "si_first")
	if out == nil || err != nil {
		return out, err
	}
	for i, t := range out.Order {
		if !prefixLevel(levels[t]) {
			out.Snapshots[i] = -1
		}
	}
	return out, nil
}

// wholeAt decides the whole history at level (SER or SI) with the default
// strategy, for serFirst and siFirst: its outcome when satisfied, with
// counter and timing name set, else nil (also when SERFirst is off or the
// history fails validation, which these levels need).
func wholeAt(ctx context.Context, h *history.History, level history.Level, opt Options, name string) (*Outcome, error) {
	// At SER and SI every transaction has one visible set, so its reads of
	// a key narrow its first one (rows a value test did not return).
	h = h.NarrowReads(func(history.TxnID) bool { return false })
	if !SERFirst || len(h.Validate()) > 0 {
		return nil, nil
	}
	start := time.Now()
	opt.Strategy, opt.DefaultLevel = "", history.LevelNone
	out, err := Decide(ctx, h, level, opt)
	if err != nil {
		return out, err
	}
	if out.Verdict != verdict.Satisfied {
		return nil, nil // the search decides, and says why
	}
	out.Counters[name] = 1
	out.TimingsMS[name] = ms(time.Since(start))
	return out, nil
}

func prefixLevel(l history.Level) bool { return l.SeesPrefix() }

// refuteItems decides the item part of h (History.ItemReads) at level
// (SER, for RR): its outcome when violated, else nil. It returns nil too
// when the item part fails validation or has no predicate read to leave
// out (the search decides, and says why).
func refuteItems(ctx context.Context, h *history.History, level history.Level, opt Options) (*Outcome, error) {
	if !SERFirst || len(h.Selects) == 0 {
		return nil, nil
	}
	start := time.Now()
	items := h.ItemReads()
	if len(items.Validate()) > 0 {
		return nil, nil
	}
	opt.Strategy, opt.DefaultLevel = "", history.LevelNone
	out, err := Decide(ctx, items, level, opt)
	if err != nil || out.Verdict != verdict.Violated {
		return nil, err
	}
	out.Counters["items_refuted"] = 1
	out.TimingsMS["items_refuted"] = ms(time.Since(start))
	return out, nil
}
