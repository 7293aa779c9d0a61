package explain

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/anomaly"
	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// caseTime bounds the case analysis of one counterexample.
const caseTime = 10 * time.Second

func levelName(l history.Level) string { return strings.ToUpper(l.String()) }

// fill completes ce from the final sub-history and its re-check.
func (r *run) fill(ce *Counterexample, best outcome) {
	h, sub := r.h, best.sub
	ce.Sub = sub
	ce.Size = len(sub.Orig) - 1
	ce.InitID = h.Txns[history.InitTxn].ID
	ce.Recheck = check.Unknown
	if best.res != nil {
		ce.Recheck = best.res.Verdict
	}
	dropped := map[OpRef]bool{}
	for _, d := range sub.Dropped {
		dropped[d] = true
	}
	offending := map[OpRef]bool{}
	if a := r.res.Anomalies[ce.Anomaly]; a.Op != nil && len(a.Txns) > 0 {
		if t, ok := r.txnOf(a.Txns[0]); ok {
			offending[OpRef{t, int32(*a.Op)}] = true
		}
	}
	for _, t := range sub.Orig[1:] {
		ce.Transactions = append(ce.Transactions, txnView(h, t, dropped, offending))
	}
	// Name the transactions of the sub-history's own report as the original
	// history does (their position in the session differs).
	fix := subNames(h, sub)
	if best.res != nil && best.res.Verdict == check.Violated && len(best.res.Anomalies) > 0 {
		sa := best.res.Anomalies[0]
		if ce.Method != "read-consistency" {
			ce.Type, ce.Class = sa.Type, sa.Class
			ce.Summary = fix.Replace(sa.Description)
		}
		for _, e := range sa.Edges {
			e.Reason = fix.Replace(e.Reason)
			ce.Edges = append(ce.Edges, e)
		}
	}
	if ce.Method == "read-consistency" || ce.Summary == "" {
		ce.Summary = r.originalDescription(ce)
	}
	if ce.Class == "" {
		switch ce.Type {
		case anomaly.FracturedRead, anomaly.CausalityViolation:
			ce.Class = ce.Type
		}
	}
	if r.level.AtLeast(history.SI) && ce.Method != "read-consistency" && ce.Recheck == check.Violated {
		r.cases(ce)
	}
	ce.Context = contextEdges(sub.H, r.level, ce.Edges)
	ce.Timeline = newTimeline(h, sub.Orig[1:], ce.Edges, ce.Context, defaultTimelineLimits)
	var buf bytes.Buffer
	if err := jsonl.Write(&buf, sub.H); err == nil {
		ce.History = buf.String()
	}
}

// originalDescription is the description of the explained anomaly in the
// original report.
func (r *run) originalDescription(ce *Counterexample) string {
	return r.res.Anomalies[ce.Anomaly].Description
}

