package weak

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

// DefaultMaxCycles is the number of cycles Check reports when
// Options.MaxCycles is 0.
const DefaultMaxCycles = 1000

// Options tune Check.
type Options struct {
	// MaxCycles bounds the cycles reported (one per strongly connected
	// component); 0 means DefaultMaxCycles, a negative value no bound.
	MaxCycles int
	// CommittedValidated says that the caller has validated the committed
	// transactions and found nothing the level forbids (check.Check does),
	// so that only the unknown-status transactions taken as committed are
	// validated again.
	CommittedValidated bool
	// Fit is asked whether need more bytes fit the memory budget before
	// the allocations that grow faster than the history: CC's clocks (one
	// per transaction and session) and the inferred co′ edges (up to
	// n^{3/2} for RC and RA, n·k for CC). Its error stops Check. Nil: no
	// bound.
	Fit func(need int64, what string) error
	// MaxModels bounds the writer choices tried when reads have several
	// candidate writers (choose.go); 0 means DefaultMaxModels. Beyond it
	// the verdict is Undecided.
	MaxModels int
	// Resaturate decides the reads with several candidate writers without
	// the solver theory (theory.go): each model is only re-saturated and
	// its cycles blocked.
	Resaturate bool
	// noPrune, for tests, skips the pruning of candidate writers;
	// clocksOnly skips the reachability matrices (prune.go) but not the
	// clocks (clockprune.go).
	noPrune, clocksOnly bool
	// noProbe, for tests, skips the probe of the preferred writers
	// (choose.go), so that the pruning and the search see every history.
	noProbe bool
}

// Result is the outcome of Check.
type Result struct {
	Level   history.Level
	Verdict verdict.Verdict
	// Findings are the read-consistency findings forbidden at Level, on
	// the transactions taken as committed.
	Findings []history.Finding
	// Violations are the cycles found, one per strongly connected
	// component of co′ (of so ∪ wr for G1c), at most Options.MaxCycles.
	Violations []Violation
	// CyclesOmitted counts the components beyond Options.MaxCycles.
	CyclesOmitted int
	// Duplicates, when non-nil, describes the reads with several candidate
	// writers (decided by the search of choose.go, or, with uncertain list
	// appenders, on the other reads only).
	Duplicates *Duplicates
	// Chosen, for a Satisfied verdict with Duplicates, is the witness: the
	// writer chosen for every read with several candidate writers.
	Chosen []Choice
	// Core, for a Violated verdict that needs writer choices, is a
	// minimal set of reads with several candidate writers every choice
	// for which closes a cycle (core.go); nil when not computed (the
	// cycle needs no choice, or unknown-status transactions could commit).
	Core *Core
	// Reason says why the verdict is Undecided (empty: Duplicates.Reason).
	Reason string
	// Included lists the unknown-status transactions taken as committed,
	// ascending.
	Included []history.TxnID
	// Order, for a Satisfied verdict decided by saturation alone, is the
	// witness: the transactions taken as committed (T⊥ left out) in a
	// topological order of co′, a commit order that satisfies the level.
	Order []history.TxnID
	// Counters are sizes of the computation: read events, wr edges,
	// inferred co′ edges, components, ….
	Counters map[string]int64
	// Timings are the durations of the stages: prepare (read resolution,
	// unknown transactions, validation), saturate, cycles.
	Timings map[string]time.Duration
}

// Duplicates describes the read events with several candidate writers.
type Duplicates struct {
	// Reads counts them.
	Reads int
	// Txn, Op, Key and Value locate the first one; Writers are its
	// candidate writers.
	Txn     history.TxnID
	Op      int32
	Key     history.KeyID
	Value   history.ValueID
	Writers []history.TxnID
}

