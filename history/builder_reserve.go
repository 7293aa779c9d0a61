package history

import "slices"

// Making room in advance, for readers that can tell how large a history
// will be: arrays and tables grown step by step copy themselves and leave
// garbage, which can double a large history's peak memory.

// Reserve makes room for txns more transactions and ops more operations,
// for a reader that knows about how many there will be: growing the
// arrays step by step copies them and leaves the old ones as garbage,
// which can double a large history's peak memory.
func (b *Builder) Reserve(txns, ops int) {
	b.h.Txns = slices.Grow(b.h.Txns, txns)
	b.spans = slices.Grow(b.spans, txns)
	b.arena = slices.Grow(b.arena, ops)
}

// ReserveValues makes room for about n more integer values (of all keys
// together), for a reader that can tell: the interning tables and logs
// then do not grow, copying themselves and leaving garbage, while they
// are interned. Values are spread over the shards by key, so each gets
// half.
func (b *Builder) ReserveValues(n int) {
	b.flush()
	for s := range b.valByRaw {
		b.valByRaw[s].reserve(n / valShards)
		b.logKey[s] = slices.Grow(b.logKey[s], n/valShards)
		b.logVal[s] = slices.Grow(b.logVal[s], n/valShards)
	}
}

// ReserveAdded is ReserveValues for a reader that gives keys their values
// with AddValue, which the interning tables do not hold: only the logs
// the values are kept in get room.
func (b *Builder) ReserveAdded(n int) {
	b.flush()
	for s := range b.logKey {
		b.logKey[s] = slices.Grow(b.logKey[s], n/valShards)
		b.logVal[s] = slices.Grow(b.logVal[s], n/valShards)
	}
}

// ReserveScaled makes room for f times as many more transactions,
// operations and values as there are so far: for a reader that has read
// part of an input of known size and expects the rest to hold the like.
func (b *Builder) ReserveScaled(f float64) {
	b.flush()
	vals := len(b.logVal[0]) + len(b.logVal[1])
	ops := float64(len(b.arena)) * f
	b.Reserve(int(float64(len(b.h.Txns))*f), int(ops))
	// Values come faster at the start, where keys are new (each key's
	// first read of its initial value adds one), than later; a table
	// sized for too many costs its size, one sized for too few grows
	// once. So no more than half the operations, as when half are reads.
	b.ReserveValues(int(min(float64(vals)*f, ops/2)))
}

// reserveAfter is how much of an input of known size is read before
// ReserveRest judges the rest from it.
const reserveAfter = 1 << 20

// ReserveRest makes room, once, for the rest of an input of size bytes (0
// or less: unknown, nothing is done) of which read bytes have been read,
// as soon as read reaches a megabyte: the rest is taken to hold about what
// that first part held (5 % more), so that the builder's arrays and tables
// do not grow step by step, copying themselves and leaving garbage.
// Readers call it as they go; the size is only a hint.
func (b *Builder) ReserveRest(read, size int64) {
	if b.restReserved || size <= 0 || read < reserveAfter {
		return
	}
	b.restReserved = true
	if read < size {
		b.ReserveScaled(float64(size-read) / float64(read) * 1.05)
	}
}

// sizes is how many transactions, operations and values a Builder held
// when read bytes of its input were read.
type sizes struct {
	txns, ops, vals int
	read            int64
}

func (b *Builder) sizes(read int64) sizes {
	return sizes{len(b.h.Txns), len(b.arena), len(b.logVal[0]) + len(b.logVal[1]), read}
}

// ReserveWindow is ReserveRest for an input whose start is not like the
// rest (AWDIT's format: an initial transaction of one short line per key):
// the rest is judged from the second megabyte alone.
func (b *Builder) ReserveWindow(read, size int64) {
	if b.restReserved || size <= 0 || read < reserveAfter {
		return
	}
	if b.window == nil {
		b.flush()
		w := b.sizes(read)
		b.window = &w
		return
	}
	if read < b.window.read+reserveAfter {
		return
	}
	b.restReserved = true
	b.flush()
	w, now := *b.window, b.sizes(read)
	f := float64(size-read) / float64(read-w.read) * 1.05
	if f <= 0 {
		return
	}
	ops := float64(now.ops-w.ops) * f
	b.Reserve(int(float64(now.txns-w.txns)*f), int(ops))
	b.ReserveValues(int(min(float64(now.vals-w.vals)*f, ops/2)))
}
