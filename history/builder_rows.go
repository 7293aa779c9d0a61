package history

import (
	"cmp"
	"fmt"
	"slices"
)

// Rows: inserts, deletes and predicate reads over key ranges
// (docs/predicates.md). An insert is a write and a delete a write of the
// empty value, marked as such (Op.Src); a predicate read is recorded here
// and expanded by Finish into one read per key of its range, once every
// key of the history is known.

// pendingSelect is a predicate read of t before expansion: at is how many
// operations t had when it was recorded, rows what it returned.
type pendingSelect struct {
	t      TxnID
	lo, hi int64
	at     int
	rows   []Version
	test   *ValueTest
}

// InsertID records that t inserted row k with value v: a write of v,
// marked as an insert.
func (b *Builder) InsertID(t TxnID, k KeyID, v ValueID) {
	b.add(t, Op{Kind: OpWrite, Src: SrcInsert, Key: k, Value: v})
}

// DeleteID records that t deleted row k: a write of EmptyList, marked as a
// delete.
func (b *Builder) DeleteID(t TxnID, k KeyID) {
	b.add(t, Op{Kind: OpWrite, Src: SrcDelete, Key: k, Value: b.ValueID(k, EmptyList)})
}

// Insert records that t inserted value val at row key.
func (b *Builder) Insert(t TxnID, key, val int64) {
	k := b.KeyID(key)
	b.InsertID(t, k, b.ValueID(k, val))
}

// Delete records that t deleted row key.
func (b *Builder) Delete(t TxnID, key int64) { b.DeleteID(t, b.KeyID(key)) }

// SelectID records that t, at this place in its program order, read the
// rows of the key range [lo, hi) and was returned rows (interned
// versions). The reader must have checked that each row's key is an
// integer key (not a name) in [lo, hi), that no key is returned twice,
// and that lo <= hi (SelectID panics otherwise), and that no value is
// EmptyList (a returned row would read as one not returned). Finish expands it (Select).
func (b *Builder) SelectID(t TxnID, lo, hi int64, rows []Version) {
	b.SelectWhereID(t, lo, hi, nil, rows)
}

// SelectWhereID is SelectID for a predicate with a value test (nil: any
// value). The reader must also have checked that each returned row's
// value passes the test (Finish panics otherwise), and that In is sorted
// without repeats.
func (b *Builder) SelectWhereID(t TxnID, lo, hi int64, test *ValueTest, rows []Version) {
	if lo > hi {
		panic(fmt.Sprintf("history: select range [%d,%d)", lo, hi))
	}
	b.flush()
	for _, r := range rows {
		key := b.h.Keys[r.Key]
		if b.isNamed(r.Key) || key < lo || key >= hi {
			panic(fmt.Sprintf("history: select [%d,%d) returns key %d", lo, hi, key))
		}
	}
	sp := b.spans[t]
	at := sp.hi - sp.lo
	if sp.lo < 0 {
		at = len(b.detached[-sp.lo-1])
	}
	b.selects = append(b.selects, pendingSelect{t: t, lo: lo, hi: hi, at: at, rows: slices.Clone(rows), test: test})
}

// inertRows returns whether a row not returned of key k is absent in
// every version the checks see: T⊥ writes it the empty value (its initial
// write, or InitSelected when it has none) and no transaction that may
// commit writes it. A predicate read that did not return such a row read
// it from T⊥, the only version: no edge, no choice, nothing for RC's rule
// (no writer of the key) or validation to compare, at any level; so the
// row is not stored. It interns k's empty value, as storing the row would.
func (b *Builder) inertRows() func(KeyID) bool {
	written := make([]bool, len(b.h.Keys))
	for t := 1; t < len(b.h.Txns); t++ {
		if b.h.Txns[t].Status == Aborted {
			continue
		}
		for _, op := range b.opsOf(b.spans[t]) {
			if op.Kind.IsWrite() {
				written[op.Key] = true
			}
		}
	}
	initial := make(map[KeyID]ValueID, len(b.initOps))
	for _, op := range b.initOps {
		initial[op.Key] = op.Value
	}
	return func(k KeyID) bool {
		if written[k] {
			return false
		}
		v, ok := initial[k]
		if !ok {
			return b.initSel
		}
		return v == b.ValueID(k, EmptyList)
	}
}

// isNamed reports whether k was interned as a name (KeyNamed).
func (b *Builder) isNamed(k KeyID) bool {
	_, named := slices.BinarySearch(b.namedKeys, k)
	return named
}

