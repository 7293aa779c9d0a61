// Package express decides whether a history fits a file format that holds
// less than hyperiso's model, so that a writer refuses a history it would
// change instead of writing a file that reads back as another history. It
// owns the checks the writers share (statuses, list operations, real time,
// levels, stated version orders, lenient drops, the initial state) and the
// wording of the refusal, which names everything the format cannot hold.
package express

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// Limits says what a format holds. The zero value holds nothing beyond
// committed transactions of register reads and writes.
type Limits struct {
	// Format names the format in messages.
	Format string
	// Lists: append and list-read operations.
	Lists bool
	// NoRegisters: the format has no register reads and writes (EDN
	// list-append); set by writers that choose per history.
	NoRegisters bool
	// Aborted: aborted transactions (their reads need not be kept: no
	// check looks at them).
	Aborted bool
	// Unknown: transactions of unknown outcome.
	Unknown bool
	// UnknownReads: the reads of unknown-outcome transactions.
	UnknownReads bool
	// AbortedWrites: aborted writes outside any transaction.
	AbortedWrites bool
	// Timed: real-time intervals. AllOrNoneTimed: only on every
	// transaction or on none.
	Timed, AllOrNoneTimed bool
	// Levels: per-transaction isolation levels.
	Levels bool
	// Hints: version orders stated outside any list read.
	Hints bool
	// Dropped: the counts of what lenient reading skipped.
	Dropped bool
	// Rows: inserts, deletes and predicate reads (history.OpSrc); a
	// writer without them would write them as plain writes and reads, a
	// predicate read as one read per key of its range.
	Rows bool
	// ValueTests: predicate reads with a value test (history.ValueTest);
	// a writer of rows without them would write such a read as one over
	// every value of its range.
	ValueTests bool
	// Names: keys and values read as names (strings, keywords, vectors)
	// rather than integers; without it a writer would put the model's
	// integer stand-ins in their place.
	Names bool
	// Init, when set, is the format's fixed initial state: the value
	// InitValue on every key for which Covers returns true (every key when
	// Covers is nil). T⊥ must write only InitValue, and a key it does not
	// write but the format covers must not see InitValue anywhere, or the
	// written file would give that value a writer it did not have.
	Init      bool
	InitValue int64
	Covers    func(history.KeyID) bool
	// Values, when set, gives the value written for each version (a
	// renaming from NewValues, which makes any initial state the format's
	// own); then Init is not checked.
	Values *Values
}

// Values renames values per key so that the initial state is the one a
// format fixes: on a key T⊥ writes, T⊥'s value and the format's initial
// value trade places; on a key T⊥ does not write, a use of the format's
// initial value trades places with a value the key never has, so that it
// does not become a read of T⊥. Every other value stays. Renaming values
// one key at a time changes no verdict: values only say which write a read
// saw.
type Values struct {
	h    *history.History
	init int64
	swap []int64 // by key: the value that trades places with init
	has  []bool
	// more renames, by key, for formats without negative values
	more []map[int64]int64
}

// NewValues renames h's values for a format whose initial value is init on
// every key.
func NewValues(h *history.History, init int64) *Values {
	v := &Values{h: h, init: init, swap: make([]int64, len(h.Keys)), has: make([]bool, len(h.Keys))}
	for _, op := range h.Txns[history.InitTxn].Ops {
		v.swap[op.Key], v.has[op.Key] = h.Value(op.Key, op.Value), true
	}
	for k, vals := range h.Values {
		if v.has[k] {
			continue
		}
		used := make(map[int64]bool, len(vals))
		for _, x := range vals {
			used[x] = true
		}
		if !used[init] {
			continue
		}
		fresh := int64(1)
		for used[fresh] || fresh == init {
			fresh++
		}
		v.swap[k], v.has[k] = fresh, true
	}
	return v
}

// Of returns the value written for version (k, val).
func (v *Values) Of(k history.KeyID, val history.ValueID) int64 {
	raw := v.h.Value(k, val)
	if v.has[k] {
		switch raw {
		case v.swap[k]:
			raw = v.init
		case v.init:
			raw = v.swap[k]
		}
	}
	if v.more != nil && v.more[k] != nil {
		if x, ok := v.more[k][raw]; ok {
			return x
		}
	}
	return raw
}