// Reason says in one line why the level was not decided.
func (d *Duplicates) Reason(h *history.History) string {
	var b strings.Builder
	fmt.Fprintf(&b, "duplicate values: %d read", d.Reads)
	if d.Reads == 1 {
		b.WriteString(" has")
	} else {
		b.WriteString("s have")
	}
	fmt.Fprintf(&b, " several candidate writers, e.g. %s op %d read key %s = %s, written by ",
		h.TxnString(d.Txn), d.Op, h.KeyString(d.Key), h.ValueString(d.Key, d.Value))
	for i, w := range d.Writers {
		switch {
		case i == 0:
		case i == len(d.Writers)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(h.TxnString(w))
	}
	b.WriteString("; the weak checkers need a unique writer per read; use --level ser/si")
	return b.String()
}

// Check decides whether h satisfies level, which must be history.RC,
// history.RA or history.CC. It fails only for another level or when ctx is
// done.
func Check(ctx context.Context, h *history.History, level history.Level, opt Options) (*Result, error) {
	if r, _ := level.Row(); r.Engine != history.Weak {
		return nil, fmt.Errorf("weak: level %v is not one of %s", level, history.LevelList(", ", func(r history.LevelRow) bool { return r.Engine == history.Weak }))
	}
	if opt.MaxCycles == 0 {
		opt.MaxCycles = DefaultMaxCycles
	}
	res := &Result{
		Level:    level,
		Counters: map[string]int64{},
		Timings:  map[string]time.Duration{},
	}
	c := newChecker(ctx, h, level)
	c.maxCycles = opt.MaxCycles
	c.fit = opt.Fit

	t0 := time.Now()
	c.resolve()
	for t := range h.Txns {
		if c.in[t] && h.Txns[t].Status == history.Unknown {
			res.Included = append(res.Included, history.TxnID(t))
		}
	}
	validate := func(t history.TxnID) bool { return c.in[t] }
	if opt.CommittedValidated {
		if len(res.Included) == 0 {
			validate = nil
		} else {
			validate = func(t history.TxnID) bool { return c.in[t] && h.Txns[t].Status != history.Committed }
		}
	}
	var findings []history.Finding
	if validate != nil {
		findings = h.ValidateTxns(validate)
	}
	for _, f := range findings {
		if f.Kind.ForbiddenAt(level) {
			res.Findings = append(res.Findings, f)
		}
	}
	res.Timings["prepare"] = time.Since(t0)
	res.Counters["transactions_taken"] = int64(c.nIn - 1)
	res.Counters["unknown_taken"] = int64(len(res.Included))
	res.Counters["read_events"] = int64(len(c.ev))
	res.Counters["wr_edges"] = int64(c.nWR)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if c.dups.Reads > 0 {
		// The reads with a unique writer still force their orderings
		// whatever the others read from, so a cycle among them is a
		// violation; no cycle decides nothing.
		d := c.dups
		res.Duplicates = &d
		res.Counters["duplicate_reads"] = int64(d.Reads)
	}

	if c.dups.Reads > 0 && len(res.Findings) == 0 {
		return res, c.choose(res, opt)
	}

	t1 := time.Now()
	err := c.saturate()
	res.Timings["saturate"] = time.Since(t1)
	res.Counters["co_inferred"] = int64(len(c.inferred))
	res.Counters["ww_edges"] = int64(c.addVersionOrders())
	if err != nil {
		return res, err
	}

	t2 := time.Now()
	if !c.causalCycle {
		err = c.cycles(res, opt.MaxCycles)
	}
	res.Timings["cycles"] = time.Since(t2)
	if err != nil {
		return res, err
	}
	if c.causalCycle {
		// CC stopped before saturating: so ∪ wr is cyclic.
		res.Violations, res.CyclesOmitted = c.causal, c.causalOmitted
		res.Counters["causal_sccs"] = int64(c.nCausalSCCs)
	}
	switch {
	case len(res.Findings) > 0 || len(res.Violations) > 0 || res.CyclesOmitted > 0:
		res.Verdict = verdict.Violated
	case res.Duplicates != nil:
		res.Verdict = verdict.Unknown
	default:
		res.Verdict = verdict.Satisfied
	}
	return res, nil
}

// sessIdx is a transaction's session and index in it.
type sessIdx struct{ sess, idx int32 }

// point is the program point of t's read event at op for RC's order: the
// rows of one predicate read share one (history.ReadPoint).
func (c *checker) point(t history.TxnID, op int32) int32 { return c.h.ReadPoint(t, op) }

// event is one read event: a read of key by its transaction that read from
// writer (the read's unique candidate).
type event struct {
	key    history.KeyID
	writer history.TxnID
	op     int32
}

// checker holds the state of one Check.
type checker struct {
	ctx   context.Context
	h     *history.History
	ix    *history.Index
	level history.Level
	n     int // len(h.Txns)
	// in[t]: t is taken as committed (T⊥ always); nIn counts them.
	in  []bool
	nIn int
	// ranks and byRank are the order topoStable breaks ties by, and its
	// inverse (fileRanks).
	ranks  []int32
	byRank []history.TxnID
	// ev holds the read events, grouped per transaction: ev[evLo[t]:evHi[t]]
	// in program order.
	ev         []event
	evLo, evHi []int32
	dups       Duplicates
	// amb are the read events with several candidate writers; evAll
	// (bounds allLo, allHi) is ev with a placeholder (writer -1) for each
	// of them, which ev leaves out (choose.go).
	amb          []ambRead
	evAll        []event
	allLo, allHi []int32
	// ambAt[slot]: the ambiguous read at an evAll slot, or -1.
	ambAt []int32
	// likely[i]: a candidate of amb[i] that pruning found in the reader's
	// causal past, or -1 (the search's first guess).
	likely []history.TxnID
	// sess[s] are the transactions of session s taken as committed, in
	// session order.
	sess [][]history.TxnID
	// inferred are the co′ edges the axiom forced.
	inferred []Edge
	// ww are the version orders the history states (Rel WW).
	ww  []Edge
	nWR int
	// wkeys[wkLo[t]:wkLo[t+1]] are the keys t writes, ascending (RC, RA).
	wkeys []history.KeyID
	wkLo  []int32
	// hb is the happens-before clock of each transaction (CC), k entries
	// per transaction: hb[t*k+s] is the largest Txn.Index of a transaction
	// of session s that reaches t in (so ∪ wr)⁺, -1 if none.
	hb  []int32
	k   int
	loc []sessIdx
	// For CC when so ∪ wr is cyclic.
	causalCycle   bool
	causal        []Violation
	causalOmitted int
	nCausalSCCs   int
	maxCycles     int
	tick          int
	// opt are the optional unknown-status transactions (unknown.go),
	// optIdx[t] t's index in it or -1, optOut[k] that opt[k] cannot commit.
	opt    []history.TxnID
	optIdx []int32
	optOut []bool
	// clockRounds counts the rounds of pruneByClocks.
	clockRounds int
	// kw indexes the writers of each key by session (writersByKey).
	kw *keyWriters
	// rcStamp[k] == t+1: t wrote key k already (eachRead at RC).
	rcStamp []int32
	// fit is Options.Fit; memErr its refusal, which poll reports.
	fit    func(need int64, what string) error
	memErr error
}

func newChecker(ctx context.Context, h *history.History, level history.Level) *checker {
	n := len(h.Txns)
	return &checker{
		ctx:   ctx,
		h:     h,
		ix:    h.Index(),
		level: level,
		n:     n,
		in:    make([]bool, n),
		evLo:  make([]int32, n),
		evHi:  make([]int32, n),
	}
}

// poll reports a refusal of the memory budget, and ctx's error every few
// thousand calls.
func (c *checker) poll() error {
	if c.memErr != nil {
		return c.memErr
	}
	c.tick++
	if c.tick&4095 == 0 {
		return c.ctx.Err()
	}
	return nil
}

// resolve decides which transactions are taken as committed, collects the
// read events with their writers and counts the ambiguous reads.
func (c *checker) resolve() {
	h, ix := c.h, c.ix
	c.in[history.InitTxn] = true
	c.nIn = 1
	var queue []history.TxnID
	for t := 1; t < c.n; t++ {
		if h.Txns[t].Status == history.Committed {
			c.in[t] = true
			c.nIn++
			queue = append(queue, history.TxnID(t))
		}
	}
	take := func(t history.TxnID, r history.ExtRead) {
		cands := ix.Candidates(t, r)
		switch len(cands) {
		case 0:
			return // validation reports it
		case 1:
		default:
			if c.dups.Reads == 0 {
				c.dups = Duplicates{Txn: t, Op: r.Op, Key: r.Key, Value: r.Value, Writers: append([]history.TxnID(nil), cands...)}
			}
			c.dups.Reads++
			// A placeholder event: choose.go fills in a writer, the
			// saturation of the certain part drops it (compactEvents).
			c.amb = append(c.amb, ambRead{txn: t, op: r.Op, key: r.Key, value: r.Value, cands: cands, slot: int32(len(c.ev))})
			c.ev = append(c.ev, event{key: r.Key, writer: -1, op: r.Op})
			return
		}
		w := cands[0]
		if !c.in[w] {
			// Only an unknown-status transaction can be missing.
			c.in[w] = true
			c.nIn++
			queue = append(queue, w)
		}
		c.ev = append(c.ev, event{key: r.Key, writer: w, op: r.Op})
	}
	seen := make([]int32, c.n) // == t+1: t reads from this writer
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		c.evLo[t] = int32(len(c.ev))
		c.eachRead(t, func(r history.ExtRead) { take(t, r) })
		c.evHi[t] = int32(len(c.ev))
		for _, e := range c.events(t) {
			if e.writer >= 0 && seen[e.writer] != int32(t+1) {
				seen[e.writer] = int32(t + 1)
				c.nWR++
			}
		}
	}
	if len(c.amb) > 0 {
		c.compactEvents()
	}
	c.sess = make([][]history.TxnID, len(h.Sessions))
	for s, ss := range h.Sessions {
		for _, t := range ss.Txns {
			if c.in[t] {
				c.sess[s] = append(c.sess[s], t)
			}
		}
	}
}

