package cobra

import (
	"github.com/hyperiso/hyperiso/history"
)

// ident is the triple whose first appearance gives a value identity (§3.5).
type ident struct{ a, b, v int64 }

// identTable maps triples to identities, and each to the version, in the
// history builder, of the first key it came with: the version of nearly
// every operation, so that the builder needs no lookup of its own (see
// Builder.AddValue). A Go map keyed by the 24-byte triple spent most of
// a large log's reading in generic hashing and probing; this
// open-addressing table hashes with three multiplies and probes adjacent
// slots, 48 bytes each.
type identTable struct {
	slots []identSlot // len is a power of two; id == 0 marks a free slot
	n     int
	shift uint
}

type identSlot struct {
	k   ident
	id  int64
	key int64 // raw key of the version: ver is (key, id)'s
	ver history.Version
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
	for i := range old {
		if old[i].id != 0 {
			t.insert(&old[i])
		}
	}
}

// get returns the slot of k, or nil.
func (t *identTable) get(k ident) *identSlot {
	if t.n == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.hash(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == 0 {
			return nil
		}
		if s.k == k {
			return s
		}
	}
}

// put adds s, whose triple must not be present and whose id is not 0.
func (t *identTable) put(s *identSlot) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.resize(max(64, 2*len(t.slots)))
	}
	t.insert(s)
	t.n++
}

func (t *identTable) insert(s *identSlot) {
	mask := uint64(len(t.slots) - 1)
	i := t.hash(s.k)
	for t.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = *s
}

// builder is the second pass: it assigns value identities in scan order and
// hands sessions, transactions and operations to the history builder; the
// warnings are found once the History is built (check).
type builder struct {
	*scanner
	b       *history.Builder
	w       warner
	flavour Flavour
	ids     identTable
	next    int64
	inits   []history.Version // versions read from the initial state, in scan order
	pending []pendingRead     // check's, with room for every read
	sink    uint64            // what lookAhead loaded, kept so that the loads stay
}

// record is a W or R record of a log.
type record struct {
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

func isInitID(id int64) bool { return id == InitID || id == NullID }

func (bd *builder) build(fi int32) {
	f := bd.files[fi]
	s := bd.b.Session(f.session)
	pos := func(off int) history.Pos { return history.Pos{File: f.name, Offset: int64(off)} }
	var t history.TxnID
	var cur int64
	d := f.data
	ahead := 0 // records before it have been looked ahead at
	for off := 0; off < len(d); {
		if off >= ahead {
			ahead = bd.lookAhead(d, off, cur)
		}
		switch d[off] {
		case 'S':
			cur = be64(d[off+1:])
			t = bd.b.Begin(s, cur, history.Committed, pos(off))
			off += sizeS
		case 'C':
			off += sizeC
		case 'W':
			r := record{write: true, wid: be64(d[off+1:]), key: be64(d[off+9:]), hash: be64(d[off+17:])}
			ver := bd.version(bd.ident(&r, cur), r.key)
			bd.b.WriteID(t, ver.Key, ver.Value)
			off += sizeW
		case 'R':
			r := record{wt: be64(d[off+1:]), wid: be64(d[off+9:]), key: be64(d[off+17:]), hash: be64(d[off+25:])}
			ver := bd.version(bd.ident(&r, cur), r.key)
			bd.b.ReadID(t, ver.Key, ver.Value)
			if isInitID(r.wt) && isInitID(r.wid) {
				bd.inits = append(bd.inits, ver)
			}
			off += sizeR
		}
	}
	if f.openAt > 0 {
		bd.b.SetStatus(t, history.Unknown)
	}
}

// lookAheadRecords is how many records build looks ahead at together.
const lookAheadRecords = 32

// lookAhead loads the identity slots the records from d[off] on will probe,
// up to lookAheadRecords of them, and returns the offset after the last:
// their cache misses then overlap, where the lookups one after another
// would wait for each. cur is the transaction open at off.
func (bd *builder) lookAhead(d []byte, off int, cur int64) int {
	if bd.ids.n == 0 {
		return off + 1
	}
	sink := bd.sink
	for n := 0; n < lookAheadRecords && off < len(d); n++ {
		var r record
		switch d[off] {
		case 'S':
			cur = be64(d[off+1:])
			off += sizeS
			continue
		case 'C':
			off += sizeC
			continue
		case 'W':
			r = record{write: true, wid: be64(d[off+1:]), key: be64(d[off+9:]), hash: be64(d[off+17:])}
			off += sizeW
		default: // 'R'
			r = record{wt: be64(d[off+1:]), wid: be64(d[off+9:]), key: be64(d[off+17:]), hash: be64(d[off+25:])}
			off += sizeR
		}
		sink += uint64(bd.ids.slots[bd.ids.hash(bd.ident(&r, cur))].id)
	}
	bd.sink = sink
	return off
}

// version returns the version of a record of key whose triple is k,
// giving k the next identity on first use.
func (bd *builder) version(k ident, key int64) history.Version {
	s := bd.ids.get(k)
	switch {
	case s != nil && s.key == key:
		return s.ver
	case s != nil:
		// The triple with another key (a read naming a write of
		// another key, or, universal, a hash written to two keys): a
		// version the builder interns.
		kid := bd.b.KeyID(key)
		return history.Version{Key: kid, Value: bd.b.ValueID(kid, s.id)}
	}
	bd.next++ // from 1: 0 marks a free slot
	kid := bd.b.KeyID(key)
	ns := identSlot{k: k, id: bd.next, key: key, ver: history.Version{Key: kid, Value: bd.b.AddValue(kid, bd.next)}}
	bd.ids.put(&ns)
	return ns.ver
}

func (bd *builder) finish() *history.History {
	// T⊥ writes each key's first initial read (InitWriteID keeps the
	// first).
	for _, v := range bd.inits {
		bd.b.InitWriteID(v.Key, v.Value)
	}
	h := bd.b.Finish()
	bd.check(h)
	h.Warnings = bd.w.done()
	return h
}
