package cobra

import (
	"github.com/hyperiso/hyperiso/history"
)

// ident is the triple whose first appearance gives a value identity (§3.5).
type ident struct{ a, b, v int64 }

// identTable maps triples to identities. A Go map keyed by the 24-byte
// triple spent most of a large log's reading in generic hashing and
// probing; this open-addressing table hashes with two multiplies and
// probes adjacent slots.
type identTable struct {
	slots []identSlot // len is a power of two; id == 0 marks a free slot
	n     int
	shift uint
}

type identSlot struct {
	k  ident
	id int64
}

func (t *identTable) hash(k ident) uint64 {
	h := uint64(k.a)*0x9E3779B97F4A7C15 ^ uint64(k.b)*0xC2B2AE3D27D4EB4F ^ uint64(k.v)*0x165667B19E3779F9
	h ^= h >> 31
	h *= 0xBF58476D1CE4E5B9
	return h >> t.shift
}

// reserve makes room for n identities, so that the table does not grow
// (and leave its old slots as garbage) while they are put.
func (t *identTable) reserve(n int) {
	size := max(64, len(t.slots))
	for 4*n > 3*size {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

func (t *identTable) resize(size int) {
	old := t.slots
	t.slots = make([]identSlot, size)
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	for _, s := range old {
		if s.id != 0 {
			t.insert(s.k, s.id)
		}
	}
}

func (t *identTable) get(k ident) (int64, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.hash(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == 0 {
			return 0, false
		}
		if s.k == k {
			return s.id, true
		}
	}
}

// put adds k with id (non-zero); k must not be present.
func (t *identTable) put(k ident, id int64) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.resize(max(64, 2*len(t.slots)))
	}
	t.insert(k, id)
	t.n++
}

// touch loads the slot where k is probed first: a look-ahead load (see
// history.Builder.AddRaw).
func (t *identTable) touch(k ident) int64 {
	if t.n == 0 {
		return 0
	}
	return t.slots[t.hash(k)].id
}

func (t *identTable) insert(k ident, id int64) {
	mask := uint64(len(t.slots) - 1)
	i := t.hash(k)
	for t.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = identSlot{k, id}
}

// builder is the second pass: it assigns value identities in scan order and
// hands sessions, transactions and operations to the history builder. It
// never needs a value back from the builder, which so interns them on two
// cores (Builder.SetParallel); the warnings are found once the History is
// built (check).
type builder struct {
	*scanner
	b       *history.Builder
	w       warner
	flavour Flavour
	ids     identTable
	next    int64
	inits   []initialRead   // reads of the initial state, in scan order
	recs    []record        // the current transaction's W and R records
	raw     []history.RawOp // scratch for AddRaw
	sink    int64           // what look-ahead loads read
}

// initialRead is a read of the initial state of key, as value identity id:
// the first one of each key defines the key's initial value.
type initialRead struct{ key, id int64 }

// record is a W or R record of a log.
type record struct {
	off                int
	write              bool
	wt, wid, key, hash int64
}

// ident is the triple that gives r's value its identity; cur is the
// transaction r is in.
func (bd *builder) ident(r *record, cur int64) ident {
	switch {
	case r.write && bd.flavour == Universal:
		return ident{r.wid, UniversalID, r.hash}
	case r.write:
		return ident{r.wid, cur, r.hash}
	case isInitID(r.wt) && isInitID(r.wid):
		if bd.flavour == Universal {
			return ident{r.wid, InitID, r.hash}
		}
		return ident{r.key, InitID, r.hash}
	}
	return ident{r.wid, r.wt, r.hash}
}

// id returns the identity of a triple, assigning the next one on first use.
func (bd *builder) id(a, b, v int64) int64 {
	k := ident{a, b, v}
	if x, ok := bd.ids.get(k); ok {
		return x
	}
	bd.next++ // from 1: 0 marks a free slot
	bd.ids.put(k, bd.next)
	return bd.next
}

func isInitID(id int64) bool { return id == InitID || id == NullID }

func (bd *builder) build(fi int32) {
	f := bd.files[fi]
	s := bd.b.Session(f.session)
	pos := func(off int) history.Pos { return history.Pos{File: f.name, Offset: int64(off)} }
	var t history.TxnID
	var cur int64
	d := f.data
	for off := 0; off < len(d); {
		switch d[off] {
		case 'S':
			bd.records(t, cur)
			cur = be64(d[off+1:])
			t = bd.b.Begin(s, cur, history.Committed, pos(off))
			off += sizeS
		case 'C':
			off += sizeC
		case 'W':
			bd.recs = append(bd.recs, record{off: off, write: true, wid: be64(d[off+1:]), key: be64(d[off+9:]), hash: be64(d[off+17:])})
			off += sizeW
		case 'R':
			bd.recs = append(bd.recs, record{off: off, wt: be64(d[off+1:]), wid: be64(d[off+9:]), key: be64(d[off+17:]), hash: be64(d[off+25:])})
			off += sizeR
		}
	}
	bd.records(t, cur)
	if f.openAt > 0 {
		bd.b.SetStatus(t, history.Unknown)
	}
}

// records adds the held records of transaction t (native id cur): their
// values' identities, in order, then their operations at once
// (Builder.AddRaw).
func (bd *builder) records(t history.TxnID, cur int64) {
	recs := bd.recs
	if len(recs) == 0 {
		return
	}
	sink := bd.sink
	for i := range recs {
		sink += bd.ids.touch(bd.ident(&recs[i], cur))
	}
	bd.sink = sink
	raw := bd.raw[:0]
	for i := range recs {
		r := &recs[i]
		k := bd.ident(r, cur)
		kind := history.OpRead
		if r.write {
			kind = history.OpWrite
		}
		id := bd.id(k.a, k.b, k.v)
		raw = append(raw, history.RawOp{Kind: kind, Key: r.key, Value: id})
		if !r.write && isInitID(r.wt) && isInitID(r.wid) {
			bd.inits = append(bd.inits, initialRead{r.key, id})
		}
	}
	bd.raw = raw
	bd.b.AddRaw(t, raw)
	bd.recs = recs[:0]
}

func (bd *builder) finish() *history.History {
	// T⊥ writes each key's first initial read (InitWrite keeps the first).
	for _, r := range bd.inits {
		bd.b.InitWrite(r.key, r.id)
	}
	h := bd.b.Finish()
	bd.check(h)
	h.Warnings = bd.w.done()
	return h
}
