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
		old := t.slots
		size := max(64, 2*len(old))
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

// Per-version flags.
const (
	verWritten uint8 = 1 << iota // some transaction writes it
	verInit                      // the initial transaction writes it
	verDup                       // reported as written twice
)

// pendingRead is a read whose version was not written when it was met; it
// is a thin-air read unless a later record writes that version.
type pendingRead struct {
	at                 loc
	key, wt, wid, hash int64
	ver                history.Version
}

// builder is the second pass: it assigns value identities in scan order and
// hands sessions, transactions and operations to the history builder.
type builder struct {
	*scanner
	b       *history.Builder
	w       warner
	flavour Flavour
	ids     identTable
	next    int64
	vers    [][]uint8 // by KeyID and ValueID
	initVal []int32   // by KeyID: 1 + ValueID of the key's initial value
	initOps []history.Op
	pending []pendingRead
	recs    []record        // the current transaction's W and R records
	raw     []history.RawOp // scratch for AddRaw
	sink    int64           // what look-ahead loads read
}

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

// flags returns the flags of ver, growing the tables as the builder interns
// new keys and values.
func (bd *builder) flags(ver history.Version) *uint8 {
	for int(ver.Key) >= len(bd.vers) {
		bd.vers = append(bd.vers, nil)
		bd.initVal = append(bd.initVal, 0)
	}
	vs := bd.vers[ver.Key]
	for int(ver.Value) >= len(vs) {
		vs = append(vs, 0)
	}
	bd.vers[ver.Key] = vs
	return &vs[ver.Value]
}

func isInitID(id int64) bool { return id == InitID || id == NullID }

func (bd *builder) build(fi int32) {
	f := bd.files[fi]
	s := bd.b.Session(f.session)
	pos := func(off int) history.Pos { return history.Pos{File: f.name, Offset: int64(off)} }
	if len(f.data) == 0 {
		bd.w.add(kindEmpty, pos(0), "empty log: a session with no transactions")
	}
	var t history.TxnID
	var cur int64
	d := f.data
	for off := 0; off < len(d); {
		switch d[off] {
		case 'S':
			bd.records(fi, t, cur)
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
	bd.records(fi, t, cur)
	if f.openAt > 0 {
		bd.b.SetStatus(t, history.Unknown)
		bd.w.add(kindOpen, pos(int(f.openAt-1)), "transaction %s has no commit record when the file ends: kept with status unknown", hexID(cur))
	}
}

// records adds the held records of transaction t (native id cur) of file
// fi: their values' identities, in order, then their operations at once
// (Builder.AddRaw), then what each record implies.
func (bd *builder) records(fi int32, t history.TxnID, cur int64) {
	recs := bd.recs
	if len(recs) == 0 {
		return
	}
	sink := bd.sink
	for i := range recs {
		sink += bd.ids.touch(bd.ident(&recs[i], cur))
	}
	raw := bd.raw[:0]
	for i := range recs {
		r := &recs[i]
		k := bd.ident(r, cur)
		kind := history.OpRead
		if r.write {
			kind = history.OpWrite
		}
		raw = append(raw, history.RawOp{Kind: kind, Key: r.key, Value: bd.id(k.a, k.b, k.v)})
	}
	bd.raw = raw
	bd.b.AddRaw(t, raw)
	ops := bd.b.Ops(t)
	ops = ops[len(ops)-len(raw):]
	for _, op := range ops {
		if int(op.Key) < len(bd.vers) && int(op.Value) < len(bd.vers[op.Key]) {
			sink += int64(bd.vers[op.Key][op.Value])
		}
	}
	bd.sink = sink
	f := bd.files[fi]
	for i := range recs {
		r := &recs[i]
		ver := history.Version{Key: ops[i].Key, Value: ops[i].Value}
		if r.write {
			fl := bd.flags(ver)
			// Reported once per (key, value), at its second write.
			if *fl&(verWritten|verDup) == verWritten && bd.flavour == Universal {
				*fl |= verDup
				bd.w.add(kindDupValue, history.Pos{File: f.name, Offset: int64(r.off)}, "write of (key %d, value hash %#x) repeats an earlier write: universal-flavour values are not unique (informational)",
					r.key, uint64(r.hash))
			}
			*fl |= verWritten
			continue
		}
		bd.read(ver, cur, loc{fi, int64(r.off)}, r.wt, r.wid, r.key, r.hash)
	}
	bd.recs = recs[:0]
}

// read goes on with a read of ver, already added.
func (bd *builder) read(ver history.Version, cur int64, at loc, wt, wid, key, hash int64) {
	if isInitID(wt) && isInitID(wid) {
		// A read of the initial state: the first one of each key defines
		// the key's initial value.
		fl := bd.flags(ver)
		switch iv := bd.initVal[ver.Key]; {
		case iv == 0:
			bd.initVal[ver.Key] = int32(ver.Value) + 1
			bd.initOps = append(bd.initOps, history.Op{Kind: history.OpWrite, Key: ver.Key, Value: ver.Value})
			*fl |= verInit
		case iv-1 != int32(ver.Value):
			bd.w.add(kindInitConflict, bd.pos(at), "read of the initial state of key %d (writer %s, write id %s, value hash %#x) differs from the key's first such read; only that one defines the initial value",
				key, hexID(wt), hexID(wid), uint64(hash))
		}
		return
	}
	switch {
	case isInitID(wt) && (wid == GCTrue || wid == GCFalse):
		bd.w.add(kindGC, bd.pos(at), "read issued by Cobra's garbage collector (write id %s); kept as a read of a write no log has", hexID(wid))
	case isInitID(wt):
		bd.w.add(kindBadInitWid, bd.pos(at), "read names writer %s with write id %s, which is neither INIT nor NULL (PolySI rejects this)",
			hexID(wt), hexID(wid))
	case wt == cur:
		bd.w.add(kindOwnRead, bd.pos(at), "read names its own transaction %s as the writer", hexID(wt))
	}
	if *bd.flags(ver)&(verWritten|verInit) == 0 {
		bd.pending = append(bd.pending, pendingRead{at, key, wt, wid, hash, ver})
	}
}

func (bd *builder) finish() *history.History {
	for _, r := range bd.pending {
		if *bd.flags(r.ver)&(verWritten|verInit) != 0 {
			continue // written later in scan order
		}
		detail := ""
		if w, ok := bd.wids[r.wid]; ok && r.wid != UniversalID && bd.flavour == Unique {
			detail = "; that write id belongs to the write at " + bd.pos(w).String()
		} else if r.wid != UniversalID && bd.flavour == Unique {
			detail = "; no log has that write id"
		}
		bd.w.add(kindThinAir, bd.pos(r.at), "read of key %d (writer %s, write id %s, value hash %#x) matches no write (thin-air read)%s",
			r.key, hexID(r.wt), hexID(r.wid), uint64(r.hash), detail)
	}
	bd.w.flush()
	for _, op := range bd.initOps {
		bd.b.InitWriteID(op.Key, op.Value)
	}
	return bd.b.Finish()
}