// NonNegative also renames, per key, every negative value (after the
// renaming of the initial value, which must not be negative) to a
// non-negative value the key never has, for formats without a sign.
func (v *Values) NonNegative() *Values {
	for k := range v.h.Values {
		var neg []int64
		used := map[int64]bool{}
		for i := range v.h.Values[k] {
			x := v.Of(history.KeyID(k), history.ValueID(i))
			used[x] = true
			if x < 0 {
				neg = append(neg, x)
			}
		}
		if len(neg) == 0 {
			continue
		}
		if v.more == nil {
			v.more = make([]map[int64]int64, len(v.h.Keys))
		}
		m := make(map[int64]int64, len(neg))
		fresh := int64(0)
		for _, x := range neg {
			for used[fresh] {
				fresh++
			}
			m[x] = fresh
			fresh++
		}
		v.more[k] = m
	}
	return v
}

// NonNegativeKeys returns the key to write for each KeyID: the key itself,
// or, for a negative key, a non-negative one no key of h has.
func NonNegativeKeys(h *history.History) []int64 {
	keys := make([]int64, len(h.Keys))
	used := make(map[int64]bool, len(h.Keys))
	for k, x := range h.Keys {
		keys[k] = x
		used[x] = true
	}
	fresh := int64(0)
	for k, x := range h.Keys {
		if x >= 0 {
			continue
		}
		for used[fresh] {
			fresh++
		}
		keys[k] = fresh
		fresh++
	}
	return keys
}

// ErrCannotHold is wrapped by every refusal.
var ErrCannotHold = errors.New("the format cannot hold this history")

// Problems collects what a format cannot hold, each with a first example.
type Problems struct {
	format string
	list   []string
}

// New starts a collection for format.
func New(format string) *Problems { return &Problems{format: format} }

// Add records one thing the format cannot hold.
func (p *Problems) Add(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

// Err returns nil when nothing was added, else one error naming all of it.
func (p *Problems) Err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &cannotHold{format: p.format, what: p.list}
}

type cannotHold struct {
	format string
	what   []string
}

func (e *cannotHold) Error() string {
	return e.format + " cannot hold this history: " + strings.Join(e.what, "; ")
}

func (e *cannotHold) Is(target error) bool { return target == ErrCannotHold }

// counter counts the transactions or operations with one property and
// remembers the first.
type counter struct {
	n     int
	first string
}

func (c *counter) add(what func() string) {
	if c.n == 0 {
		c.first = what()
	}
	c.n++
}

func (c *counter) report(p *Problems, what string) {
	if c.n > 0 {
		p.Add("%d %s (first: %s)", c.n, what, c.first)
	}
}

// Check adds to p what h holds beyond l.
func Check(h *history.History, l Limits, p *Problems) {
	var aborted, unknown, unknownReads, lists, registers, timed, untimed, levels counter
	var selects, inserts, deletes, tests counter
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		name := func() string { return h.TxnString(history.TxnID(t)) }
		switch tx.Status {
		case history.Aborted:
			aborted.add(name)
		case history.Unknown:
			unknown.add(name)
		}
		if tx.Timed {
			timed.add(name)
		} else {
			untimed.add(name)
		}
		if tx.Level != history.LevelNone {
			levels.add(name)
		}
		readCounted := false
		if sels := h.SelectsOf(history.TxnID(t)); len(sels) > 0 {
			selects.add(name)
			if slices.ContainsFunc(sels, func(s history.Select) bool { return s.Test != nil }) {
				tests.add(name)
			}
		}
		var ins, del bool
		for _, op := range tx.Ops {
			switch {
			case op.Src == history.SrcInsert && !ins:
				ins = true
				inserts.add(name)
			case op.Src == history.SrcDelete && !del:
				del = true
				deletes.add(name)
			}
			isList := op.Kind == history.OpAppend || op.Kind == history.OpReadList
			if isList {
				lists.add(name)
			} else if op.Kind == history.OpWrite || h.Value(op.Key, op.Value) != history.EmptyList {
				registers.add(name)
			}
			if tx.Status == history.Unknown && op.Kind.IsRead() && !readCounted {
				readCounted = true
				unknownReads.add(name)
			}
		}
	}
	if !l.Aborted {
		aborted.report(p, "aborted transactions")
	}
	if !l.Unknown {
		unknown.report(p, "transactions of unknown outcome")
	} else if !l.UnknownReads {
		unknownReads.report(p, "transactions of unknown outcome with reads (the format keeps only their writes)")
	}
	if !l.Lists {
		lists.report(p, "transactions with list-append operations")
	}
	if !l.Rows {
		selects.report(p, "transactions with predicate reads (select)")
		inserts.report(p, "transactions with inserts")
		deletes.report(p, "transactions with deletes")
	} else if !l.ValueTests {
		tests.report(p, "transactions with predicate reads with a value test")
	}
	if l.NoRegisters {
		registers.report(p, "transactions with register reads or writes among list-append ones")
	}
	switch {
	case !l.Timed:
		timed.report(p, "transactions with real-time intervals")
	case l.AllOrNoneTimed && timed.n > 0 && untimed.n > 0:
		p.Add("real-time intervals on %d transactions but not on %d (first without: %s); the format has them on all or none", timed.n, untimed.n, untimed.first)
	}
	if !l.Levels {
		levels.report(p, "transactions with a declared isolation level")
	}
	if !l.AbortedWrites && len(h.AbortedWrites) > 0 {
		v := h.AbortedWrites[0]
		p.Add("%d aborted writes outside any transaction (first: key %s value %s)", len(h.AbortedWrites), h.KeyString(v.Key), h.ValueString(v.Key, v.Value))
	}
	if !l.Hints && len(h.VersionHints) > 0 {
		p.Add("%d stated version orders", len(h.VersionHints))
	}
	if !l.Dropped && h.Dropped.Any() {
		p.Add("the record that lenient reading dropped %s", h.Dropped)
	}
	if !l.Names {
		checkNames(h, p)
	}
	if l.Init && l.Values == nil {
		checkInit(h, l, p)
	}
}

