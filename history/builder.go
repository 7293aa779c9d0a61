package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
)

type namedValue struct {
	key  KeyID
	name string
}

// Builder assembles a History. Readers call Session, Begin and the operation
// methods in input order; Finish interns nothing further and returns the
// immutable History. A Builder is not safe for concurrent use.
type Builder struct {
	h        History
	sessByID map[int64]int32
	keyByRaw keyTable // raw key -> KeyID
	// (KeyID, integer value) -> ValueID, in shards: all values of a key
	// are in the shard its seed picks (shardOf), so that shards can be
	// interned on different cores and still number each key's values as
	// one table would.
	valByRaw [valShards]valTable
	// Values are logged in the order they are interned and laid out per
	// key by Finish: appending to each key's own slice would touch a
	// cache-cold slice header and tail, and copy the slice as it grows,
	// for every new value. One log per shard, each holding all of its
	// keys' values in order.
	nvals  []int32 // values of each key so far
	seeds  []int64 // where each key's values go in valByRaw
	logKey [valShards][]KeyID
	logVal [valShards][]int64
	sink   uint64 // what AddRaw's look-ahead loads read, kept so that they stay
	// With batch > 0 (SetParallel), AddRaw interns keys at once but
	// leaves values pending, per shard, until batch have gathered (or
	// anything needs them); flush then interns the shards at once on two
	// goroutines.
	batch   int
	pending [valShards][]pendingVal
	sinks   [valShards]uint64
	// A full batch is interned in the background while the next one
	// gathers (launch): busy until await, launched is that batch, async
	// its goroutines and seedSnap the seeds their tables read.
	busy     bool
	launched [valShards][]pendingVal
	async    sync.WaitGroup
	seedSnap [valShards][]int64
	// Keys and values read as names; their stand-ins in Keys and Values
	// are chosen by Finish, once every integer is known.
	keyByName map[string]KeyID
	valByName map[namedValue]ValueID
	namedKeys []KeyID
	namedVals []Version
	// Operations go to one array, each transaction's in a contiguous
	// span, so that Finish hands them out without copying; a transaction
	// that gets an operation after another has started its own is moved
	// to its own slice (detached) rather than copied again and again.
	arena    []Op
	spans    []opSpan // per transaction
	detached [][]Op
	initOps  []Op
	initHas  map[KeyID]bool
	initAll  bool
	initAllV int64
	promoted TxnID
	// restReserved: ReserveRest has judged the rest of the input;
	// window is what ReserveWindow saw at its first megabyte.
	restReserved bool
	window       *sizes
	// Predicate reads, expanded by Finish (builder_rows.go), and
	// InitSelected's value.
	selects  []pendingSelect
	initSel  bool
	initSelV int64
}

// NewBuilder starts a history read from source by the named format.
func NewBuilder(source, format string) *Builder {
	b := &Builder{
		sessByID:  make(map[int64]int32),
		keyByName: make(map[string]KeyID),
		valByName: make(map[namedValue]ValueID),
		promoted:  -1,
		initHas:   make(map[KeyID]bool),
	}
	for s := range b.valByRaw {
		b.valByRaw[s].seeds = &b.seeds
	}
	b.h.Source = source
	b.h.Format = format
	b.h.Meta = map[string]string{}
	b.h.Txns = append(b.h.Txns, Txn{Session: -1, Status: Committed})
	b.spans = append(b.spans, opSpan{})
	return b
}

// Session returns the index of the session with native id, creating it (at
// the end of the session list) on first use.
func (b *Builder) Session(id int64) int32 {
	if s, ok := b.sessByID[id]; ok {
		return s
	}
	s := int32(len(b.h.Sessions))
	b.h.Sessions = append(b.h.Sessions, Session{ID: id})
	b.sessByID[id] = s
	return s
}

// Begin appends a new transaction to session s (an index from Session).
func (b *Builder) Begin(s int32, id int64, status Status, pos Pos) TxnID {
	t := TxnID(len(b.h.Txns))
	sess := &b.h.Sessions[s]
	b.h.Txns = append(b.h.Txns, Txn{ID: id, Session: s, Index: int32(len(sess.Txns)), Status: status, Pos: pos})
	sess.Txns = append(sess.Txns, t)
	b.spans = append(b.spans, opSpan{lo: len(b.arena), hi: len(b.arena)})
	return t
}

