// Package hermitage owns hyperiso's version of the tests of Martin
// Kleppmann's Hermitage suite: deterministic interleavings of two or three
// client transactions (Scenarios), a driver that runs them step by step
// against PostgreSQL or MariaDB at each isolation level the server offers
// and records each run as a history, and the matrix of verdicts
// (check.Check at RC, RA, CC, SI and SER) that docs/hermitage.md sets
// beside what Hermitage documents.
//
// Hermitage is run by hand: a statement that waits on a lock is left
// waiting and the next statement is typed in another terminal. The driver
// does the same: it issues a step, and moves on once the step has finished
// or the server reports it waiting on a lock (pg_stat_activity, SHOW
// ENGINE INNODB STATUS). Errors that abort a transaction
// (serialization failure, deadlock, lock timeout) end it as aborted and
// its later steps are skipped, as Hermitage's "abort; -- nothing else we
// can do".
//
// The item-level scenarios read and write keys 1 and 2. The predicate
// scenarios (PMP, G2 and their variants; Scenario.Rows) run on rows that
// come and go: rows 1 and 2 live at first, keys 3 and 4 absent, and
// Hermitage's value predicates (value = 30, value % 3 = 0) become key
// ranges (k BETWEEN lo AND hi), which is what the history's predicate
// reads express (docs/predicates.md). Hermitage's variants of G-single
// that use a predicate are not here.
package hermitage

import (
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/history"
)

// Keys are the keys every item-level scenario uses, initially 0
// (Hermitage's rows 1 and 2, initially 10 and 20).
var Keys = []int64{1, 2}

// InitialRows are the rows a predicate scenario starts with, Hermitage's;
// keys 3 and 4 are absent.
var InitialRows = []collect.Row{{Key: 1, Val: 10}, {Key: 2, Val: 20}}

// RowKeys is the range of keys, lo and hi included, that a predicate
// scenario's rows live in: the observer reads it.
var RowKeys = [2]int64{1, 4}

// Action is what a step does.
type Action uint8

const (
	// Read reads a key.
	Read Action = iota
	// Write writes a value to a key.
	Write
	// Commit commits the transaction.
	Commit
	// Rollback rolls the transaction back (the client's abort).
	Rollback
	// Select reads the rows with Key <= k <= Value (k BETWEEN Key AND
	// Value), a predicate read.
	Select
	// Insert inserts row Key with Value.
	Insert
	// DeleteRange deletes the rows with Key <= k <= Value, a write
	// predicate, and learns which it deleted (RETURNING): a predicate
	// read of what it deleted, then their deletes.
	DeleteRange
)

// Step is one statement of one transaction.
type Step struct {
	// T is the transaction, 1-based (T1, T2, T3), each on its own
	// connection.
	T      int
	Action Action
	Key    int64
	Value  int64
}

func (s Step) String() string {
	switch s.Action {
	case Read:
		return fmt.Sprintf("T%d r(%d)", s.T, s.Key)
	case Write:
		return fmt.Sprintf("T%d w(%d,%d)", s.T, s.Key, s.Value)
	case Commit:
		return fmt.Sprintf("T%d commit", s.T)
	case Select:
		return fmt.Sprintf("T%d select[%d,%d]", s.T, s.Key, s.Value)
	case Insert:
		return fmt.Sprintf("T%d insert(%d,%d)", s.T, s.Key, s.Value)
	case DeleteRange:
		return fmt.Sprintf("T%d delete[%d,%d]", s.T, s.Key, s.Value)
	}
	return fmt.Sprintf("T%d rollback", s.T)
}

func r(t int, k int64) Step    { return Step{T: t, Action: Read, Key: k} }
func w(t int, k, v int64) Step { return Step{T: t, Action: Write, Key: k, Value: v} }
func commit(t int) Step        { return Step{T: t, Action: Commit} }
func rollback(t int) Step      { return Step{T: t, Action: Rollback} }
func readAll(t int) []Step     { return []Step{r(t, 1), r(t, 2)} }
func one(s ...Step) []Step     { return s }

func sel(t int, lo, hi int64) Step      { return Step{T: t, Action: Select, Key: lo, Value: hi} }
func ins(t int, k, v int64) Step        { return Step{T: t, Action: Insert, Key: k, Value: v} }
func delRange(t int, lo, hi int64) Step { return Step{T: t, Action: DeleteRange, Key: lo, Value: hi} }

