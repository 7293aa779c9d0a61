// Package explain turns a violation into something a database engineer can
// act on: the smallest set of transactions that still violates the level
// (a counterexample), what kind of anomaly it is, and why each dependency of
// its cycle holds. Package render draws the result (a Report) as text,
// JSON, DOT and a self-contained HTML page.
//
// A counterexample is a sub-history (NewSub): some transactions of the
// history with T⊥ and their session order, minus the reads that could have
// read from a transaction left out. Explain starts from the transactions of
// the reported anomaly, re-checks that sub-history at the same level with
// check.Check, grows it by the writers its reads need when it is not
// violating (and falls back to the whole history), then shrinks it by
// deletion until every transaction is needed, within a budget of re-checks
// and time. Read-consistency findings need no search: the reader and the
// writers involved are the counterexample.
package explain

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/anomaly"
	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// Defaults of Budget.
const (
	DefaultChecks = 2000
	DefaultTime   = 60 * time.Second
)

// Budget bounds the effort spent on counterexamples (all of them together).
type Budget struct {
	// Checks is the number of sub-histories re-checked; 0 means
	// DefaultChecks.
	Checks int
	// Time is the wall time; 0 means DefaultTime.
	Time time.Duration
}

// ParseBudget reads a budget: a number of re-checks ("200"), a duration
// ("30s"), or both separated by a comma ("200,30s"). The part not given
// keeps its default.
func ParseBudget(s string) (Budget, error) {
	var b Budget
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if n, err := strconv.Atoi(part); err == nil {
			if n <= 0 {
				return b, fmt.Errorf("budget %q: the number of re-checks must be positive", part)
			}
			b.Checks = n
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			return b, fmt.Errorf("budget %q: want a number of re-checks (200), a duration (30s) or both (200,30s)", part)
		}
		b.Time = d
	}
	return b, nil
}

func (b Budget) withDefaults() Budget {
	if b.Checks <= 0 {
		b.Checks = DefaultChecks
	}
	if b.Time <= 0 {
		b.Time = DefaultTime
	}
	return b
}

// Options tune Explain.
type Options struct {
	// Strategy is the solver strategy of every check (see check.Options).
	Strategy string
	// DefaultLevel is the level of a transaction that declares none, for
	// level mixed (see check.Options).
	DefaultLevel history.Level
	// Budget bounds the minimisation.
	Budget Budget
	// Max is how many of the report's anomalies get a counterexample, in
	// report order (0 means 1).
	Max int
	// NoCore turns the UNSAT-core shortcut off: deletion with re-checks
	// alone (for comparisons).
	NoCore bool
	// MaxCases bounds the case analysis of uncertain read-from and version
	// orders in a counterexample (0 means 64 cases).
	MaxCases int
}

// Report is a check report with its explanation; its JSON form is the check
// report schema plus an "explanation" object.
type Report struct {
	*check.Result
	Explanation *Explanation `json:"explanation"`
}

// Explanation holds the counterexamples of a violated check.
type Explanation struct {
	// Counterexamples explain the first anomalies of the report.
	Counterexamples []*Counterexample `json:"counterexamples"`
	// Unexplained counts the report's anomalies left without one.
	Unexplained int `json:"unexplained"`
	// Note says why there is nothing to explain, when so.
	Note string `json:"note,omitempty"`
	// Budget is the budget in force and what was used of it.
	Budget BudgetUse `json:"budget"`
}

// BudgetUse reports the budget and its use.
type BudgetUse struct {
	Checks     int     `json:"checks"`
	TimeMS     float64 `json:"time_ms"`
	UsedChecks int     `json:"used_checks"`
	UsedMS     float64 `json:"used_ms"`
	Exhausted  bool    `json:"exhausted"`
}