// cases runs the case analysis of a strong-level counterexample and takes
// its class and cycle from it.
func (r *run) cases(ce *Counterexample) {
	sub := ce.Sub
	ctx, cancel := context.WithTimeout(r.ctx, caseTime)
	defer cancel()
	p := &prover{}
	outs, complete := proveCases(ctx, sub.H, r.level, r.opt.MaxCases)
	if len(outs) == 0 {
		return
	}
	p.h, p.level, p.reasoner = sub.H, r.level, anomaly.NewReasoner(sub.H, r.level)
	ce.CasesComplete = complete
	classes := map[string]bool{}
	for _, o := range outs {
		classes[o.cycle.Class] = true
	}
	first := outs[0]
	topChoices := first.choices
	if first.cycle.Class == anomaly.LostUpdate {
		topChoices = nil // its own reasons say that both orders fail
	}
	ce.Edges = cycleEdges(sub.H, p.reasoner, first.cycle, topChoices)
	ce.Story = first.cycle.Story(sub.H, r.level)
	if len(outs) > 1 && first.cycle.Class != anomaly.LostUpdate && len(first.choices) > 0 {
		var cs []string
		for _, c := range first.choices {
			cs = append(cs, c.text)
		}
		ce.Story = fmt.Sprintf("For instance, if %s: %s", strings.Join(cs, " and "), ce.Story)
	}
	desc := first.cycle.Describe(sub.H, r.level)
	// The class is that of the cycle shown.
	ce.Type, ce.Class = first.cycle.Class, first.cycle.Class
	if len(classes) > 1 {
		var names []string
		for _, o := range outs {
			if !containsStr(names, o.cycle.Class) {
				names = append(names, o.cycle.Class)
			}
		}
		desc = fmt.Sprintf("depending on the choices below, %s; e.g. %s", strings.Join(names, " or "), desc)
	}
	ce.Summary = fmt.Sprintf("%s violation: %s", levelName(r.level), desc)
	if len(outs) > 1 || len(first.choices) > 0 {
		for _, o := range outs {
			ce.Cases = append(ce.Cases, p.render(o))
		}
	}
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// subNames rewrites the sub-history's transaction names ("T7(s1#0)") to
// the original's ("T7(s1#6)").
func subNames(h *history.History, sub *Sub) *strings.Replacer {
	var pairs []string
	for t := 1; t < len(sub.H.Txns); t++ {
		a, b := sub.H.TxnString(history.TxnID(t)), h.TxnString(sub.Orig[t])
		if a != b {
			pairs = append(pairs, a, b)
		}
	}
	return strings.NewReplacer(pairs...)
}

// txnView renders transaction t of h with every operation.
func txnView(h *history.History, t history.TxnID, dropped, offending map[OpRef]bool) Txn {
	out := Txn{TxnRef: check.Ref(h, t), Ops: []Op{}}
	for i, op := range h.Txns[t].Ops {
		o := Op{Kind: op.Kind.String(), Key: h.Key(op.Key), Value: h.Value(op.Key, op.Value)}
		o.KeyName = h.KeyName(op.Key)
		if op.Kind == history.OpReadList {
			o.List = []int64{}
			named := false
			for _, v := range h.List(op) {
				o.List = append(o.List, h.Value(op.Key, v))
				named = named || h.ValueName(op.Key, v) != ""
			}
			if named {
				for _, v := range h.List(op) {
					o.ListNames = append(o.ListNames, h.ValueString(op.Key, v))
				}
			}
		} else {
			o.ValueName = h.ValueName(op.Key, op.Value)
			if h.IsOneOf(op.Key, op.Value) {
				// A row a value test did not return: the versions it may be.
				o.ValueName = h.ValueString(op.Key, op.Value)
			}
		}
		ref := OpRef{t, int32(i)}
		o.Dropped = dropped[ref]
		o.Offending = offending[ref]
		out.Ops = append(out.Ops, o)
	}
	return out
}

// contextEdges returns the certain so and wr edges among h's transactions
// that the cycle does not show; reads of T⊥ count only when T⊥ is on the
// cycle (a weak level's), and only on the cycle's keys.
func contextEdges(h *history.History, level history.Level, cycle []check.Edge) []check.Edge {
	type sig struct {
		from, to int64
		rel      string
		key      int64
	}
	onCycle := map[sig]bool{}
	keys := map[int64]bool{}
	initID := h.Txns[history.InitTxn].ID
	initOn := false
	for _, e := range cycle {
		initOn = initOn || e.From == initID || e.To == initID
		k := int64(-1)
		if e.Key != nil {
			k = *e.Key
			keys[k] = true
		}
		onCycle[sig{e.From, e.To, e.Relation, k}] = true
	}
	r := anomaly.NewReasoner(h, level)
	var out []check.Edge
	add := func(e hyperpolygraph.Edge) {
		k := int64(-1)
		var kp *int64
		if e.Key >= 0 {
			k = h.Key(e.Key)
			kp = &k
		}
		s := sig{h.Txns[e.From].ID, h.Txns[e.To].ID, e.Rel.String(), k}
		if onCycle[s] {
			return
		}
		out = append(out, check.Edge{From: s.from, To: s.to, Relation: s.rel, Key: kp, Reason: r.Reason(e)})
	}
	for _, s := range h.Sessions {
		for i := 1; i < len(s.Txns); i++ {
			add(hyperpolygraph.Edge{From: s.Txns[i-1], To: s.Txns[i], Rel: history.SO, Key: -1})
		}
	}
	ix := h.Index()
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status == history.Aborted {
			continue
		}
		for _, rd := range ix.Reads(history.TxnID(t)) {
			c := ix.Candidates(history.TxnID(t), rd)
			if len(c) != 1 || (c[0] == history.InitTxn && (!initOn || !keys[h.Key(rd.Key)])) {
				continue
			}
			add(hyperpolygraph.Edge{From: c[0], To: history.TxnID(t), Rel: history.WR, Key: rd.Key})
		}
	}
	return out
}