// seq joins runs of steps.
func seq(parts ...[]Step) []Step {
	var out []Step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Scenario is one of Hermitage's tests as a fixed interleaving.
type Scenario struct {
	// Name is Hermitage's column (G0, P4, …) or, for a variant, the
	// column with a suffix.
	Name string
	// Anomaly is what the scenario provokes.
	Anomaly string
	// Column is Hermitage's column the scenario belongs to.
	Column string
	// Level is the weakest of hyperiso's levels that forbids the anomaly
	// in a history: the anomaly occurred when the recorded history
	// violates it.
	Level history.Level
	// Txns is the number of transactions (and connections), 2 or 3.
	Txns int
	// Rows makes the scenario a predicate one: its table holds
	// InitialRows, and the observer reads the range RowKeys.
	Rows bool
	// ReadOnly says the transaction that shows the anomaly only reads:
	// where Hermitage marks a level R/O (it prevents the anomaly for
	// read-only transactions only), the anomaly is expected only in the
	// scenarios that are not ReadOnly.
	ReadOnly bool
	// Steps are the statements in the order they are issued.
	Steps []Step
	// Note says how the scenario departs from Hermitage's script, if it
	// does.
	Note string
}

// Script renders the steps on one line.
func (s Scenario) Script() string {
	parts := make([]string, len(s.Steps))
	for i, st := range s.Steps {
		parts[i] = st.String()
	}
	return strings.Join(parts, "; ")
}

// Scenarios are the item-level tests in Hermitage's order, then the
// predicate ones (Rows) in Hermitage's order, then P4-delete, hyperiso's
// own (a lost update over rows). Every
// transaction begins before the first step (Hermitage opens them all
// first; neither server takes a snapshot at BEGIN). Written values are
// unique per key and never the initial value, so each read names its
// writer. After the scenario an observer transaction on a fresh connection
// reads both keys (or the range RowKeys), so the history shows which
// writes survived (the version order a history otherwise leaves open).
var Scenarios = []Scenario{
	{
		// A write cycle shows in a history without version order only
		// through the observer: it reads one key as T1 left it and the
		// other as T2 did, a fractured read.
		Name: "G0", Column: "G0", Anomaly: "write cycle (dirty write)", Level: history.RA, Txns: 2,
		// T2's first write waits for T1's lock where writes lock rows.
		Steps: seq(one(w(1, 1, 11), w(2, 1, 12), w(1, 2, 21), commit(1), w(2, 2, 22), commit(2))),
	},
	{
		Name: "G1a", Column: "G1a", Anomaly: "aborted read", Level: history.RC, Txns: 2,
		Steps: seq(one(w(1, 1, 101)), readAll(2), one(rollback(1)), readAll(2), one(commit(2))),
	},
	{
		Name: "G1b", Column: "G1b", Anomaly: "intermediate read", Level: history.RC, Txns: 2,
		Steps: seq(one(w(1, 1, 101)), readAll(2), one(w(1, 1, 11), commit(1)), readAll(2), one(commit(2))),
	},
	{
		Name: "G1c", Column: "G1c", Anomaly: "circular information flow", Level: history.RC, Txns: 2,
		Steps: one(w(1, 1, 11), w(2, 2, 22), r(1, 2), r(2, 1), commit(1), commit(2)),
	},
	{
		// T3 reads both keys at each look, as Hermitage's MySQL script
		// does (its PostgreSQL script reads one key at a time). Its last
		// look, after T2 committed, shows that T2 overwrote T1: having
		// read T2's write of 1, then T1's of 2, T3's reads go back in
		// commit order, which hyperiso's RC (Biswas and Enea's, unlike
		// Adya's PL-2) forbids.
		Name: "OTV", Column: "OTV", Anomaly: "observed transaction vanishes", Level: history.RC, Txns: 3,
		Steps: seq(one(w(1, 1, 11), w(1, 2, 19), w(2, 1, 12), commit(1)), readAll(3),
			one(w(2, 2, 18)), readAll(3), one(commit(2)), readAll(3), one(commit(3))),
	},
	{
		Name: "P4", Column: "P4", Anomaly: "lost update", Level: history.SI, Txns: 2,
		Steps: one(r(1, 1), r(2, 1), w(1, 1, 11), w(2, 1, 12), commit(1), commit(2)),
		Note:  "T2 writes 12 where Hermitage writes 11 again, so that values stay unique",
	},
	{
		Name: "G-single", Column: "G-single", Anomaly: "read skew (read-only reader)", Level: history.SI, Txns: 2, ReadOnly: true,
		Steps: seq(one(r(1, 1)), readAll(2), one(w(2, 1, 12), w(2, 2, 18), commit(2), r(1, 2), commit(1))),
	},
	{
		Name: "G-single-w1", Column: "G-single", Anomaly: "read skew, the reader writes after the writer committed", Level: history.SI, Txns: 2,
		Steps: seq(one(r(1, 1)), readAll(2), one(w(2, 1, 12), w(2, 2, 18), commit(2), w(1, 2, 21), r(1, 2), commit(1))),
		Note:  "Hermitage's T1 deletes the row whose value is 20 (a write predicate); here T1 writes key 2, which its snapshot shows unchanged",
	},
	{
		Name: "G-single-w2", Column: "G-single", Anomaly: "read skew, the reader writes while the writer runs", Level: history.SI, Txns: 2,
		Steps: seq(one(r(1, 1)), readAll(2), one(w(2, 1, 12), w(1, 2, 21), w(2, 2, 18), commit(1), commit(2))),
		Note:  "Hermitage's MySQL serializable variant, with T1's predicate delete as a write of key 2 and both transactions committing",
	},
	{
		Name: "G2-item", Column: "G2-item", Anomaly: "write skew", Level: history.SER, Txns: 2,
		Steps: seq(readAll(1), readAll(2), one(w(1, 1, 11), w(2, 2, 21), commit(1), commit(2))),
	},
	{
		// Two predicate reads of T1 straddle T2's commit: the first
		// misses row 3, the second returns it. From RA up a transaction
		// has one view, which both reads must agree with.
		Name: "PMP", Column: "PMP", Anomaly: "predicate-many-preceders", Level: history.RA, Txns: 2, Rows: true, ReadOnly: true,
		Steps: one(sel(1, 3, 3), ins(2, 3, 30), commit(2), sel(1, 1, 3), commit(1)),
		Note:  "Hermitage's predicates value = 30 and value % 3 = 0 become the key ranges [3,3] and [1,3]",
	},
	{
		// T2's range delete waits for T1's write of row 2. Where it then
		// takes T1's version of row 2 but not T1's insert of row 3
		// (PostgreSQL's read committed re-checks only the rows it
		// waited for), or takes both after T2 had read neither
		// (InnoDB's locking reads of the latest rows), T2's reads saw
		// T1 in part.
		Name: "PMP-write", Column: "PMP", Anomaly: "predicate-many-preceders, write predicate", Level: history.RA, Txns: 2, Rows: true,
		Steps: one(w(1, 2, 21), ins(1, 3, 30), sel(2, 1, 3), delRange(2, 1, 3), commit(1), sel(2, 1, 3), commit(2)),
		Note: "Hermitage's T1 adds 10 to every value and T2 deletes the rows whose value is 20; here T1 writes row 2 and inserts row 3, " +
			"and T2 deletes the key range [1,3], reading it before and after, as Hermitage's MySQL script does",
	},
	{
		// Each transaction's range read misses the other's insert: a
		// cycle of two predicate anti-dependencies.
		Name: "G2", Column: "G2", Anomaly: "anti-dependency cycle (write skew on a predicate read)", Level: history.SER, Txns: 2, Rows: true,
		Steps: one(sel(1, 3, 4), sel(2, 3, 4), ins(1, 3, 30), ins(2, 4, 42), commit(1), commit(2)),
		Note:  "Hermitage's predicate value % 3 = 0 becomes the key range [3,4]",
	},
	{
		// Fekete, Liarokapis, O'Neil, O'Neil and Shasha's read-only
		// anomaly: T3 sees T2 but not T1, which read before T2 wrote, so
		// T1 -rw-> T2 -wr-> T3 -rw-> T1.
		Name: "G2-two-edges", Column: "G2", Anomaly: "anti-dependency cycle with two anti-dependency edges", Level: history.SER, Txns: 3, Rows: true,
		Steps: one(sel(1, 1, 4), w(2, 2, 25), commit(2), sel(3, 1, 4), commit(3), w(1, 1, 11), commit(1)),
		Note:  "Hermitage's T2 adds 5 to row 2's value and T1 sets row 1 to 0; here both are plain writes (25, 11)",
	},
	{
		// Both read row 1; T2 deletes it, T1 (re)inserts it, waiting for
		// T2. Over keys, T1 overwrote a write it never saw, as in P4;
		// a store that detects write conflicts per row version sees a
		// new row and no conflict once T2's delete committed.
		Name: "P4-delete", Column: "P4", Anomaly: "lost update through a delete and a re-insert", Level: history.SI, Txns: 2, Rows: true,
		Steps: one(r(1, 1), r(2, 1), delRange(2, 1, 1), ins(1, 1, 11), commit(2), commit(1)),
		Note: "Not one of Hermitage's scripts: P4 with T2 deleting the row and T1 inserting it, which hyperiso's predicate workload " +
			"found PostgreSQL's repeatable read to allow",
	},
}

// Lookup returns the scenario named name (any case).
func Lookup(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return Scenario{}, false
}