// checkNames reports the keys and values h holds as names.
func checkNames(h *history.History, p *Problems) {
	var keys, vals counter
	for k := range h.Keys {
		if name := h.KeyName(history.KeyID(k)); name != "" {
			keys.add(func() string { return name })
		}
		for v := range h.Values[k] {
			if name := h.ValueName(history.KeyID(k), history.ValueID(v)); name != "" {
				vals.add(func() string { return "key " + h.KeyString(history.KeyID(k)) + " value " + name })
			}
		}
	}
	keys.report(p, "keys that are names, not integers")
	vals.report(p, "values that are names, not integers")
}

// checkInit checks h's T⊥ against a fixed initial state.
func checkInit(h *history.History, l Limits, p *Problems) {
	init := make([]bool, len(h.Keys))
	for _, op := range h.Txns[history.InitTxn].Ops {
		init[op.Key] = true
		if v := h.Value(op.Key, op.Value); v != l.InitValue {
			p.Add("the initial value %s of key %s (the format's initial state is %s on every key)", show(v), h.KeyString(op.Key), show(l.InitValue))
			return
		}
	}
	uncovered := func(k history.KeyID) bool {
		return !init[k] && (l.Covers == nil || l.Covers(k))
	}
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if uncovered(op.Key) && sees(h, op, l.InitValue) {
				p.Add("key %s has no initial value but %s has %s on it (the format would make that the initial value)",
					h.KeyString(op.Key), h.TxnString(history.TxnID(t)), show(l.InitValue))
				return
			}
		}
	}
	for _, v := range h.AbortedWrites {
		if uncovered(v.Key) && h.Value(v.Key, v.Value) == l.InitValue {
			p.Add("key %s has no initial value but an aborted write of %s (the format would make that the initial value)",
				h.KeyString(v.Key), show(l.InitValue))
			return
		}
	}
}

// sees reports whether op reads or writes value v (an empty list read
// counts as reading EmptyList).
func sees(h *history.History, op history.Op, v int64) bool {
	if h.Value(op.Key, op.Value) == v {
		return true
	}
	for _, e := range h.List(op) {
		if h.Value(op.Key, e) == v {
			return true
		}
	}
	return false
}

func show(v int64) string {
	if v == history.EmptyList {
		return "nil (the empty list)"
	}
	return fmt.Sprint(v)
}

// IDs returns the id to write for each transaction: the native ids when
// they are distinct and ok accepts each of them, else 1, 2, 3, … in TxnID
// order. ids[0] is unused.
func IDs(h *history.History, ok func(int64) bool) []int64 {
	ids := make([]int64, len(h.Txns))
	seen := make(map[int64]bool, len(h.Txns))
	native := true
	for t := 1; t < len(h.Txns); t++ {
		id := h.Txns[t].ID
		if seen[id] || !ok(id) {
			native = false
			break
		}
		seen[id] = true
		ids[t] = id
	}
	if !native {
		for t := range ids {
			ids[t] = int64(t)
		}
	}
	return ids
}