// eachRead calls f for each read event of t at the level, in program
// order: RA and CC read T's external reads; RC every read of a key that no
// write of T precedes.
func (c *checker) eachRead(t history.TxnID, f func(history.ExtRead)) {
	if c.level != history.RC {
		for _, r := range c.ix.Reads(t) {
			f(r)
		}
		return
	}
	if c.rcStamp == nil {
		c.rcStamp = make([]int32, c.h.NumKeys())
	}
	for i, op := range c.h.Txns[t].Ops {
		switch {
		case op.Kind.IsWrite():
			c.rcStamp[op.Key] = int32(t + 1)
		case c.rcStamp[op.Key] != int32(t+1):
			f(history.ExtRead{Key: op.Key, Value: op.Value, Op: int32(i)})
		}
	}
}

// saturate infers co′ by the axiom of c.level.
func (c *checker) saturate() error {
	switch c.level {
	case history.RC:
		return c.saturateRC()
	case history.RA:
		return c.saturateRA()
	}
	return c.saturateCC()
}

// events returns t's read events.
func (c *checker) events(t history.TxnID) []event { return c.ev[c.evLo[t]:c.evHi[t]] }

// buildWriteKeys fills wkeys: the keys each transaction taken as committed
// (T⊥ excepted) writes, sorted for binary search.
func (c *checker) buildWriteKeys() {
	c.wkLo = make([]int32, c.n+1)
	total := 0
	for t := 1; t < c.n; t++ {
		if c.in[t] {
			total += len(c.ix.Writes(history.TxnID(t)))
		}
	}
	c.wkeys = make([]history.KeyID, 0, total)
	for t := 1; t < c.n; t++ {
		c.wkLo[t] = int32(len(c.wkeys))
		if c.in[t] {
			lo := len(c.wkeys)
			for _, w := range c.ix.Writes(history.TxnID(t)) {
				c.wkeys = append(c.wkeys, w.Key)
			}
			slices.Sort(c.wkeys[lo:])
		}
	}
	c.wkLo[c.n] = int32(len(c.wkeys))
}