// Counterexample is a sub-history that violates the level on its own.
type Counterexample struct {
	// Anomaly indexes the report's anomalies: the one explained.
	Anomaly int    `json:"anomaly"`
	Type    string `json:"type"`
	Class   string `json:"class,omitempty"`
	// Summary names the anomaly; Story tells its cycle edge by edge.
	Summary string `json:"summary"`
	Story   string `json:"story,omitempty"`
	// InitID is the id of T⊥, which a weak level's cycle can pass through.
	InitID int64 `json:"init_id"`
	// Size counts the transactions (T⊥ not included).
	Size int `json:"size"`
	// Transactions are the counterexample's transactions with every
	// operation; reads left out of the sub-history are marked.
	Transactions []Txn `json:"transactions"`
	// Edges is a cycle of one compatible graph of the counterexample, with
	// a reason per edge (empty for read-consistency findings).
	Edges []check.Edge `json:"edges,omitempty"`
	// Context lists the other certain dependencies among the
	// counterexample's transactions (session order, read-from of values
	// with one writer): what makes the transactions off the cycle needed,
	// and the premises of a weak level's commit-order edges.
	Context []check.Edge `json:"context,omitempty"`
	// Cases is, when the counterexample leaves read-from or version orders
	// open, the cycle each choice leads to.
	Cases []Case `json:"cases,omitempty"`
	// CasesComplete says that Cases covers every choice.
	CasesComplete bool `json:"cases_complete"`
	// Minimal says each transaction was removed in turn and the rest
	// re-checked as satisfying the level.
	Minimal bool `json:"minimal"`
	// Minimality explains Minimal in words.
	Minimality string `json:"minimality"`
	// Method says where the search started: "read-consistency" (nothing to
	// search), "anomaly" (the reported anomaly's transactions), "grown" (plus
	// the writers of their reads), "whole-history".
	Method string `json:"method"`
	// Core says how an UNSAT core narrowed the search, when it did.
	Core string `json:"core,omitempty"`
	// Checks counts the sub-histories re-checked for this counterexample.
	Checks    int     `json:"checks"`
	ElapsedMS float64 `json:"elapsed_ms"`
	// Recheck is the verdict of checking the counterexample alone.
	Recheck check.Verdict `json:"recheck"`
	// History is the counterexample in hyperiso's JSON Lines format.
	History string `json:"history_jsonl,omitempty"`
	// Timeline is the history around the counterexample, session by
	// session (see Timeline).
	Timeline *Timeline `json:"timeline,omitempty"`
	// Sub is the counterexample as a history.
	Sub *Sub `json:"-"`
}

// Txn is one transaction of a counterexample.
type Txn struct {
	check.TxnRef
	Ops []Op `json:"ops"`
}

// Op is one operation, with raw key and value.
type Op struct {
	Kind    string  `json:"op"`
	Key     int64   `json:"key"`
	KeyName string  `json:"key_name,omitempty"`
	Value   int64   `json:"value"`
	List    []int64 `json:"list,omitempty"`
	// ValueName and ListNames give the value and the list elements as read
	// when they were names (Value and List then hold stand-ins).
	ValueName string   `json:"value_name,omitempty"`
	ListNames []string `json:"list_names,omitempty"`
	// Dropped marks a read left out of the counterexample: it could have
	// read from a transaction outside it.
	Dropped bool `json:"dropped,omitempty"`
	// Offending marks the read a read-consistency finding is about.
	Offending bool `json:"offending,omitempty"`
}

// Case is one combination of uncertain choices and the cycle it closes.
type Case struct {
	Choices []string     `json:"choices"`
	Class   string       `json:"class"`
	Edges   []check.Edge `json:"edges"`
}

// Explain checks h at level and explains the violation, if any.
func Explain(ctx context.Context, h *history.History, level history.Level, opt Options) (*Report, error) {
	res, err := check.Check(ctx, h, level, opt.checkOptions())
	if err != nil {
		return &Report{Result: res}, err
	}
	ex, err := ExplainResult(ctx, h, level, res, opt)
	return &Report{Result: res, Explanation: ex}, err
}

