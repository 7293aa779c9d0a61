package viper

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/hyperiso/hyperiso/history"
)

// Viper's range workload (its loader's parse/wr_range_parse.py and
// utils/range_utils.py; ViperBench's JSONMop1 writes the lines):
//
//	["r", k, v, isDead]                   a read; isDead: the row was deleted
//	["i", k, v, readV, isDead, succ, …]   read the row (readV), then insert v
//	["d", k, v, readV, isDead, succ, …]   read the row (readV), then delete it
//	["range", k1, k2, live, dead, …]      the rows k1 ≤ k ≤ k2: live ones
//	                                      [{"id": k, "sk": k, "val": v}, …],
//	                                      deleted ones likewise
//
// Viper gives each delete a value of its own (a tombstone) that later
// reads of the dead row return. The model has one absent state (a delete
// writes the empty value, docs/predicates.md), so a dead row reads as
// absent, whichever delete killed it: the tombstones are dropped, and the
// hyper-polygraph chooses among the deletes. That says less than Viper's
// file, never something else (docs/predicates.md, "Deleted rows with
// identity", says what it misses and why the model keeps one absent state).

// readValue is the value an observation of a row read: v, or absent when
// v is null or "nil" (never written) or dead says the row was deleted.
func readValue(raw json.RawMessage, dead bool) (int64, error) {
	if isNil(raw) {
		return history.EmptyList, nil
	}
	v, err := integer(raw)
	if err != nil {
		return 0, fmt.Errorf("value read %s: %v (or null for the initial state)", short(raw), err)
	}
	if v == history.EmptyList {
		return 0, fmt.Errorf("value read %d is reserved for nil", v)
	}
	if dead {
		return history.EmptyList, nil
	}
	return v, nil
}

// rowMop reads ["i"|"d", k, v, readV, isDead, succ, extra…]: the read of
// the row the operation made first, then, if succ, the insert of v or the
// delete. A failed insert is an aborted write of v; a failed delete wrote
// nothing the model can name (its tombstone is dropped).
func (p *parser) rowMop(t history.TxnID, op string, m []json.RawMessage, fail func(string, ...any) error) error {
	most := map[string]int{"i": 8, "d": 7}[op] // ViperBench's "ready" and "actual_f" extras
	if len(m) < 6 || len(m) > most {
		return fail("[%q, key, value, readValue, isDead, succ] has 6 elements (at most %d with Viper's extras), this one %d", op, most, len(m))
	}
	key, err := integer(m[1])
	if err != nil {
		return fail("key %s: %v", short(m[1]), err)
	}
	v, err := integer(m[2])
	if err != nil {
		return fail("value written %s: %v", short(m[2]), err)
	}
	if v == history.EmptyList {
		return fail("value written %d is reserved for nil", v)
	}
	var dead, succ bool
	if json.Unmarshal(m[4], &dead) != nil {
		return fail("isDead %s is not true or false", short(m[4]))
	}
	if json.Unmarshal(m[5], &succ) != nil {
		return fail("succ %s is not true or false", short(m[5]))
	}
	read, err := readValue(m[3], dead)
	if err != nil {
		return fail("%v", err)
	}
	p.b.Read(t, key, read)
	switch {
	case op == "i" && succ:
		p.b.Insert(t, key, v)
	case op == "i":
		p.b.AbortedWrite(key, v)
	case succ:
		p.b.Delete(t, key)
	}
	return nil
}

