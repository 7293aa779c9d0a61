package history

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// Value tests (docs/predicates.md): a predicate read may test a row's
// value besides its key. A row such a read did not return was absent or
// had a value the test rejects, so its observation is one of several
// versions: the row's read carries a stand-in value (OneOf) whose writers
// are the writers of all those versions, an uncertain read-from like a
// repeated value's, which every engine reads through Index.Writers.

// ValueTest is the value part of a predicate: when HasIn, the value is one
// of In (sorted, no repeats); when HasRange, VLo <= value < VHi; when
// HasMod, value mod Mod is Rem (Mod != 0; the floored modulo, whose result
// has Mod's sign, as Elle's [:mod m r] means it). The tests set all apply.
// It tests integer values only: a value read as a name matches no test.
type ValueTest struct {
	In       []int64
	HasIn    bool
	VLo, VHi int64
	HasRange bool
	Mod, Rem int64
	HasMod   bool
}

// FlooredMod returns v mod m with the sign of m (m != 0): the remainder a
// modulo test compares with Rem.
func FlooredMod(v, m int64) int64 {
	r := v % m // MinInt64 % -1 is 0 in Go, no overflow
	if r != 0 && (r < 0) != (m < 0) {
		r += m
	}
	return r
}

// Match reports whether the live value v passes the test.
func (t *ValueTest) Match(v int64) bool {
	if t == nil {
		return true
	}
	if t.HasIn {
		if _, ok := slices.BinarySearch(t.In, v); !ok {
			return false
		}
	}
	if t.HasMod && FlooredMod(v, t.Mod) != t.Rem {
		return false
	}
	return !t.HasRange || t.VLo <= v && v < t.VHi
}

// Equal reports whether t and u test the same (nil is no test).
func (t *ValueTest) Equal(u *ValueTest) bool {
	if t == nil || u == nil {
		return t == u
	}
	return t.HasIn == u.HasIn && slices.Equal(t.In, u.In) && t.HasRange == u.HasRange &&
		(!t.HasRange || t.VLo == u.VLo && t.VHi == u.VHi) &&
		t.HasMod == u.HasMod && (!t.HasMod || t.Mod == u.Mod && t.Rem == u.Rem)
}

// String renders the test for messages: "value in {1, 2}", "value in
// [0,10)", "value mod 2 = 0", or several joined by "and"; "" for no test.
func (t *ValueTest) String() string {
	if t == nil {
		return ""
	}
	var parts []string
	if t.HasIn {
		vs := make([]string, len(t.In))
		for i, v := range t.In {
			vs[i] = fmt.Sprint(v)
		}
		parts = append(parts, "value in {"+strings.Join(vs, ", ")+"}")
	}
	if t.HasRange {
		parts = append(parts, fmt.Sprintf("value in [%d,%d)", t.VLo, t.VHi))
	}
	if t.HasMod {
		parts = append(parts, fmt.Sprintf("value mod %d = %d", t.Mod, t.Rem))
	}
	return strings.Join(parts, " and ")
}

// Predicate renders s's predicate for messages: "keys [lo,hi)", followed
// by its value test if any.
func (s Select) Predicate() string {
	p := fmt.Sprintf("keys [%d,%d)", s.Lo, s.Hi)
	if s.Test != nil {
		p += " with " + s.Test.String()
	}
	return p
}

// SamePredicate reports whether s and o read the same predicate.
func (s Select) SamePredicate(o Select) bool {
	return s.Lo == o.Lo && s.Hi == o.Hi && s.Test.Equal(o.Test)
}

// Members returns the versions of k that a read of v may have observed:
// OneOf's for a stand-in, else v alone (in a fresh one-element slice).
func (h *History) Members(k KeyID, v ValueID) []ValueID {
	if m, ok := h.OneOf[Version{k, v}]; ok {
		return m
	}
	return []ValueID{v}
}

