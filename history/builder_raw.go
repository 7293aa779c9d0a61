package history

import "sync"

// Building from raw (key, value) operations, for the fastest readers:
// AddRaw, and interning on two cores (SetParallel) in batches.

// RawOp is an operation as a reader found it: a kind (OpRead, OpWrite or
// OpAppend) and a raw key and value, not yet interned.
type RawOp struct {
	Kind       OpKind
	Key, Value int64
}

// AddRaw records ops for t, as calling Read, Write or Append for each in
// order would: the same keys, values and identifiers. It is faster on
// large histories, whose interning tables do not fit in the cache: the
// slots every operation of a group will probe are loaded first, all
// together, so that their cache misses overlap instead of following one
// another.
func (b *Builder) AddRaw(t TxnID, ops []RawOp) {
	if b.batch > 0 {
		if sp := &b.spans[t]; sp.lo >= 0 && (sp.hi == len(b.arena) || sp.lo == sp.hi) {
			b.deferRaw(sp, ops)
			return
		}
	}
	b.flush()
	sink := b.sink
	for len(ops) > 0 {
		g := ops[:min(rawGroup, len(ops))]
		ops = ops[len(g):]
		for i := range g {
			sink += b.keyByRaw.touch(g[i].Key) + b.valByRaw[shardOf(g[i].Key)].touch(g[i].Key, g[i].Value)
		}
		for i := range g {
			k := b.KeyID(g[i].Key)
			vt := &b.valByRaw[shardOf(g[i].Key)]
			v, slot, ok := vt.find(k, g[i].Key, g[i].Value)
			if !ok {
				v = b.newValue(k, g[i].Value)
				vt.putAt(slot, k, g[i].Value, v)
			}
			b.add(t, Op{Kind: g[i].Kind, Key: k, Value: v})
		}
	}
	b.sink = sink
}

// Touch loads what interning integer key key and its integer value val
// will probe first, changing nothing: a reader that calls it for the
// operations of a transaction before interning them one by one has their
// cache misses overlap, as AddRaw's look-ahead does. What it returns is
// only for the caller to keep (summed), so that the loads stay.
func (b *Builder) Touch(key, val int64) uint64 {
	b.await()
	return b.keyByRaw.touch(key) + b.valByRaw[shardOf(key)].touch(key, val)
}

func shardOf(seed int64) int { return int(uint64(seed) * 0xD6E8FEB86659FD93 >> 63) }

// SetParallel lets AddRaw intern values on two goroutines (see flush),
// batch values at a time (0: never; ParallelBatch is a good size), for a
// reader that calls AddRaw for most operations and seldom needs their
// values back (Ops): the History is the same either way.
func (b *Builder) SetParallel(batch int) {
	b.flush()
	b.batch = batch
}

// pendingVal is a value AddRaw left for flush: the operation at arena[at]
// has key k (seed seed) and value val, to be interned.
type pendingVal struct {
	at        int
	seed, val int64
	k         KeyID
	id        ValueID // what flush interned it as
}

// deferRaw is AddRaw for a transaction whose operations end the arena:
// it interns the keys and appends the operations, and leaves their values
// pending.
func (b *Builder) deferRaw(sp *opSpan, ops []RawOp) {
	if sp.lo == sp.hi {
		// No operations yet: start the span at the end, as add does.
		sp.lo, sp.hi = len(b.arena), len(b.arena)
	}
	sink := b.sink
	for len(ops) > 0 {
		g := ops[:min(rawGroup, len(ops))]
		ops = ops[len(g):]
		for i := range g {
			sink += b.keyByRaw.touch(g[i].Key)
		}
		for i := range g {
			k := b.KeyID(g[i].Key)
			s := shardOf(g[i].Key)
			b.pending[s] = append(b.pending[s], pendingVal{at: len(b.arena), seed: g[i].Key, val: g[i].Value, k: k})
			b.arena = append(b.arena, Op{Kind: g[i].Kind, Key: k})
		}
		sp.hi += len(g)
	}
	b.sink = sink
	if len(b.pending[0])+len(b.pending[1]) >= b.batch {
		b.launch()
	}
}

