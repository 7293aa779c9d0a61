package cobra

// The reader as it was before its warnings were found after reading
// (commit c74d58f), kept as the reference the fast reader must equal:
// same histories, warnings and errors. Its only change is that a
// transaction's operations are added one at a time (Builder.Read and
// Write) instead of in a group (Builder.AddRaw).

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/hyperiso/hyperiso/history"
)

// refParseLogs is ParseLogs: it reads a Cobra history from logs, ordered and numbered by name as
// Read does with the files of a directory. source names the history. Each
// log is read into memory whole: the flavour must be known before the first
// identity is assigned, so the records are scanned twice.
func refParseLogs(source string, logs []Log, opt Options) (*history.History, error) {
	if len(logs) == 0 {
		return nil, history.Errorf(history.Pos{File: source}, "no .log file: not a Cobra history")
	}
	files := make([]*logFile, len(logs))
	for i, l := range logs {
		data, err := io.ReadAll(l.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name, err)
		}
		files[i] = &logFile{name: l.Name, base: filepath.Base(l.Name), data: data}
	}
	return refParse(source, files, opt)
}

func refParse(source string, files []*logFile, opt Options) (*history.History, error) {
	if opt.Flavour > Universal {
		return nil, fmt.Errorf("cobra: unknown flavour %d", opt.Flavour)
	}
	if err := order(source, files); err != nil {
		return nil, err
	}
	s := refScanner{files: files, opt: opt, txns: make(map[int64]refLoc), wids: make(map[int64]refLoc)}
	s.dup.second.file = -1
	for i := range files {
		if err := s.scan(int32(i)); err != nil {
			return nil, err
		}
	}
	b := history.NewBuilder(source, "cobra")
	bd := refBuilder{refScanner: &s, b: b}
	bd.w.b = b
	detected := Unique
	if s.universalW > 0 {
		detected = Universal
	}
	fl := opt.Flavour
	switch {
	case fl == Auto:
		fl = detected
		if s.universalW > 0 && s.otherW > 0 {
			bd.w.add(kindFlavour, s.pos(s.firstOtherW), "mixed flavour: %d writes have the UNIVERSAL write id and %d do not; reading as universal",
				s.universalW, s.otherW)
		}
	case fl == Unique && s.universalW > 0:
		bd.w.add(kindFlavour, s.pos(s.firstUniversalW), "read as unique flavour, but %d writes have the UNIVERSAL write id: no read can match them", s.universalW)
	case fl == Universal && s.otherW > 0:
		bd.w.add(kindFlavour, s.pos(s.firstOtherW), "read as universal flavour, but %d writes have their own write id: reads that name their writer cannot match them", s.otherW)
	}
	if fl == Unique && s.dup.second.file >= 0 {
		d := s.dup
		return nil, history.Errorf(s.pos(d.second), "write id %s is already used by the write at %s (unique-write-id flavour needs distinct write ids)",
			hexID(d.wid), s.pos(d.first))
	}
	bd.flavour = fl
	b.SetMeta("cobra.flavour", fl.String())
	b.SetMeta("cobra.detected_flavour", detected.String())
	b.SetInit(history.InitImplicit, InitID)
	for i := range files {
		bd.build(int32(i))
	}
	return bd.finish(), nil
}

// loc is a position: an index into the files and a byte offset.
type refLoc struct {
	file int32
	off  int64
}

// scanner is the first pass: it checks the structure of every log (C1–C7),
// finds duplicate transaction and write ids, and counts writes by write-id
// kind for the flavour detection. The second pass then trusts the structure.
type refScanner struct {
	files []*logFile
	opt   Options
	txns  map[int64]refLoc // where each transaction id starts (C6)
	wids  map[int64]refLoc // non-UNIVERSAL write ids (C9, diagnostics)
	dup   struct {         // first repeated write id, for C9
		wid           int64
		first, second refLoc
	}
	universalW, otherW           int
	ops                          int // W and R records, to size the identity map
	firstUniversalW, firstOtherW refLoc
}

