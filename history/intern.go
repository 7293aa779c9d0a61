package history

// valTable interns (key, integer value) pairs. It replaces a Go map keyed
// by a padded struct, whose generic hashing dominated reading large
// histories: an open-addressing table with linear probing over one flat
// array hashes two integers with a multiply and probes adjacent slots.
//
// A pair is placed by its key's seed rather than its KeyID: the Builder
// seeds an integer key with the key itself, so that where a raw operation
// will be looked up is known before its key is interned (AddRaw).
type valTable struct {
	slots []valSlot // len is a power of two; key == 0 marks a free slot
	n     int
	shift uint
	seeds *[]int64 // KeyID -> seed; nil: every seed is 0
}

type valSlot struct {
	val int64
	key int32 // KeyID+1, so that the zero slot is free
	id  ValueID
}

func (t *valTable) hash(seed, val int64) uint64 {
	h := uint64(val)*0x9E3779B97F4A7C15 ^ uint64(seed)*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	return h >> t.shift
}

func (t *valTable) seed(k KeyID) int64 {
	if t.seeds == nil {
		return 0
	}
	return (*t.seeds)[k]
}

// get returns the id of (k, val) and whether it is present.
func (t *valTable) get(k KeyID, val int64) (ValueID, bool) {
	return t.getSeeded(k, t.seed(k), val)
}

// getSeeded is get for a key whose seed the caller knows.
func (t *valTable) getSeeded(k KeyID, seed, val int64) (ValueID, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.hash(seed, val); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == 0 {
			return 0, false
		}
		if s.val == val && s.key == int32(k)+1 {
			return s.id, true
		}
	}
}

// find is getSeeded that, when the pair is absent, also returns the free
// slot where the search ended, for putAt: a look-up followed by an insert
// then probes once.
func (t *valTable) find(k KeyID, seed, val int64) (v ValueID, slot int, ok bool) {
	if t.n == 0 {
		return 0, -1, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.hash(seed, val); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == 0 {
			return 0, int(i), false
		}
		if s.val == val && s.key == int32(k)+1 {
			return s.id, 0, true
		}
	}
}

// putAt is put for a pair find did not find at slot, with nothing put
// since.
func (t *valTable) putAt(slot int, k KeyID, val int64, v ValueID) {
	if slot < 0 || 4*(t.n+1) > 3*len(t.slots) {
		t.put(k, val, v)
		return
	}
	t.slots[slot] = valSlot{val: val, key: int32(k) + 1, id: v}
	t.n++
}

// put adds (k, val) with id v; the pair must not be present.
func (t *valTable) put(k KeyID, val int64, v ValueID) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.insert(k, t.seed(k), val, v)
	t.n++
}

func (t *valTable) insert(k KeyID, seed, val int64, v ValueID) {
	mask := uint64(len(t.slots) - 1)
	i := t.hash(seed, val)
	for t.slots[i].key != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = valSlot{val: val, key: int32(k) + 1, id: v}
}

func (t *valTable) grow() {
	size := 2 * len(t.slots)
	if size == 0 {
		size = 64
	}
	t.resize(size)
}

// reserve makes room for n more pairs, so that the table does not grow
// (and leave its old slots as garbage) while they are put.
func (t *valTable) reserve(n int) {
	size := max(len(t.slots), 64)
	for 4*(t.n+n) > 3*size {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

func (t *valTable) resize(size int) {
	old := t.slots
	t.slots = make([]valSlot, size)
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	for _, s := range old {
		if s.key != 0 {
			t.insert(KeyID(s.key-1), t.seed(KeyID(s.key-1)), s.val, s.id)
		}
	}
}

// touch loads the slot where (k, val) would be probed first and returns a
// word of it: a look-ahead load whose only purpose is to bring the slot
// into the cache. Such loads, issued for many pairs before any is used,
// overlap, where the dependent loads of one look-up after another do not.
func (t *valTable) touch(seed, val int64) uint64 {
	if t.n == 0 {
		return 0
	}
	return uint64(t.slots[t.hash(seed, val)].id)
}

// keyTable interns raw integer keys. Most histories number their keys
// densely from 0 or 1, and those up to a bound that grows with the number
// of keys are looked up in a flat array, a fifth the size of a table's
// slots and with no probing; other keys go to a valTable.
type keyTable struct {
	dense  []int32 // raw key -> KeyID+1; 0: not there, but maybe in sparse
	sparse valTable
}

// denseKeys is the least bound on the keys of the flat array; it grows to
// denseSpread times the number of keys.
const (
	denseKeys   = 1 << 17
	denseSpread = 16
)

func (t *keyTable) touch(key int64) uint64 {
	if uint64(key) < uint64(len(t.dense)) {
		return uint64(t.dense[key])
	}
	return t.sparse.touch(0, key)
}

func (t *keyTable) get(key int64) (KeyID, bool) {
	if uint64(key) < uint64(len(t.dense)) {
		if id := t.dense[key]; id != 0 {
			return KeyID(id - 1), true
		}
		if t.sparse.n == 0 {
			return 0, false
		}
	}
	id, ok := t.sparse.getSeeded(0, 0, key)
	return KeyID(id), ok
}

// put adds key as k, the nkeys-th key; it must not be present.
func (t *keyTable) put(key int64, k KeyID, nkeys int) {
	if key < 0 || key >= int64(max(denseKeys, denseSpread*nkeys)) {
		t.sparse.put(0, key, ValueID(k))
		return
	}
	if key >= int64(len(t.dense)) {
		n := max(1024, 2*len(t.dense))
		for int64(n) <= key {
			n *= 2
		}
		t.dense = append(t.dense, make([]int32, n-len(t.dense))...)
	}
	t.dense[key] = int32(k) + 1
}
