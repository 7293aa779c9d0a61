package check

import (
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

// Verdict is the answer of a check (package verdict); its JSON form is
// "satisfied", "violated" or "unknown".
type Verdict = verdict.Verdict

// The verdicts, as check's callers name them.
const (
	// Satisfied: the history satisfies the level.
	Satisfied = verdict.Satisfied
	// Violated: the history violates the level; Anomalies say why.
	Violated = verdict.Violated
	// Unknown: the check could not decide (timeout, memory limit, a level
	// not available yet); Reason says why.
	Unknown = verdict.Unknown
)

// Result is the report of one check; its JSON form is the stable report
// schema documented in README.md.
type Result struct {
	Schema  int           `json:"hyperiso_report"`
	Source  string        `json:"source"`
	Format  string        `json:"format"`
	Level   string        `json:"level"`
	Verdict Verdict       `json:"verdict"`
	Reason  string        `json:"reason,omitempty"`
	History history.Stats `json:"history"`
	// Stage is the last stage the check reached (for unknown verdicts).
	Stage     string             `json:"stage,omitempty"`
	TimingsMS map[string]float64 `json:"timings_ms"`
	Counters  map[string]int64   `json:"counters"`
	Anomalies []Anomaly          `json:"anomalies"`
	// Witness is, for a satisfied strong level, a serial (SER) or commit
	// (SI, with each transaction's snapshot) order of the transactions
	// taken as committed.
	Witness []TxnRef `json:"witness,omitempty"`
	// ListViews complete a satisfied list-append history's witness: for
	// each list read holding a value that several transactions appended,
	// the transactions whose appends its view holds, in order.
	ListViews []ListView `json:"list_views,omitempty"`
	// Warnings are the reader's non-fatal findings.
	Warnings []string `json:"warnings,omitempty"`
	// Dropped is what lenient reading skipped of the input, if anything:
	// the verdict is about the history without it.
	Dropped *history.Dropped `json:"dropped,omitempty"`
}

// ListView names the appenders a witness gives one list read.
type ListView struct {
	Txn       TxnRef   `json:"transaction"`
	Op        int      `json:"op"`
	Appenders []TxnRef `json:"appenders"`
}

// TxnRef names a transaction the way the input does.
type TxnRef struct {
	ID      int64 `json:"id"`
	Session int64 `json:"session"`
	// Index is the position in the session; -1 for the initial transaction.
	Index  int    `json:"index"`
	Status string `json:"status,omitempty"`
	// Snapshot is, in an SI witness, how many transactions of the witness
	// (from its start) this one sees.
	Snapshot *int `json:"snapshot,omitempty"`
}

// Edge is one dependency of a counterexample.
type Edge struct {
	From     int64  `json:"from"`
	To       int64  `json:"to"`
	Relation string `json:"relation"` // so, wr, ww, rw, rt
	Key      *int64 `json:"key,omitempty"`
	// KeyName is the key's name when it was read as one (Key is then a
	// stand-in).
	KeyName string `json:"key_name,omitempty"`
	Reason  string `json:"reason"`
}

// Anomaly is one reason a history violates the level.
type Anomaly struct {
	// Type is the stable name (thin-air-read, aborted-read, …, G0, G1c,
	// G-single, G2-item, …).
	Type        string   `json:"type"`
	Class       string   `json:"class,omitempty"`
	Description string   `json:"description"`
	Txns        []TxnRef `json:"transactions"`
	Edges       []Edge   `json:"edges,omitempty"`
	Key         *int64   `json:"key,omitempty"`
	Value       *int64   `json:"value,omitempty"`
	// KeyName and ValueName are the key and value as read when they were
	// names rather than integers (Key and Value are then stand-ins).
	KeyName   string `json:"key_name,omitempty"`
	ValueName string `json:"value_name,omitempty"`
	// Op is the index of the offending operation within its transaction.
	Op *int `json:"op,omitempty"`
	// Culprit and Axiom say, for a mixed-level check, which transaction's
	// level is broken and which of MixIso's axioms fails (EXT, SESSION,
	// TRANSVis, PREFIX, NoConflict, TOTALVis; INT).
	Culprit *TxnRef `json:"culprit,omitempty"`
	Axiom   string  `json:"axiom,omitempty"`
	// ReadCore, on a weak level's cycle over reads with several candidate
	// writers, lists reads every choice of writers for which closes a
	// cycle (whatever the other such reads read); Edges are one such cycle.
	ReadCore *ReadCore `json:"read_core,omitempty"`
}

// Ref returns the TxnRef of t.
func Ref(h *history.History, t history.TxnID) TxnRef {
	tx := &h.Txns[t]
	return TxnRef{ID: tx.ID, Session: h.SessionOf(t), Index: indexOf(tx), Status: tx.Status.String()}
}

func indexOf(tx *history.Txn) int {
	if tx.Session < 0 {
		return -1
	}
	return int(tx.Index)
}

// listAnomaly converts a list-append finding into a report anomaly.
func listAnomaly(h *history.History, f history.ListFinding) Anomaly {
	key := h.Key(f.Key)
	a := Anomaly{Type: f.Kind.String(), Class: f.Kind.Class(), Description: f.Describe(h), Key: &key, KeyName: h.KeyName(f.Key)}
	for _, t := range f.Txns {
		a.Txns = append(a.Txns, Ref(h, t))
	}
	for _, w := range f.Writers {
		a.Txns = append(a.Txns, Ref(h, w))
	}
	return a
}

// FindingAnomaly converts a validation finding into a report anomaly.
func FindingAnomaly(h *history.History, f history.Finding) Anomaly {
	key, val, op := h.Key(f.Key), h.Value(f.Key, f.Value), int(f.Op)
	a := Anomaly{
		Type:        f.Kind.String(),
		Class:       f.Kind.Class(),
		Description: f.Describe(h),
		Txns:        []TxnRef{Ref(h, f.Txn)},
		Key:         &key,
		Value:       &val,
		KeyName:     h.KeyName(f.Key),
		ValueName:   h.ValueName(f.Key, f.Value),
		Op:          &op,
	}
	for _, w := range f.Writers {
		a.Txns = append(a.Txns, Ref(h, w))
	}
	return a
}

// ReadCore is a minimal unsatisfiable core of read-from choices.
type ReadCore struct {
	// Minimal is false when the search budget ran out before the core
	// was minimised.
	Minimal bool       `json:"minimal"`
	Reads   []CoreRead `json:"reads"`
}

// CoreRead is one read of a ReadCore and its candidate writers.
type CoreRead struct {
	Txn     TxnRef   `json:"transaction"`
	Op      int      `json:"op"`
	Read    string   `json:"read"`
	Writers []TxnRef `json:"writers"`
}