func (s *refScanner) pos(l refLoc) history.Pos {
	return history.Pos{File: s.files[l.file].name, Offset: l.off}
}

func (s *refScanner) scan(fi int32) error {
	f := s.files[fi]
	d := f.data
	at := func(off int) history.Pos { return history.Pos{File: f.name, Offset: int64(off)} }
	if len(d) > 0 && d[0] == '{' {
		return history.Errorf(at(0), "this is a Viper JSON log (docs/formats.md, section viper), not a Cobra log: read it with --format viper")
	}
	open, openAt := false, 0
	var cur int64
	off := 0
	for off < len(d) {
		op := d[off]
		var size int
		switch op {
		case 'S':
			size = sizeS
		case 'C':
			size = sizeC
		case 'W':
			size = sizeW
		case 'R':
			size = sizeR
		case 'A':
			return history.Errorf(at(off), "record type byte 0x41 ('A'): Cobra logs have no abort record (aborted transactions are not logged)")
		default:
			return history.Errorf(at(off), "unknown record type byte 0x%02x at a record start (want S, C, W or R)", op)
		}
		if off+size > len(d) {
			return history.Errorf(at(off), "truncated: file ends at byte %d, inside the %d-byte %s record that starts here",
				len(d), size, recordNames[op])
		}
		r := d[off+1 : off+size]
		switch op {
		case 'S':
			id := be64(r)
			if open {
				return history.Errorf(at(off), "S of transaction %s while transaction %s, started at byte %d, is still open",
					hexID(id), hexID(cur), openAt)
			}
			if id == InitID {
				return history.Errorf(at(off), "transaction id %s is the initial transaction's sentinel id", hexID(id))
			}
			if prev, dup := s.txns[id]; dup {
				return history.Errorf(at(off), "transaction id %s started twice: first at %s", hexID(id), s.pos(prev))
			}
			s.txns[id] = refLoc{fi, int64(off)}
			open, openAt, cur = true, off, id
		case 'C':
			id := be64(r)
			if !open {
				return history.Errorf(at(off), "C of transaction %s with no open transaction", hexID(id))
			}
			if id != cur {
				return history.Errorf(at(off), "C of transaction %s, but the open transaction is %s, started at byte %d",
					hexID(id), hexID(cur), openAt)
			}
			open = false
		case 'W', 'R':
			if !open {
				return history.Errorf(at(off), "%s record outside a transaction (no S before it)", recordNames[op])
			}
			s.ops++
			if op == 'W' {
				s.write(fi, off, be64(r))
			}
		}
		off += size
	}
	if open {
		if !s.opt.Lenient {
			return history.Errorf(at(openAt), "transaction %s is still open when the file ends at byte %d (client crashed or file truncated)",
				hexID(cur), len(d))
		}
		f.openAt = int64(openAt) + 1
	}
	return nil
}

func (s *refScanner) write(fi int32, off int, wid int64) {
	here := refLoc{fi, int64(off)}
	if wid == UniversalID {
		if s.universalW == 0 {
			s.firstUniversalW = here
		}
		s.universalW++
		return
	}
	if s.otherW == 0 {
		s.firstOtherW = here
	}
	s.otherW++
	if prev, dup := s.wids[wid]; dup {
		if s.dup.second.file < 0 {
			s.dup.wid, s.dup.first, s.dup.second = wid, prev, here
		}
		return
	}
	s.wids[wid] = here
}

// ident is the triple whose first appearance gives a value identity (§3.5).
type refIdent struct{ a, b, v int64 }

// identTable maps triples to identities. A Go map keyed by the 24-byte
// triple spent most of a large log's reading in generic hashing and
// probing; this open-addressing table hashes with two multiplies and
// probes adjacent slots.
type refIdentTable struct {
	slots []refIdentSlot // len is a power of two; id == 0 marks a free slot
	n     int
	shift uint
}

type refIdentSlot struct {
	k  refIdent
	id int64
}