// Observes reports whether a read of v of key k may have observed
// version w.
func (h *History) Observes(k KeyID, v, w ValueID) bool {
	if v == w {
		return true
	}
	m, ok := h.OneOf[Version{k, v}]
	if !ok {
		return false
	}
	_, in := slices.BinarySearch(m, w)
	return in
}

// IsOneOf reports whether (k, v) is a stand-in of OneOf.
func (h *History) IsOneOf(k KeyID, v ValueID) bool {
	_, ok := h.OneOf[Version{k, v}]
	return ok
}

// oneOfs interns stand-in values: one per key and set of versions.
type oneOfs struct {
	h   *History
	ids map[string]ValueID
	buf []byte
}

// id returns the value of k that stands for members (sorted), adding it to h.Values (as EmptyList: only a row not returned
// reads one) and h.OneOf on first use.
func (o *oneOfs) id(k KeyID, members []ValueID) ValueID {
	h := o.h
	o.buf = binary.AppendUvarint(o.buf[:0], uint64(k))
	for _, m := range members {
		o.buf = binary.AppendUvarint(o.buf, uint64(m))
	}
	if v, ok := o.ids[string(o.buf)]; ok {
		return v
	}
	if o.ids == nil {
		o.ids = map[string]ValueID{}
		for ver, m := range h.OneOf {
			b := binary.AppendUvarint(nil, uint64(ver.Key))
			for _, x := range m {
				b = binary.AppendUvarint(b, uint64(x))
			}
			o.ids[string(b)] = ver.Value
		}
		if v, ok := o.ids[string(o.buf)]; ok {
			return v
		}
	}
	v := ValueID(len(h.Values[k]))
	h.Values[k] = append(h.Values[k], EmptyList)
	if h.ValueNames != nil && h.ValueNames[k] != nil {
		h.ValueNames[k] = append(h.ValueNames[k], "")
	}
	if h.OneOf == nil {
		h.OneOf = map[Version][]ValueID{}
	}
	h.OneOf[Version{k, v}] = slices.Clone(members)
	o.ids[string(o.buf)] = v
	return v
}

// applyValueTests gives each row that a predicate read with a value test
// did not return its stand-in value: one of the row's absent versions
// and of its values the test rejects. A row with no such value keeps the
// empty value. It runs at the end of Finish, once every value is known.
func (b *Builder) applyValueTests() {
	h := &b.h
	o := oneOfs{h: h}
	var members []ValueID
	for i := range h.Selects {
		s := &h.Selects[i]
		if s.Test == nil {
			continue
		}
		ops := h.Txns[s.Txn].Ops[s.At : s.At+s.N]
		for j := range ops {
			op := &ops[j]
			k := op.Key
			named := func(v ValueID) bool {
				return h.ValueNames != nil && h.ValueNames[k] != nil && h.ValueNames[k][v] != ""
			}
			if raw := h.Values[k][op.Value]; raw != EmptyList {
				if named(op.Value) || !s.Test.Match(raw) {
					panic(fmt.Sprintf("history: select %s returns row %d = %d, which it rejects", s.Predicate(), h.Keys[k], raw))
				}
				continue
			}
			members = members[:0]
			for v, raw := range h.Values[k] {
				if h.IsOneOf(k, ValueID(v)) {
					continue
				}
				if ValueID(v) == op.Value || raw != EmptyList && (named(ValueID(v)) || !s.Test.Match(raw)) {
					members = append(members, ValueID(v))
				}
			}
			if len(members) > 1 {
				op.Value = o.id(k, members)
			}
		}
	}
}

