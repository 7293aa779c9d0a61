package history

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomIndexHistory is a history with every kind of fact the index
// records: duplicate values, several writes of a key in a transaction,
// reads after writes, aborted and unknown transactions, aborted writes.
func randomIndexHistory(rng *rand.Rand, txns int) *History {
	b := NewBuilder("test", "test")
	b.SetInit(InitImplicit, 0)
	keys, vals := 1+rng.IntN(12), 1+rng.IntN(6)
	for i := range txns {
		st := Committed
		switch rng.IntN(8) {
		case 0:
			st = Aborted
		case 1:
			st = Unknown
		}
		t := b.Begin(b.Session(int64(rng.IntN(4))), int64(i+1), st, Pos{})
		for range rng.IntN(7) {
			x, v := int64(rng.IntN(keys)), int64(rng.IntN(vals))
			if rng.IntN(2) == 0 {
				b.Read(t, x, v)
			} else {
				b.Write(t, x, v)
			}
		}
	}
	for range rng.IntN(3) {
		b.AbortedWrite(int64(rng.IntN(keys)), int64(rng.IntN(vals)))
	}
	b.InitAllKeys(0)
	return b.Finish()
}

// TestIndexParallelMatchesSequential: the index, built on one core or
// two, equals the one the reference below builds (the previous algorithm,
// which counts each version's writers into place), field for field; and
// the statistics on two cores equal those on one.
func TestIndexParallelMatchesSequential(t *testing.T) {
	defer func(n int) { parallelIndexOps = n }(parallelIndexOps)
	rng := rand.New(rand.NewPCG(5, 8))
	for i := range 400 {
		h := randomIndexHistory(rng, rng.IntN(60))
		seq := nilEmpty(indexByCounting(h))
		for _, from := range []int{1 << 30, 0} {
			parallelIndexOps = from
			require.Equal(t, seq, nilEmpty(buildIndex(h)), "history %d, two cores from %d operations", i, from)
		}

		h.index.ix = seq
		h.index.once.Do(func() {})
		want := Stats{Sessions: len(h.Sessions), Transactions: len(h.Txns) - 1, Keys: len(h.Keys),
			InitWrites: len(h.Txns[InitTxn].Ops), AbortedWrites: len(h.AbortedWrites)}
		h.statsPart(seq, &want, 1, len(h.Txns), 0, seq.NumVersions())
		require.Equal(t, want, h.Stats(), "history %d", i)

		// The flags' shortcuts against the writer lists.
		final := newFinalWrites(h)
		multi, most := 0, 0
		for tx := 1; tx < len(h.Txns); tx++ {
			for _, op := range h.Txns[tx].Ops {
				others := 0
				for _, w := range seq.Writers(op.Key, op.Value) {
					if w != TxnID(tx) {
						others++
					}
				}
				require.Equal(t, others > 0, seq.hasOtherWriter(final, TxnID(tx), op.Key, op.Value), "history %d, txn %d, %v", i, tx, op)
			}
			if h.Txns[tx].Status != Committed {
				continue
			}
			for _, r := range seq.Reads(TxnID(tx)) {
				n := len(slices.DeleteFunc(slices.Clone(seq.Writers(r.Key, r.Value)), func(w TxnID) bool { return w == TxnID(tx) }))
				if n > 1 {
					multi++
				}
				most = max(most, n)
			}
		}
		require.Equal(t, multi, want.MultiWriterReads, "history %d", i)
		require.Equal(t, most, want.MaxCandidates, "history %d", i)
	}
}