// ExplainResult explains res, the result of checking h at level.
func ExplainResult(ctx context.Context, h *history.History, level history.Level, res *check.Result, opt Options) (*Explanation, error) {
	b := opt.Budget.withDefaults()
	r := &run{ctx: ctx, h: h, level: level, res: res, opt: opt, start: time.Now(), maxChecks: b.Checks}
	r.deadline = r.start.Add(b.Time)
	ex := &Explanation{Counterexamples: []*Counterexample{}}
	ex.Budget.Checks, ex.Budget.TimeMS = b.Checks, ms(b.Time)
	defer func() {
		ex.Budget.UsedChecks, ex.Budget.UsedMS, ex.Budget.Exhausted = r.checks, ms(time.Since(r.start)), r.exhausted
	}()
	if res.Verdict != check.Violated {
		ex.Note = fmt.Sprintf("the history is not shown to violate %s (verdict %s): nothing to explain", strings.ToUpper(level.String()), res.Verdict)
		return ex, nil
	}
	max := opt.Max
	if max <= 0 {
		max = 1
	}
	for i, a := range res.Anomalies {
		if i >= max {
			ex.Unexplained = len(res.Anomalies) - i
			break
		}
		ce, err := r.explain(i, a)
		if err != nil {
			return ex, err
		}
		ex.Counterexamples = append(ex.Counterexamples, ce)
	}
	return ex, nil
}