// NarrowReads returns h with, in each transaction that apart rejects (one
// visible set for all its reads), the first read of each key narrowed to
// the versions that every read of the key before the transaction's first
// write of it may have observed (Members); h itself when no read has a
// stand-in value. Under one visible set those reads observe one version,
// and the engines take the first read for all (the others are checked by
// validation), so its candidates must be the intersection. A read that
// would empty the intersection is left to validation, which reports it.
// The copy shares what it does not change with h.
func (h *History) NarrowReads(apart func(TxnID) bool) *History {
	if len(h.OneOf) == 0 {
		return h
	}
	n := h.shallowCopy()
	o := oneOfs{h: n}
	copied := map[KeyID]bool{}
	first := map[KeyID]int{} // key → index of the first read, -1 once written
	for t := 1; t < len(n.Txns); t++ {
		if apart(TxnID(t)) {
			continue
		}
		ops := n.Txns[t].Ops
		clear(first)
		var changed []Op
		for i, op := range ops {
			f, seen := first[op.Key]
			switch {
			case op.Kind.IsWrite():
				first[op.Key] = -1
			case !seen:
				first[op.Key] = i
			case f >= 0:
				cur := ops[f]
				if changed != nil {
					cur = changed[f]
				}
				a, c := n.Members(op.Key, cur.Value), n.Members(op.Key, op.Value)
				both := intersect(a, c)
				if len(both) == 0 || len(both) == len(a) {
					continue
				}
				if changed == nil {
					changed = slices.Clone(ops)
				}
				if !copied[op.Key] {
					copied[op.Key] = true
					n.Values[op.Key] = slices.Clip(n.Values[op.Key])
					if n.ValueNames != nil && n.ValueNames[op.Key] != nil {
						n.ValueNames[op.Key] = slices.Clip(n.ValueNames[op.Key])
					}
				}
				if len(both) == 1 && !n.Unreturned(cur) {
					changed[f].Value = both[0]
				} else {
					changed[f].Value = o.id(op.Key, both)
				}
			}
		}
		if changed != nil {
			n.Txns[t].Ops = changed
		}
	}
	return n
}

func intersect(a, b []ValueID) []ValueID {
	var out []ValueID
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			out = append(out, x)
		}
	}
	return out
}

// shallowCopy copies h's fields (not its index) with fresh Txns, Values,
// ValueNames and OneOf headers, so that NarrowReads can replace entries.
func (h *History) shallowCopy() *History {
	n := &History{
		Source: h.Source, Format: h.Format, Sessions: h.Sessions, Txns: slices.Clone(h.Txns),
		InitKind: h.InitKind, Keys: h.Keys, Values: slices.Clone(h.Values), KeyNames: h.KeyNames,
		Lists: h.Lists, Selects: h.Selects, AbortedWrites: h.AbortedWrites,
		VersionHints: h.VersionHints, NoConflictHints: h.NoConflictHints, Warnings: h.Warnings,
		Meta: h.Meta, Dropped: h.Dropped, OneOf: make(map[Version][]ValueID, len(h.OneOf)),
	}
	if h.ValueNames != nil {
		n.ValueNames = slices.Clone(h.ValueNames)
	}
	for k, v := range h.OneOf {
		n.OneOf[k] = v
	}
	return n
}

// ItemReads returns h without the rows its predicate reads did not
// return, the rows they returned kept as plain reads, and no Selects:
// the item part of h. Repeatable read orders item reads as SER does and
// lets only those rows observe older versions (docs/predicates.md), so a
// history whose item part violates SER violates RR. Transactions keep
// their ids; operation indices change in those with predicate reads.
func (h *History) ItemReads() *History {
	n := h.shallowCopy()
	n.Selects = nil
	for i, s := range h.Selects {
		t := s.Txn
		if i > 0 && h.Selects[i-1].Txn == t {
			continue // done with t's first predicate read
		}
		ops := make([]Op, 0, len(h.Txns[t].Ops))
		for _, op := range h.Txns[t].Ops {
			if op.Src == SrcSelect {
				if h.Unreturned(op) {
					continue
				}
				op.Src, op.List = SrcPlain, 0
			}
			ops = append(ops, op)
		}
		n.Txns[t].Ops = ops
	}
	return n
}