// indexByCounting builds the index as buildIndex did before its radix
// sort and its two cores: one scan, each version's writers counted into
// place.
func indexByCounting(h *History) *Index {
	nk0 := len(h.Keys)
	ix := &Index{VerBase: make([]int32, nk0+1)}
	for k := range nk0 {
		ix.VerBase[k+1] = ix.VerBase[k] + int32(len(h.Values[k]))
	}
	ix.verFlags = make([]uint8, ix.VerBase[nk0])
	ix.writeStart = make([]int32, len(h.Txns)+1)
	ix.readStart = make([]int32, len(h.Txns)+1)
	nk, nv := len(h.Keys), ix.NumVersions()
	// stamp[k] == t+1 means key k was touched by txn t; last[k] is the op index
	// of t's last write of k (-1: only read so far).
	stamp := make([]int32, nk)
	last := make([]int32, nk)
	counts := make([]int32, nv+1)
	var touched []KeyID
	for t := range h.Txns {
		tx := &h.Txns[t]
		touched = touched[:0]
		for i, op := range tx.Ops {
			k := op.Key
			if stamp[k] != int32(t+1) {
				stamp[k] = int32(t + 1)
				last[k] = -1
				touched = append(touched, k)
				if op.Kind.IsRead() {
					ix.reads = append(ix.reads, ExtRead{Key: k, Value: op.Value, Op: int32(i)})
				}
			}
			if op.Kind.IsWrite() {
				if last[k] >= 0 && tx.Status != Aborted {
					prev := tx.Ops[last[k]]
					ix.verFlags[verOf(ix.VerBase, k, prev.Value)] |= flagIntermediate
				}
				last[k] = int32(i)
			}
		}
		for _, k := range touched {
			if last[k] < 0 {
				continue
			}
			v := tx.Ops[last[k]].Value
			ver := verOf(ix.VerBase, k, v)
			if tx.Status == Aborted {
				ix.verFlags[ver] |= flagAborted
				continue
			}
			ix.writes = append(ix.writes, Version{k, v})
			counts[ver+1]++
		}
		if tx.Status == Aborted {
			// Non-final writes of an aborted transaction are aborted too.
			for _, op := range tx.Ops {
				if op.Kind.IsWrite() {
					ix.verFlags[verOf(ix.VerBase, op.Key, op.Value)] |= flagAborted
				}
			}
		}
		ix.writeStart[t+1] = int32(len(ix.writes))
		ix.readStart[t+1] = int32(len(ix.reads))
	}
	for _, w := range h.AbortedWrites {
		ix.verFlags[verOf(ix.VerBase, w.Key, w.Value)] |= flagAborted
	}
	for i := 1; i <= nv; i++ {
		counts[i] += counts[i-1]
	}
	ix.writerStart = make([]int32, nv+1)
	copy(ix.writerStart, counts)
	ix.writers = make([]TxnID, counts[nv])
	for ver := range nv {
		switch counts[ver+1] - counts[ver] {
		case 0:
		case 1:
			ix.verFlags[ver] |= flagWritten
		default:
			ix.verFlags[ver] |= flagWritten | flagShared
		}
	}
	fill := counts[:nv]
	for t := range h.Txns {
		for _, w := range ix.writes[ix.writeStart[t]:ix.writeStart[t+1]] {
			ver := verOf(ix.VerBase, w.Key, w.Value)
			ix.writers[fill[ver]] = TxnID(t)
			fill[ver]++
		}
	}
	return ix
}

// TestRadixSort: radixSort sorts as a stable sort does, for keys of every
// width up to 31 bits (one pass to four), in any number.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		width := rng.IntN(32)
		n := rng.IntN(3000)
		keys, vals := make([]int32, n), make([]TxnID, n)
		type kv struct {
			k int32
			v TxnID
		}
		want := make([]kv, n)
		for j := range n {
			keys[j], vals[j] = int32(rng.Int64N(1<<width)), TxnID(j)
			want[j] = kv{keys[j], vals[j]}
		}
		slices.SortStableFunc(want, func(a, b kv) int { return cmp.Compare(a.k, b.k) })
		gk, gv := radixSort(keys, vals, width)
		for j := range n {
			require.Equal(t, want[j], kv{gk[j], gv[j]}, "case %d (width %d, %d keys), at %d", i, width, n, j)
		}
	}
}

// nilEmpty makes the index's empty lists nil, so that indexes compare
// by content.
func nilEmpty(ix *Index) *Index {
	if len(ix.reads) == 0 {
		ix.reads = nil
	}
	if len(ix.writes) == 0 {
		ix.writes = nil
	}
	if len(ix.writers) == 0 {
		ix.writers = nil
	}
	return ix
}