// SetStatus changes the status of t.
func (b *Builder) SetStatus(t TxnID, s Status) { b.h.Txns[t].Status = s }

// SetInterval records t's real-time interval (invocation, completion).
func (b *Builder) SetInterval(t TxnID, start, end int64) {
	tx := &b.h.Txns[t]
	tx.Start, tx.End, tx.Timed = start, end, true
}

// VersionHint records that on key, version before was installed before
// version after.
func (b *Builder) VersionHint(key, before, after int64) {
	k := b.KeyID(key)
	b.h.VersionHints = append(b.h.VersionHints, VersionHint{Key: k, Before: b.ValueID(k, before), After: b.ValueID(k, after)})
}

// SetLevel records the isolation level t declared.
func (b *Builder) SetLevel(t TxnID, l Level) { b.h.Txns[t].Level = l }

// Txn gives read access to a transaction under construction.
func (b *Builder) Txn(t TxnID) *Txn { return &b.h.Txns[t] }

// Ops returns the operations recorded for t so far.
func (b *Builder) Ops(t TxnID) []Op {
	b.flush()
	return b.opsOf(b.spans[t])
}

// opSpan locates a transaction's operations: arena[lo:hi], or
// detached[-lo-1] when lo < 0.
type opSpan struct{ lo, hi int }

func (b *Builder) opsOf(sp opSpan) []Op {
	if sp.lo < 0 {
		return b.detached[-sp.lo-1]
	}
	return b.arena[sp.lo:sp.hi:sp.hi]
}

// add appends op to t's operations.
func (b *Builder) add(t TxnID, op Op) {
	sp := &b.spans[t]
	switch {
	case sp.lo < 0:
		d := &b.detached[-sp.lo-1]
		*d = append(*d, op)
	case sp.hi == len(b.arena):
		b.arena = append(b.arena, op)
		sp.hi++
	case sp.lo == sp.hi:
		// No operations yet: start the span at the end.
		b.arena = append(b.arena, op)
		sp.lo, sp.hi = len(b.arena)-1, len(b.arena)
	default:
		b.flush() // the copy must hold the span's values
		ops := append(slices.Clone(b.arena[sp.lo:sp.hi]), op)
		b.detached = append(b.detached, ops)
		*sp = opSpan{lo: -len(b.detached)}
	}
}

// KeyID interns a key.
func (b *Builder) KeyID(key int64) KeyID {
	if k, ok := b.keyByRaw.get(key); ok {
		return k
	}
	k := KeyID(len(b.h.Keys))
	b.h.Keys = append(b.h.Keys, key)
	b.growKey(key)
	b.keyByRaw.put(key, k, len(b.h.Keys))
	return k
}

// ValueID interns value val of key k.
func (b *Builder) ValueID(k KeyID, val int64) ValueID {
	b.flush() // values pending from AddRaw come first
	t := &b.valByRaw[shardOf(b.seeds[k])]
	if v, ok := t.get(k, val); ok {
		return v
	}
	v := b.newValue(k, val)
	t.put(k, val, v)
	return v
}

// ValueIDOf is ValueID for a key interned as the integer key (k is
// KeyID(key)): the key's seed is key itself, which saves loading it.
func (b *Builder) ValueIDOf(k KeyID, key, val int64) ValueID {
	b.flush()
	s := shardOf(key)
	t := &b.valByRaw[s]
	v, slot, ok := t.find(k, key, val)
	if ok {
		return v
	}
	v = b.newValueIn(s, b.nvals, k, val)
	t.putAt(slot, k, val, v)
	return v
}

// AddValue gives key k a new value, val, and returns its identifier,
// without entering it in the table ValueID looks values up in: for a
// reader that keeps its own table of the versions it has identified
// (Cobra's value identities), so that an operation costs it one lookup
// rather than two. The value must not be interned otherwise: nothing may
// ask ValueID, or a method that interns (Read, Write, InitWrite, …), for
// (k, val) afterwards, or it would get a second identifier.
func (b *Builder) AddValue(k KeyID, val int64) ValueID {
	b.flush() // values pending from AddRaw come first
	return b.newValue(k, val)
}

// newValue gives key k its next value, val.
func (b *Builder) newValue(k KeyID, val int64) ValueID {
	return b.newValueIn(shardOf(b.seeds[k]), b.nvals, k, val)
}