// checkOptions are the options of the first check and of every re-check.
func (o Options) checkOptions() check.Options {
	return check.Options{Strategy: o.Strategy, DefaultLevel: o.DefaultLevel}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// run is the state of one Explain call.
type run struct {
	ctx       context.Context
	h         *history.History
	level     history.Level
	res       *check.Result
	opt       Options
	start     time.Time
	deadline  time.Time
	checks    int
	maxChecks int
	exhausted bool
	// lastCost is how long the last re-check took.
	lastCost time.Duration
	refs     map[[2]int64]history.TxnID
}

// txnOf maps a report's TxnRef back to h's TxnID.
func (r *run) txnOf(ref check.TxnRef) (history.TxnID, bool) {
	if ref.Index < 0 {
		return history.InitTxn, true
	}
	if r.refs == nil {
		r.refs = map[[2]int64]history.TxnID{}
		for t := 1; t < len(r.h.Txns); t++ {
			r.refs[[2]int64{r.h.SessionOf(history.TxnID(t)), int64(r.h.Txns[t].Index)}] = history.TxnID(t)
		}
	}
	t, ok := r.refs[[2]int64{ref.Session, int64(ref.Index)}]
	return t, ok
}

// outcome is the result of re-checking one candidate.
type outcome struct {
	violated bool
	// definitive: the check answered (satisfied or violated), rather than
	// running out of budget or returning unknown.
	definitive bool
	sub        *Sub
	res        *check.Result
}

// test re-checks the sub-history of keep at the level.
func (r *run) test(keep []bool, force map[OpRef]bool) outcome {
	if r.checks >= r.maxChecks || !time.Now().Before(r.deadline) || r.ctx.Err() != nil {
		r.exhausted = true
		return outcome{}
	}
	r.checks++
	t0 := time.Now()
	defer func() { r.lastCost = time.Since(t0) }()
	sub := NewSub(r.h, keep, force)
	ctx, cancel := context.WithDeadline(r.ctx, r.deadline)
	defer cancel()
	res, err := check.Check(ctx, sub.H, r.level, r.opt.checkOptions())
	if err != nil || res == nil {
		if ctx.Err() != nil {
			r.exhausted = true
		}
		return outcome{sub: sub}
	}
	switch res.Verdict {
	case check.Violated:
		return outcome{violated: true, definitive: true, sub: sub, res: res}
	case check.Satisfied:
		return outcome{definitive: true, sub: sub, res: res}
	}
	return outcome{sub: sub, res: res}
}

// subTxns maps the transactions of a sub-history anomaly to h's TxnIDs.
func subTxns(sub *Sub, a check.Anomaly) []history.TxnID {
	idx := map[[2]int64]history.TxnID{}
	for t := 1; t < len(sub.H.Txns); t++ {
		idx[[2]int64{sub.H.SessionOf(history.TxnID(t)), int64(sub.H.Txns[t].Index)}] = history.TxnID(t)
	}
	var out []history.TxnID
	for _, ref := range a.Txns {
		if ref.Index < 0 {
			continue
		}
		if t, ok := idx[[2]int64{ref.Session, int64(ref.Index)}]; ok {
			out = append(out, sub.Orig[t])
		}
	}
	return out
}

func (r *run) explain(i int, a check.Anomaly) (*Counterexample, error) {
	start, checks0 := time.Now(), r.checks
	ce := &Counterexample{Anomaly: i, Type: a.Type, Class: a.Class}
	defer func() { ce.Checks, ce.ElapsedMS = r.checks-checks0, ms(time.Since(start)) }()
	h := r.h
	var s0 []history.TxnID
	for _, ref := range a.Txns {
		if t, ok := r.txnOf(ref); ok && t != history.InitTxn {
			s0 = append(s0, t)
		}
	}
	if len(s0) == 0 {
		// A refutation that names nobody (the solver ruled out every
		// graph without a last cycle to show): shrink the whole history.
		for t := 1; t < len(h.Txns); t++ {
			if h.Txns[t].Status != history.Aborted {
				s0 = append(s0, history.TxnID(t))
			}
		}
		if len(s0) == 0 {
			return nil, fmt.Errorf("explain: anomaly %d (%s) names no transaction, and the history has none that committed", i, a.Type)
		}
	}
	var (
		best  outcome
		force map[OpRef]bool
	)
	if a.Op != nil && a.Key != nil {
		best, force = r.readConsistency(ce, a, s0)
	} else {
		best = r.minimize(ce, s0)
	}
	if best.sub == nil {
		// Budget gone before anything was re-checked: report the anomaly's
		// own transactions, unverified.
		keep := make([]bool, len(h.Txns))
		for _, t := range s0 {
			keep[t] = true
		}
		best.sub = NewSub(h, keep, force)
		ce.Minimality = "not verified: the budget ran out before the counterexample could be re-checked"
	}
	r.fill(ce, best)
	return ce, nil
}

// readConsistency explains a finding on one read: the reader, the writers
// the finding names, and for internal-consistency findings the writers of
// the reader's reads of the key, so that those reads stay what they were.
func (r *run) readConsistency(ce *Counterexample, a check.Anomaly, s0 []history.TxnID) (outcome, map[OpRef]bool) {
	h := r.h
	ce.Method = "read-consistency"
	reader := s0[0]
	keep := make([]bool, len(h.Txns))
	for _, t := range s0 {
		keep[t] = true
	}
	force := map[OpRef]bool{{reader, int32(*a.Op)}: true}
	op := h.Txns[reader].Ops[*a.Op]
	if a.Class == anomaly.Internal {
		ix := h.Index()
		for j, o := range h.Txns[reader].Ops {
			if o.Key == op.Key && o.Kind.IsRead() {
				force[OpRef{reader, int32(j)}] = true
				for _, w := range ix.Writers(o.Key, o.Value) {
					keep[w] = true
				}
			}
		}
	}
	out := r.test(keep, force)
	switch {
	case out.violated && len(out.res.Anomalies) > 0 && out.res.Anomalies[0].Type == a.Type:
		ce.Minimal = true
		ce.Minimality = "minimal by construction: the read, its transaction and the writers of the value it returned"
	case out.violated:
		ce.Minimality = fmt.Sprintf("the reader and writers alone show %s rather than %s", out.res.Anomalies[0].Type, a.Type)
	case out.sub != nil:
		ce.Minimality = "the reader and writers alone were not rejected; shown as found"
	}
	return out, force
}
