package weak

import (
	"math/rand/v2"
	"sort"

	"github.com/hyperiso/hyperiso/history"
)

// bigOptions shape genUnique's histories.
type bigOptions struct {
	Txns, Sessions int
	// Ops is the mean number of operations per transaction (drawn
	// uniformly from Ops-2 … Ops+2); half of them read.
	Ops  int
	Keys int
	// Lag is the largest number of transactions committed just before a
	// transaction that its snapshot may miss.
	Lag int
	// PStale is the probability that a read ignores the snapshot and
	// returns a random older version; PRepeat that a read repeats a key
	// the transaction read (re-reading the snapshot, or, when stale,
	// another version). Both make violations.
	PStale, PRepeat float64
}

// defaultBig returns the benchmark shape for n transactions: 100 sessions,
// about 8 operations per transaction, n/8 keys, snapshots up to 8
// transactions stale.
func defaultBig(n int) bigOptions {
	return bigOptions{Txns: n, Sessions: 100, Ops: 8, Keys: max(64, n/8), Lag: 8}
}

// genUnique makes a history with unique write values that satisfies CC
// (hence RA and RC): transactions commit in a random interleaving of the
// sessions, and each reads from a snapshot, the prefix of the commit order
// before a point at most Lag transactions back but never before its
// session predecessor. Keys are uniform; writes write fresh values. With
// PStale or PRepeat some reads misbehave, and the history may violate any
// level.
func genUnique(rng *rand.Rand, o bigOptions) *history.History {
	type version struct {
		pos int32
		val int64
	}
	versions := make([][]version, o.Keys)
	b := history.NewBuilder("genUnique", "generated")
	b.SetInit(history.InitImplicit, 0)
	for k := range o.Keys {
		b.InitWrite(int64(k), 0)
		versions[k] = []version{{-1, 0}}
	}
	lastPos := make([]int32, o.Sessions)
	for i := range lastPos {
		lastPos[i] = -1
	}
	var next int64 = 1
	seen := map[int64]int64{}  // value of each key this transaction touched
	wrote := map[int64]int64{} // its final writes
	for pos := range int32(o.Txns) {
		s := rng.IntN(o.Sessions)
		snap := pos - int32(rng.IntN(o.Lag+1)) // sees positions < snap
		snap = max(snap, lastPos[s]+1)
		lastPos[s] = pos
		t := b.Begin(b.Session(int64(s)), int64(pos)+1, history.Committed, history.Pos{})
		clear(seen)
		clear(wrote)
		for range max(o.Ops-2+rng.IntN(5), 1) {
			k := int64(rng.IntN(o.Keys))
			if rng.IntN(2) == 0 {
				v, ok := seen[k]
				_, own := wrote[k]
				if !ok || (!own && rng.Float64() < o.PRepeat) {
					vs := versions[k]
					j := sort.Search(len(vs), func(i int) bool { return vs[i].pos >= snap }) - 1
					if rng.Float64() < o.PStale {
						j = rng.IntN(len(vs))
					}
					v = vs[j].val
					seen[k] = v
				}
				b.Read(t, k, v)
				continue
			}
			v := next
			next++
			seen[k], wrote[k] = v, v
			b.Write(t, k, v)
		}
		for k, v := range wrote {
			versions[k] = append(versions[k], version{pos, v})
		}
	}
	return b.Finish()
}