// newValueIn is newValue for a key of shard s, whose count is in nvals
// (b.nvals, or launch's snapshot of it). Shards' goroutines call it at
// once: each touches its own log and its own keys' counts only.
func (b *Builder) newValueIn(s int, nvals []int32, k KeyID, val int64) ValueID {
	v := ValueID(nvals[k])
	nvals[k]++
	b.logKey[s] = append(b.logKey[s], k)
	b.logVal[s] = append(b.logVal[s], val)
	return v
}

// layValues builds History.Values from the log: each key's values, in
// the order they were interned, in one array shared by all keys (each
// key's slice capped, so that appending to one copies it).
func (b *Builder) layValues() {
	h := &b.h
	all := make([]int64, len(b.logVal[0])+len(b.logVal[1]))
	h.Values = make([][]int64, len(b.nvals))
	off := 0
	for k, n := range b.nvals {
		if n > 0 {
			h.Values[k] = all[off : off : off+int(n)]
		}
		off += int(n)
	}
	// A key's values are all in one shard's log, in the order they were
	// interned.
	for s := range b.logKey {
		for i, k := range b.logKey[s] {
			h.Values[k] = append(h.Values[k], b.logVal[s][i])
		}
		b.logKey[s], b.logVal[s] = nil, nil
	}
}

// ReadID records that t read version (k, v), both already interned.
func (b *Builder) ReadID(t TxnID, k KeyID, v ValueID) {
	b.add(t, Op{Kind: OpRead, Key: k, Value: v})
}

// WriteID records that t wrote version (k, v).
func (b *Builder) WriteID(t TxnID, k KeyID, v ValueID) {
	b.add(t, Op{Kind: OpWrite, Key: k, Value: v})
}

// AppendID records that t appended version (k, v).
func (b *Builder) AppendID(t TxnID, k KeyID, v ValueID) {
	b.add(t, Op{Kind: OpAppend, Key: k, Value: v})
}

// ReadListID records that t read the list at k; empty stands for the
// empty list.
func (b *Builder) ReadListID(t TxnID, k KeyID, list []ValueID, empty ValueID) {
	last := empty
	if len(list) > 0 {
		last = list[len(list)-1]
	}
	b.h.Lists = append(b.h.Lists, slices.Clone(list))
	b.add(t, Op{Kind: OpReadList, Key: k, Value: last, List: int32(len(b.h.Lists))})
}

// AbortedWriteID is AbortedWrite for an interned version.
func (b *Builder) AbortedWriteID(k KeyID, v ValueID) {
	b.h.AbortedWrites = append(b.h.AbortedWrites, Version{k, v})
}

// VersionHintID is VersionHint for interned versions.
func (b *Builder) VersionHintID(k KeyID, before, after ValueID) {
	b.h.VersionHints = append(b.h.VersionHints, VersionHint{Key: k, Before: before, After: after})
}

func (b *Builder) op(t TxnID, kind OpKind, key, val int64) {
	k := b.KeyID(key)
	b.add(t, Op{Kind: kind, Key: k, Value: b.ValueID(k, val)})
}

// Read records that t read value val from key.
func (b *Builder) Read(t TxnID, key, val int64) { b.op(t, OpRead, key, val) }

// Write records that t wrote val to key.
func (b *Builder) Write(t TxnID, key, val int64) { b.op(t, OpWrite, key, val) }

// Append records that t appended val to the list at key.
func (b *Builder) Append(t TxnID, key, val int64) { b.op(t, OpAppend, key, val) }

// ReadList records that t read the list at key; empty is the value that
// stands for the empty list (the key's initial version).
func (b *Builder) ReadList(t TxnID, key int64, list []int64, empty int64) {
	k := b.KeyID(key)
	ids := make([]ValueID, len(list))
	for i, x := range list {
		ids[i] = b.ValueID(k, x)
	}
	last := empty
	if len(list) > 0 {
		last = list[len(list)-1]
	}
	b.h.Lists = append(b.h.Lists, ids)
	b.add(t, Op{Kind: OpReadList, Key: k, Value: b.ValueID(k, last), List: int32(len(b.h.Lists))})
}

// SetInit records where the initial state comes from and T⊥'s native id.
func (b *Builder) SetInit(kind InitKind, id int64) {
	b.h.InitKind = kind
	b.h.Txns[InitTxn].ID = id
}

