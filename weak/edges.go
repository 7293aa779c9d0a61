package weak

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

// Rule is the premise behind an inferred co′ edge From → To. In each, To
// is the writer Reader read Key from, and From writes Key too.
type Rule uint8

const (
	// NoRule: the edge is not inferred.
	NoRule Rule = iota
	// RuleRC: Reader read Via from From before it read Key from To (RC).
	RuleRC
	// RuleSession: From precedes Reader in session order (RA, CC).
	RuleSession
	// RuleReadFrom: Reader read Via from From (RA, CC).
	RuleReadFrom
	// RuleCausal: From reaches Reader in (so ∪ wr)⁺, but neither precedes
	// it in its session nor is read by it (CC).
	RuleCausal
)

// Edge is one edge of co′.
type Edge struct {
	From, To history.TxnID
	Rel      history.Rel
	// Key is, for WR, a key To read from From; for CO, the key Reader read
	// from To that From writes too; -1 for SO.
	Key history.KeyID
	// Rule, Reader and Via give the premise of a CO edge.
	Rule   Rule
	Reader history.TxnID
	// Via is a key Reader read from From (RuleRC, RuleReadFrom), else -1.
	Via history.KeyID
}

// Reason explains the edge in one line.
func (e Edge) Reason(h *history.History) string {
	from, to := h.TxnString(e.From), h.TxnString(e.To)
	switch e.Rel {
	case history.SO:
		if e.From == history.InitTxn {
			return fmt.Sprintf("the initial state precedes %s", to)
		}
		return fmt.Sprintf("%s precedes %s in session %d", from, to, h.SessionOf(e.From))
	case history.WR:
		return fmt.Sprintf("%s read key %s = %s from %s", to, h.KeyString(e.Key), h.ValueString(e.Key, finalWrite(h, e.From, e.Key)), from)
	case history.WW:
		return fmt.Sprintf("the lists read at key %s order %s's appends before %s's (a version holds %s's and not %s's)", h.KeyString(e.Key), from, to, from, to)
	}
	x, rd := h.KeyString(e.Key), h.TxnString(e.Reader)
	var premise string
	switch e.Rule {
	case RuleRC:
		premise = fmt.Sprintf("%s read key %s from %s before it read key %s from %s", rd, h.KeyString(e.Via), from, x, to)
	case RuleSession:
		premise = fmt.Sprintf("%s precedes %s in session %d, and %s read key %s from %s", from, rd, h.SessionOf(e.From), rd, x, to)
	case RuleReadFrom:
		premise = fmt.Sprintf("%s read key %s from %s and key %s from %s", rd, h.KeyString(e.Via), from, x, to)
	default:
		premise = fmt.Sprintf("%s happens before %s, which read key %s from %s", from, rd, x, to)
	}
	return fmt.Sprintf("%s; %s writes key %s too, so it commits before %s", premise, from, x, to)
}

// finalWrite returns t's final write of key k (-1 if none).
func finalWrite(h *history.History, t history.TxnID, k history.KeyID) history.ValueID {
	for _, w := range h.Index().Writes(t) {
		if w.Key == k {
			return w.Value
		}
	}
	return -1
}

// Kind classifies a cycle.
type Kind uint8

const (
	// G1c: a cycle of so ∪ wr alone (a causality cycle); it violates
	// every level.
	G1c Kind = iota
	// FracturedRead: the cycle needs an RA wr-case ordering: a transaction
	// observed some writes of T2 but read another key from a writer that
	// must commit after T2.
	FracturedRead
	// CausalityViolation: the cycle needs an ordering through session
	// order or a happens-before path: a transaction read a version older
	// than one in its causal past.
	CausalityViolation
	// CommitCycle: any other co′ cycle (RC orderings only).
	CommitCycle
	// G0: a cycle of version orders (and session order) alone: the writes
	// of its transactions interleave on several keys (write cycle). It
	// violates every level.
	G0
)

var kindNames = [...]string{history.G1c, history.FracturedRead, history.CausalityViolation, history.CommitCycle, history.G0}