// InitSelected makes T⊥ write val to every key that a predicate read's
// range covers and that has no initial write when Finish runs (the JSONL
// "init":"zero" rule: rows start absent). Finish applies it before
// InitAllKeys.
func (b *Builder) InitSelected(val int64) { b.initSel, b.initSelV = true, val }

// expandSelects replaces each pending predicate read by its row reads
// (Select) and fills History.Selects. It runs first in Finish, before
// TxnIDs can change (promote), and returns the keys the ranges cover. A
// read of an aborted transaction keeps only the rows it returned: no check
// reads what an aborted transaction read, and its rows not returned would
// cost one operation per key of its range (Select). Nor does any read keep
// a row it did not return whose key is absent in every version (inert).
func (b *Builder) expandSelects() []KeyID {
	if len(b.selects) == 0 {
		return nil
	}
	inert := b.inertRows()
	type rawKey struct {
		raw int64
		k   KeyID
	}
	keys := make([]rawKey, 0, len(b.h.Keys))
	for k, raw := range b.h.Keys {
		if !b.isNamed(KeyID(k)) {
			keys = append(keys, rawKey{raw, KeyID(k)})
		}
	}
	slices.SortFunc(keys, func(x, y rawKey) int { return cmp.Compare(x.raw, y.raw) })
	slices.SortStableFunc(b.selects, func(x, y pendingSelect) int { return cmp.Compare(x.t, y.t) })
	covered := make([]bool, len(b.h.Keys))
	var out []KeyID
	// The ranges of aborted transactions' reads, as +1/-1 marks on keys,
	// so that marking the keys they cover costs one pass.
	var marks []int32
	for i := 0; i < len(b.selects); {
		t := b.selects[i].t
		j := i
		for j < len(b.selects) && b.selects[j].t == t {
			j++
		}
		old := b.opsOf(b.spans[t])
		ops := make([]Op, 0, len(old))
		next := 0
		for _, ps := range b.selects[i:j] {
			ops = append(ops, old[next:ps.at]...)
			next = ps.at
			idx := int32(len(b.h.Selects))
			s := Select{Txn: t, Lo: ps.lo, Hi: ps.hi, At: int32(len(ops)), Test: ps.test}
			// The returned rows in key order, merged with the keys.
			rows := ps.rows
			slices.SortFunc(rows, func(x, y Version) int { return cmp.Compare(b.h.Keys[x.Key], b.h.Keys[y.Key]) })
			for r := 1; r < len(rows); r++ {
				if rows[r].Key == rows[r-1].Key {
					panic(fmt.Sprintf("history: select [%d,%d) returns key %d twice", ps.lo, ps.hi, b.h.Keys[rows[r].Key]))
				}
			}
			from, _ := slices.BinarySearchFunc(keys, ps.lo, func(x rawKey, lo int64) int { return cmp.Compare(x.raw, lo) })
			if b.h.Txns[t].Status == Aborted {
				to, _ := slices.BinarySearchFunc(keys, ps.hi, func(x rawKey, hi int64) int { return cmp.Compare(x.raw, hi) })
				if marks == nil {
					marks = make([]int32, len(keys)+1)
				}
				marks[from]++
				marks[to]--
				for _, r := range rows {
					ops = append(ops, Op{Kind: OpRead, Src: SrcSelect, Key: r.Key, Value: r.Value, List: idx + 1})
				}
				s.N = int32(len(ops)) - s.At
				b.h.Selects = append(b.h.Selects, s)
				continue
			}
			for _, rk := range keys[from:] {
				if rk.raw >= ps.hi {
					break
				}
				if !covered[rk.k] {
					covered[rk.k] = true
					out = append(out, rk.k)
				}
				var v ValueID
				if len(rows) > 0 && rows[0].Key == rk.k {
					v, rows = rows[0].Value, rows[1:]
				} else if inert(rk.k) {
					continue
				} else {
					v = b.ValueID(rk.k, EmptyList)
				}
				ops = append(ops, Op{Kind: OpRead, Src: SrcSelect, Key: rk.k, Value: v, List: idx + 1})
			}
			s.N = int32(len(ops)) - s.At
			b.h.Selects = append(b.h.Selects, s)
		}
		ops = append(ops, old[next:]...)
		b.detached = append(b.detached, ops)
		b.spans[t] = opSpan{lo: -len(b.detached)}
		i = j
	}
	b.selects = nil
	if marks != nil {
		var depth int32
		for i, rk := range keys {
			if depth += marks[i]; depth > 0 && !covered[rk.k] {
				covered[rk.k] = true
				out = append(out, rk.k)
			}
		}
	}
	return out
}