// SetInitPos records where the initial transaction is in the input.
func (b *Builder) SetInitPos(pos Pos) { b.h.Txns[InitTxn].Pos = pos }

// InitWrite makes T⊥ write val to key. A second initial write of the same
// key is ignored (the first one defines the initial state).
func (b *Builder) InitWrite(key, val int64) {
	k := b.KeyID(key)
	if b.initHas[k] {
		return
	}
	b.initHas[k] = true
	b.initOps = append(b.initOps, Op{Kind: OpWrite, Key: k, Value: b.ValueID(k, val)})
}

// InitWriteID is InitWrite for an already interned version.
func (b *Builder) InitWriteID(k KeyID, v ValueID) {
	if b.initHas[k] {
		return
	}
	b.initHas[k] = true
	b.initOps = append(b.initOps, Op{Kind: OpWrite, Key: k, Value: v})
}

// InitAllKeys makes T⊥ write val to every key that has no initial write
// when Finish runs.
func (b *Builder) InitAllKeys(val int64) { b.initAll, b.initAllV = true, val }

// PromoteToInit turns t, a transaction of writes only, into T⊥: its writes
// become the initial state and it leaves its session (an emptied session is
// dropped). InitKind becomes InitExplicit with t's native id.
func (b *Builder) PromoteToInit(t TxnID) { b.promoted = t }

// AbortedWrite records a write known not to have taken effect that belongs to
// no transaction of the history.
func (b *Builder) AbortedWrite(key, val int64) {
	k := b.KeyID(key)
	b.h.AbortedWrites = append(b.h.AbortedWrites, Version{k, b.ValueID(k, val)})
}