// flush interns the values AddRaw left pending, and waits for those
// interned in the background (launch). The shards are independent — each
// its own table, log and keys — so one is interned on another goroutine
// while this one does the other; each key's values are still numbered in
// the order of its operations, as one table would.
func (b *Builder) flush() {
	b.await()
	n0, n1 := len(b.pending[0]), len(b.pending[1])
	switch {
	case n0+n1 == 0:
		return
	case n0 == 0 || n1 == 0 || n0+n1 < b.batch/16:
		// Too few for another goroutine to pay.
		b.internShard(0, b.pending[0], b.nvals)
		b.internShard(1, b.pending[1], b.nvals)
	default:
		var wg sync.WaitGroup
		wg.Go(func() { b.internShard(1, b.pending[1], b.nvals) })
		b.internShard(0, b.pending[0], b.nvals)
		wg.Wait()
	}
	b.layPending(&b.pending)
}

// layPending puts interned values into the arena. It is done here rather
// than from the shards' goroutines, which would write to the same cache
// lines, and the arena is the caller's alone.
func (b *Builder) layPending(pend *[valShards][]pendingVal) {
	for s := range pend {
		for i := range pend[s] {
			p := &pend[s][i]
			b.arena[p.at].Value = p.id
		}
		pend[s] = pend[s][:0]
	}
}

// launch interns the pending values in the background, one goroutine per
// shard, while AddRaw goes on with the next batch: the goroutines touch
// only their shard's table, log and keys' counts, and the snapshots of
// the keys' seeds and counts taken here (a key interned since is in no
// value they intern). Until await, the caller may not touch those: every
// method that does calls flush first, and a key's count array is not let
// to move (growKey).
func (b *Builder) launch() {
	b.await()
	b.busy = true
	b.launched, b.pending = b.pending, b.launched
	nvals := b.nvals
	for s := range b.launched {
		if len(b.launched[s]) == 0 {
			continue
		}
		b.seedSnap[s] = b.seeds
		b.valByRaw[s].seeds = &b.seedSnap[s]
		pend := b.launched[s]
		b.async.Go(func() { b.internShard(s, pend, nvals) })
	}
}

// await waits for the values launch interns and lays them into the arena.
func (b *Builder) await() {
	if !b.busy {
		return
	}
	b.async.Wait()
	b.busy = false
	for s := range b.valByRaw {
		b.valByRaw[s].seeds = &b.seeds
		b.seedSnap[s] = nil
	}
	b.layPending(&b.launched)
}

// growKey adds a key's seed and count. While values are interned in the
// background, the counts they update must not move: the array is then
// let to grow only once they are done.
func (b *Builder) growKey(seed int64) {
	if b.busy && len(b.nvals) == cap(b.nvals) {
		b.await()
	}
	b.nvals = append(b.nvals, 0)
	b.seeds = append(b.seeds, seed)
}

// internShard interns shard s's values pend, in order, with AddRaw's
// look-ahead; nvals is the keys' counts.
func (b *Builder) internShard(s int, pend []pendingVal, nvals []int32) {
	t := &b.valByRaw[s]
	sink := b.sinks[s]
	for len(pend) > 0 {
		g := pend[:min(rawGroup, len(pend))]
		pend = pend[len(g):]
		for i := range g {
			sink += t.touch(g[i].seed, g[i].val)
		}
		for i := range g {
			p := &g[i]
			v, slot, ok := t.find(p.k, p.seed, p.val)
			if !ok {
				v = b.newValueIn(s, nvals, p.k, p.val)
				t.putAt(slot, p.k, p.val, v)
			}
			p.id = v
		}
	}
	b.sinks[s] = sink
}