func (t *refIdentTable) hash(k refIdent) uint64 {
	h := uint64(k.a)*0x9E3779B97F4A7C15 ^ uint64(k.b)*0xC2B2AE3D27D4EB4F ^ uint64(k.v)*0x165667B19E3779F9
	h ^= h >> 31
	h *= 0xBF58476D1CE4E5B9
	return h >> t.shift
}

func (t *refIdentTable) get(k refIdent) (int64, bool) {
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
func (t *refIdentTable) put(k refIdent, id int64) {
	if 4*(t.n+1) > 3*len(t.slots) {
		old := t.slots
		size := max(64, 2*len(old))
		t.slots = make([]refIdentSlot, size)
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

func (t *refIdentTable) insert(k refIdent, id int64) {
	mask := uint64(len(t.slots) - 1)
	i := t.hash(k)
	for t.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = refIdentSlot{k, id}
}

// Per-version flags.
const (
	refVerWritten uint8 = 1 << iota // some transaction writes it
	refVerInit                      // the initial transaction writes it
	refVerDup                       // reported as written twice
)

// pendingRead is a read whose version was not written when it was met; it
// is a thin-air read unless a later record writes that version.
type refPendingRead struct {
	at                 refLoc
	key, wt, wid, hash int64
	ver                history.Version
}

// builder is the second pass: it assigns value identities in scan order and
// hands sessions, transactions and operations to the history builder.
type refBuilder struct {
	*refScanner
	b       *history.Builder
	w       refWarner
	flavour Flavour
	ids     refIdentTable
	next    int64
	vers    [][]uint8 // by KeyID and ValueID
	initVal []int32   // by KeyID: 1 + ValueID of the key's initial value
	initOps []history.Op
	pending []refPendingRead
	recs    []refRecord // the current transaction's W and R records
}

// record is a W or R record of a log.
type refRecord struct {
	off                int
	write              bool
	wt, wid, key, hash int64
}

// ident is the triple that gives r's value its identity; cur is the
// transaction r is in.
func (bd *refBuilder) refIdent(r *refRecord, cur int64) refIdent {
	switch {
	case r.write && bd.flavour == Universal:
		return refIdent{r.wid, UniversalID, r.hash}
	case r.write:
		return refIdent{r.wid, cur, r.hash}
	case refIsInitID(r.wt) && refIsInitID(r.wid):
		if bd.flavour == Universal {
			return refIdent{r.wid, InitID, r.hash}
		}
		return refIdent{r.key, InitID, r.hash}
	}
	return refIdent{r.wid, r.wt, r.hash}
}

// id returns the identity of a triple, assigning the next one on first use.
func (bd *refBuilder) id(a, b, v int64) int64 {
	k := refIdent{a, b, v}
	if x, ok := bd.ids.get(k); ok {
		return x
	}
	bd.next++ // from 1: 0 marks a free slot
	bd.ids.put(k, bd.next)
	return bd.next
}

// flags returns the flags of ver, growing the tables as the builder interns
// new keys and values.
func (bd *refBuilder) flags(ver history.Version) *uint8 {
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

func refIsInitID(id int64) bool { return id == InitID || id == NullID }

func (bd *refBuilder) build(fi int32) {
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
			bd.recs = append(bd.recs, refRecord{off: off, write: true, wid: be64(d[off+1:]), key: be64(d[off+9:]), hash: be64(d[off+17:])})
			off += sizeW
		case 'R':
			bd.recs = append(bd.recs, refRecord{off: off, wt: be64(d[off+1:]), wid: be64(d[off+9:]), key: be64(d[off+17:]), hash: be64(d[off+25:])})
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
func (bd *refBuilder) records(fi int32, t history.TxnID, cur int64) {
	recs := bd.recs
	if len(recs) == 0 {
		return
	}
	ops := make([]history.Op, len(recs))
	for i := range recs {
		r := &recs[i]
		k := bd.refIdent(r, cur)
		if r.write {
			bd.b.Write(t, r.key, bd.id(k.a, k.b, k.v))
		} else {
			bd.b.Read(t, r.key, bd.id(k.a, k.b, k.v))
		}
		all := bd.b.Ops(t)
		ops[i] = all[len(all)-1]
	}
	f := bd.files[fi]
	for i := range recs {
		r := &recs[i]
		ver := history.Version{Key: ops[i].Key, Value: ops[i].Value}
		if r.write {
			fl := bd.flags(ver)
			// Reported once per (key, value), at its second write.
			if *fl&(refVerWritten|refVerDup) == refVerWritten && bd.flavour == Universal {
				*fl |= refVerDup
				bd.w.add(kindDupValue, history.Pos{File: f.name, Offset: int64(r.off)}, "write of (key %d, value hash %#x) repeats an earlier write: universal-flavour values are not unique (informational)",
					r.key, uint64(r.hash))
			}
			*fl |= refVerWritten
			continue
		}
		bd.read(ver, cur, refLoc{fi, int64(r.off)}, r.wt, r.wid, r.key, r.hash)
	}
	bd.recs = recs[:0]
}

// read goes on with a read of ver, already added.
func (bd *refBuilder) read(ver history.Version, cur int64, at refLoc, wt, wid, key, hash int64) {
	if refIsInitID(wt) && refIsInitID(wid) {
		// A read of the initial state: the first one of each key defines
		// the key's initial value.
		fl := bd.flags(ver)
		switch iv := bd.initVal[ver.Key]; {
		case iv == 0:
			bd.initVal[ver.Key] = int32(ver.Value) + 1
			bd.initOps = append(bd.initOps, history.Op{Kind: history.OpWrite, Key: ver.Key, Value: ver.Value})
			*fl |= refVerInit
		case iv-1 != int32(ver.Value):
			bd.w.add(kindInitConflict, bd.pos(at), "read of the initial state of key %d (writer %s, write id %s, value hash %#x) differs from the key's first such read; only that one defines the initial value",
				key, hexID(wt), hexID(wid), uint64(hash))
		}
		return
	}
	switch {
	case refIsInitID(wt) && (wid == GCTrue || wid == GCFalse):
		bd.w.add(kindGC, bd.pos(at), "read issued by Cobra's garbage collector (write id %s); kept as a read of a write no log has", hexID(wid))
	case refIsInitID(wt):
		bd.w.add(kindBadInitWid, bd.pos(at), "read names writer %s with write id %s, which is neither INIT nor NULL (PolySI rejects this)",
			hexID(wt), hexID(wid))
	case wt == cur:
		bd.w.add(kindOwnRead, bd.pos(at), "read names its own transaction %s as the writer", hexID(wt))
	}
	if *bd.flags(ver)&(refVerWritten|refVerInit) == 0 {
		bd.pending = append(bd.pending, refPendingRead{at, key, wt, wid, hash, ver})
	}
}

func (bd *refBuilder) finish() *history.History {
	for _, r := range bd.pending {
		if *bd.flags(r.ver)&(refVerWritten|refVerInit) != 0 {
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

// warner passes warnings to the builder, at most maxWarningsPerKind of each
// kind, and remembers how many it held back.
type refWarner struct {
	b       *history.Builder
	count   [numKinds]int
	omitted [numKinds]history.Pos // first held-back warning of each kind
}

func (w *refWarner) add(k warnKind, pos history.Pos, format string, args ...any) {
	w.count[k]++
	if w.count[k] <= maxWarningsPerKind {
		w.b.Warn(pos, format, args...)
	} else if w.count[k] == maxWarningsPerKind+1 {
		w.omitted[k] = pos
	}
}

// flush adds one summary warning per kind that overflowed.
func (w *refWarner) flush() {
	for k, n := range w.count {
		if n > maxWarningsPerKind {
			w.b.Warn(w.omitted[k], "%d more %s warnings omitted (%d in all), the first of them here",
				n-maxWarningsPerKind, kindNames[k], n)
		}
	}
}