// Warn records a non-fatal finding.
func (b *Builder) Warn(pos Pos, format string, args ...any) {
	b.h.Warnings = append(b.h.Warnings, Warning{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// SetMeta records a piece of format metadata.
func (b *Builder) SetMeta(key, val string) { b.h.Meta[key] = val }

// Finish returns the History. The Builder must not be used afterwards.
func (b *Builder) Finish() *History {
	b.flush()
	h := &b.h
	selected := b.expandSelects()
	if b.promoted > 0 {
		b.promote()
	}
	if b.initSel {
		for _, k := range selected {
			if !b.initHas[k] {
				b.initHas[k] = true
				b.initOps = append(b.initOps, Op{Kind: OpWrite, Key: k, Value: b.ValueID(k, b.initSelV)})
			}
		}
	}
	if b.initAll {
		for k := range h.Keys {
			if !b.initHas[KeyID(k)] {
				b.initOps = append(b.initOps, Op{Kind: OpWrite, Key: KeyID(k), Value: b.ValueID(KeyID(k), b.initAllV)})
			}
		}
	}
	b.layValues()
	b.standIns()
	b.sortInitOps()
	b.spans[InitTxn] = opSpan{}
	h.Txns[InitTxn].Ops = slices.Clip(b.initOps)
	for t := 1; t < len(h.Txns); t++ {
		h.Txns[t].Ops = slices.Clip(b.opsOf(b.spans[t]))
	}
	if h.KeyNames != nil {
		for len(h.KeyNames) < len(h.Keys) {
			h.KeyNames = append(h.KeyNames, "")
		}
	}
	if h.ValueNames != nil {
		for len(h.ValueNames) < len(h.Keys) {
			h.ValueNames = append(h.ValueNames, nil)
		}
		for k, names := range h.ValueNames {
			for names != nil && len(names) < len(h.Values[k]) {
				names = append(names, "")
			}
			h.ValueNames[k] = names
		}
	}
	b.applyValueTests()
	b.release()
	return h
}

// release drops what only building needed: the History lives inside the
// Builder, so whatever the Builder still held (the interning tables,
// about as large as the operations) would stay as long as the History.
func (b *Builder) release() {
	b.arena, b.spans, b.detached = nil, nil, nil
	b.keyByRaw, b.valByRaw = keyTable{}, [valShards]valTable{}
	b.pending, b.launched = [valShards][]pendingVal{}, [valShards][]pendingVal{}
	b.nvals, b.seeds = nil, nil
	b.sessByID, b.keyByName, b.valByName = nil, nil, nil
	b.initOps, b.initHas = nil, nil
	b.namedKeys, b.namedVals, b.selects = nil, nil, nil
}

// sortInitOps puts T⊥'s writes in ascending key order, as the formats
// specify. Each write is sorted beside its raw key: a comparison that
// looked the keys up cost more than the rest of Finish on a history of
// many keys.
func (b *Builder) sortInitOps() {
	type keyed struct {
		raw int64
		op  Op
	}
	if b.sortDenseInit() {
		return
	}
	ks := make([]keyed, len(b.initOps))
	for i, op := range b.initOps {
		ks[i] = keyed{b.h.Keys[op.Key], op}
	}
	slices.SortFunc(ks, func(x, y keyed) int { return cmp.Compare(x.raw, y.raw) })
	for i := range ks {
		b.initOps[i] = ks[i].op
	}
}

// sortDenseInit is sortInitOps for T⊥'s writes of integer keys that
// span at most four times their number (keys numbered densely, as most
// histories number them): each write is placed by its key, with no
// comparisons. A key is written once by T⊥, so no two share a place.
func (b *Builder) sortDenseInit() bool {
	if len(b.initOps) < 2 {
		return true
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, op := range b.initOps {
		if b.h.KeyNames != nil && int(op.Key) < len(b.h.KeyNames) && b.h.KeyNames[op.Key] != "" {
			return false // a named key sorts by its stand-in, not here
		}
		raw := b.h.Keys[op.Key]
		lo, hi = min(lo, raw), max(hi, raw)
	}
	if uint64(hi-lo) >= 4*uint64(len(b.initOps)) {
		return false
	}
	at := make([]int32, hi-lo+1) // raw key - lo -> 1 + index in initOps
	for i, op := range b.initOps {
		at[b.h.Keys[op.Key]-lo] = int32(i) + 1
	}
	sorted := make([]Op, 0, len(b.initOps))
	for _, i := range at {
		if i > 0 {
			sorted = append(sorted, b.initOps[i-1])
		}
	}
	copy(b.initOps, sorted)
	return true
}

// promote moves the promoted transaction's writes into T⊥ and removes the
// transaction, renumbering the rest.
func (b *Builder) promote() {
	h := &b.h
	p := b.promoted
	pt := h.Txns[p]
	h.InitKind = InitExplicit
	h.Txns[InitTxn].ID = pt.ID
	h.Txns[InitTxn].Pos = pt.Pos
	// Explicit writes take precedence over InitWrite calls for the same key.
	explicit := make(map[KeyID]bool)
	var initOps []Op
	for _, op := range b.Ops(p) {
		if op.Kind.IsWrite() && !explicit[op.Key] {
			explicit[op.Key] = true
			initOps = append(initOps, Op{Kind: OpWrite, Key: op.Key, Value: op.Value})
		}
	}
	for _, op := range b.initOps {
		if !explicit[op.Key] {
			initOps = append(initOps, op)
		}
	}
	b.initOps = initOps
	for _, op := range initOps {
		b.initHas[op.Key] = true
	}
	// Remove p from Txns and ops; shift later ids down by one.
	h.Txns = append(h.Txns[:p], h.Txns[p+1:]...)
	b.spans = append(b.spans[:p], b.spans[p+1:]...)
	var sessions []Session
	for si, s := range h.Sessions {
		var txns []TxnID
		for _, t := range s.Txns {
			switch {
			case t == p:
			case t > p:
				txns = append(txns, t-1)
			default:
				txns = append(txns, t)
			}
		}
		if len(txns) == 0 && si == int(pt.Session) {
			continue
		}
		sessions = append(sessions, Session{ID: s.ID, Txns: txns})
	}
	h.Sessions = sessions
	for i := range h.Selects {
		if h.Selects[i].Txn > p {
			h.Selects[i].Txn--
		}
	}
	for si := range h.Sessions {
		for i, t := range h.Sessions[si].Txns {
			h.Txns[t].Session = int32(si)
			h.Txns[t].Index = int32(i)
		}
	}
}

// rawGroup is how many operations AddRaw looks up together: enough for
// their memory accesses to overlap, few enough that what the look-ahead
// brings into the cache is still there when it is used.
const rawGroup = 32

// valShards is how many shards values are interned in; shardOf picks a
// key's shard from its seed (the raw key, for an integer key) so that it
// is known before the key is interned.
const valShards = 2

// ParallelBatch is how many values SetParallel should let wait: enough
// to pay for handing a shard to another goroutine many times over.
const ParallelBatch = 1 << 14