// rangeMop reads ["range", k1, k2, live, dead] (a sixth element, Viper's
// "final query" flag, is accepted and changes nothing): a predicate read
// of the keys k1 ≤ k ≤ k2 (null or "nil": unbounded) that returned the
// live rows; the dead rows, like the keys it does not list, were absent.
func (p *parser) rangeMop(t history.TxnID, m []json.RawMessage, fail func(string, ...any) error) error {
	if len(m) != 5 && len(m) != 6 {
		return fail(`["range", key1, key2, liveRows, deadRows] has 5 elements (6 with the final flag), this one %d`, len(m))
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !isNil(m[1]) {
		k, err := integer(m[1])
		if err != nil {
			return fail("key1 %s: %v (or null for no lower bound)", short(m[1]), err)
		}
		lo = k
	}
	if !isNil(m[2]) {
		k, err := integer(m[2])
		if err != nil {
			return fail("key2 %s: %v (or null for no upper bound)", short(m[2]), err)
		}
		// hyperiso's ranges are half-open: [k1, k2+1); the largest key
		// cannot be in one.
		hi = k
		if k < math.MaxInt64 {
			hi = k + 1
		}
	}
	hi = max(hi, lo) // k1 > k2: no row
	if len(m) == 6 {
		var final bool
		if json.Unmarshal(m[5], &final) != nil {
			return fail("the final-query flag %s is not true or false", short(m[5]))
		}
	}
	seen := map[int64]string{}
	var rows []history.Version
	for i, list := range [2]string{"live", "dead"} {
		var entries []json.RawMessage
		if err := strictUnmarshal(m[3+i], &entries); err != nil {
			return fail("the %s rows %s are not an array [{\"id\": key, \"val\": value}, ...]", list, short(m[3+i]))
		}
		for _, e := range entries {
			key, val, err := rangeRow(e)
			if err != nil {
				return fail("%s row %s: %v", list, short(e), err)
			}
			if key < lo || key >= hi {
				return fail("%s row %s: key %d is outside the range [%s, %s]", list, short(e), key, bound(m[1]), bound(m[2]))
			}
			if other, ok := seen[key]; ok {
				return fail("%s row %s: key %d is already a %s row of this range", list, short(e), key, other)
			}
			seen[key] = list
			// A dead row is absent, as every row of the range the read
			// does not return; its key is not interned, so that, like a
			// key of the range that nothing else names, it is left out of
			// the read when nothing else names it (it would constrain
			// nothing), and the history reads back from JSONL the same.
			if list == "live" {
				if val == history.EmptyList {
					return fail("live row %s: value %d is reserved for nil", short(e), val)
				}
				k := p.b.KeyID(key)
				rows = append(rows, history.Version{Key: k, Value: p.b.ValueID(k, val)})
			}
		}
	}
	p.b.SelectID(t, lo, hi, rows)
	return nil
}

// rangeRow reads one row of a range's result, {"id": key, "val": value},
// with ViperBench's "sk" (the key again) allowed.
func rangeRow(raw json.RawMessage) (key, val int64, err error) {
	var fields map[string]json.RawMessage
	if err := strictUnmarshal(raw, &fields); err != nil || fields == nil {
		return 0, 0, fmt.Errorf("not an object {\"id\": key, \"val\": value}")
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) { // the same message every time
		if name != "id" && name != "sk" && name != "val" {
			return 0, 0, fmt.Errorf("unknown field %s (a row has \"id\", \"val\" and optionally \"sk\")", strconv.Quote(name))
		}
	}
	id, ok := fields["id"]
	if !ok {
		return 0, 0, fmt.Errorf(`no "id"`)
	}
	if key, err = integer(id); err != nil {
		return 0, 0, fmt.Errorf("id %s: %v", short(id), err)
	}
	if sk, ok := fields["sk"]; ok {
		if k, err := integer(sk); err != nil || k != key {
			return 0, 0, fmt.Errorf("sk %s is not the id %d", short(sk), key)
		}
	}
	v, ok := fields["val"]
	if !ok {
		return 0, 0, fmt.Errorf(`no "val"`)
	}
	if val, err = integer(v); err != nil {
		return 0, 0, fmt.Errorf("val %s: %v", short(v), err)
	}
	return key, val, nil
}

func bound(raw json.RawMessage) string {
	if isNil(raw) {
		return "unbounded"
	}
	return short(raw)
}
