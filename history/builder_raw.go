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
		b.flush()
	}
}

// flush interns the values AddRaw left pending. The shards are
// independent — each its own table, log and keys — so one is interned on
// another goroutine while this one does the other; each key's values are
// still numbered in the order of its operations, as one table would.
func (b *Builder) flush() {
	n0, n1 := len(b.pending[0]), len(b.pending[1])
	switch {
	case n0+n1 == 0:
		return
	case n0 == 0 || n1 == 0 || n0+n1 < b.batch/16:
		// Too few for another goroutine to pay.
		b.internShard(0)
		b.internShard(1)
	default:
		var wg sync.WaitGroup
		wg.Go(func() { b.internShard(1) })
		b.internShard(0)
		wg.Wait()
	}
	// The values go into the arena here rather than from the shards'
	// goroutines, which would write to the same cache lines.
	for s := range b.pending {
		for i := range b.pending[s] {
			p := &b.pending[s][i]
			b.arena[p.at].Value = p.id
		}
		b.pending[s] = b.pending[s][:0]
	}
}

// internShard interns shard s's pending values, in order, with AddRaw's
// look-ahead.
func (b *Builder) internShard(s int) {
	t := &b.valByRaw[s]
	pend := b.pending[s]
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
				v = b.newValueIn(s, p.k, p.val)
				t.putAt(slot, p.k, p.val, v)
			}
			p.id = v
		}
	}
	b.sinks[s] = sink
}