// String returns the stable name used in reports.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Violation is a cycle of co′.
type Violation struct {
	Kind Kind
	// Cycle lists the edges in order; each edge's To is the next one's
	// From, and the last edge's To is the first one's From.
	Cycle []Edge
	// Choices, when reads have several candidate writers, are the writer
	// choices the cycle's edges depend on (empty: it needs none). Every
	// choice that keeps them all has the cycle.
	Choices []Choice
}

// Inferred counts the CO edges of the cycle.
func (v Violation) Inferred() int {
	n := 0
	for _, e := range v.Cycle {
		if e.Rel == history.CO {
			n++
		}
	}
	return n
}

// Txns lists the transactions of the cycle in order.
func (v Violation) Txns() []history.TxnID {
	out := make([]history.TxnID, len(v.Cycle))
	for i, e := range v.Cycle {
		out[i] = e.From
	}
	return out
}

// Describe explains the violation in one line.
func (v Violation) Describe(h *history.History) string {
	size := fmt.Sprintf("a cycle of %d edges (%d inferred)", len(v.Cycle), v.Inferred())
	ww, so := 0, ""
	for _, e := range v.Cycle {
		switch e.Rel {
		case history.WW:
			ww++
		case history.SO:
			so = " with session order"
		}
	}
	switch {
	case v.Kind == G0:
		return fmt.Sprintf("write cycle: the version orders the lists show (%d of the %d edges)%s form a cycle through %d transactions, which no commit order can contain", ww, len(v.Cycle), so, len(v.Cycle))
	case v.Kind == G1c && ww > 0:
		return fmt.Sprintf("dependency cycle: read dependencies and the version orders the lists show (%d of the %d edges) form a cycle through %d transactions, which no commit order can contain", ww, len(v.Cycle), len(v.Cycle))
	case v.Kind == G1c:
		return fmt.Sprintf("causality cycle: so ∪ wr has a cycle through %d transactions, which no commit order can contain", len(v.Cycle))
	}
	var key *Edge
	for i := range v.Cycle {
		e := &v.Cycle[i]
		if e.Rel != history.CO {
			continue
		}
		if key == nil || (v.Kind == FracturedRead && e.Rule == RuleReadFrom && key.Rule != RuleReadFrom) ||
			(v.Kind == CausalityViolation && e.Rule == RuleCausal && key.Rule != RuleCausal) {
			key = e
		}
	}
	if key == nil {
		return "commit-order cycle: " + size
	}
	var what string
	x, rd := h.KeyString(key.Key), h.TxnString(key.Reader)
	from, to := h.TxnString(key.From), h.TxnString(key.To)
	switch v.Kind {
	case FracturedRead:
		what = fmt.Sprintf("fractured read: %s observed %s (key %s) but read key %s from %s, which the rest of the cycle orders before %s", rd, from, h.KeyString(key.Via), x, to, from)
	case CausalityViolation:
		what = fmt.Sprintf("causality violation: %s happens before %s and writes key %s, yet %s read key %s from %s, which the rest of the cycle orders before %s", from, rd, x, rd, x, to, from)
	default:
		what = fmt.Sprintf("non-monotonic reads: %s read key %s from %s before it read key %s from %s, which the rest of the cycle orders before %s", rd, h.KeyString(key.Via), from, x, to, from)
	}
	return what + "; the commit order would need " + size
}

// classify names a cycle by the premises of its inferred edges: without
// any, G0 if it has no read dependency, else G1c (Adya).
func classify(cyc []Edge) Kind {
	kind := G0
	for _, e := range cyc {
		if e.Rel == history.WR && kind == G0 {
			kind = G1c
		}
		if e.Rel != history.CO {
			continue
		}
		switch e.Rule {
		case RuleReadFrom:
			return FracturedRead
		case RuleSession, RuleCausal:
			kind = CausalityViolation
		default:
			if kind == G1c || kind == G0 {
				kind = CommitCycle
			}
		}
	}
	return kind
}