// writeKeys returns the keys t writes, ascending (empty for T⊥).
func (c *checker) writeKeys(t history.TxnID) []history.KeyID {
	if t == history.InitTxn {
		return nil
	}
	return c.wkeys[c.wkLo[t]:c.wkLo[t+1]]
}

// writes reports whether t writes key x (t ≠ T⊥).
func (c *checker) writes(t history.TxnID, x history.KeyID) bool {
	ks := c.writeKeys(t)
	lo, hi := 0, len(ks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ks[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(ks) && ks[lo] == x
}

// soBefore reports whether a precedes b in session order (T⊥ precedes all).
func (c *checker) soBefore(a, b history.TxnID) bool {
	if a == history.InitTxn {
		return b != history.InitTxn
	}
	ta, tb := &c.h.Txns[a], &c.h.Txns[b]
	return ta.Session == tb.Session && ta.Index < tb.Index
}

// addVersionOrders adds to co′ the version orders the history states at
// the level (list reads) between transactions taken as committed, and
// returns how many. Like so and wr they are facts, not inferences.
func (c *checker) addVersionOrders() int {
	edges := c.h.HintEdges(c.h.HintsAt(c.level), func(t history.TxnID) bool { return c.in[t] })
	for _, e := range edges {
		c.ww = append(c.ww, Edge{From: e.From, To: e.To, Rel: history.WW, Key: e.Key, Via: -1})
	}
	return len(edges)
}

// infer records the co′ edge from → to with its premise.
func (c *checker) infer(e Edge) {
	e.Rel = history.CO
	if n := len(c.inferred); n == cap(c.inferred) && n >= 1<<16 && c.fit != nil {
		// The slice is about to double: ask first. A refused edge is
		// dropped; the next poll ends the check.
		if c.memErr == nil {
			c.memErr = c.fit(2*int64(n)*int64(unsafe.Sizeof(e)), fmt.Sprintf("the saturation's inferred co′ edges (%d so far)", n))
		}
		if c.memErr != nil {
			return
		}
	}
	c.inferred = append(c.inferred, e)
}
