package valueseq_test

import (
	"math/rand/v2"

	"github.com/hyperiso/hyperiso/history"
)

// pathological builds the histories of issue 32: sessions×txns
// transactions on key 1 with values 1..values (and the initial 0), each
// either a read (a quarter), a read-modify-write (a quarter) or a blind
// write of a random value.
// The sessions run interleaved at random on one register. With stale set,
// a transaction that reads reads the value as it was when it began, a few
// steps earlier (read committed: lost updates, stale reads), so that the
// history is (almost always) not serializable; without it the execution
// is serial and the history satisfies SER. Without blind, every
// transaction that is not a read is a read-modify-write (Cobra's and
// collect's lost-update workload).
func pathological(seed uint64, sessions, txns, values int, stale, blind bool) *history.History {
	rng := rand.New(rand.NewPCG(seed, 32))
	b := history.NewBuilder("pathological", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	const key = 1
	cur := int64(0)
	left := make([]int, sessions)
	for i := range left {
		left[i] = txns
	}
	type pending struct {
		t     history.TxnID
		seen  int64
		write bool
	}
	open := make([]*pending, sessions)
	id := int64(0)
	for live := sessions; live > 0; {
		s := rng.IntN(sessions)
		if left[s] == 0 && open[s] == nil {
			continue
		}
		if stale && open[s] != nil {
			// Finish the read-modify-write begun earlier: it read what
			// it saw then.
			p := open[s]
			open[s] = nil
			b.Read(p.t, key, p.seen)
			if p.write {
				cur = int64(1 + rng.IntN(values))
				b.Write(p.t, key, cur)
			}
			if left[s] == 0 {
				live--
			}
			continue
		}
		left[s]--
		id++
		t := b.Begin(b.Session(int64(s+1)), id, history.Committed, history.Pos{})
		r := rng.IntN(4)
		if !blind && r > 1 {
			r = 1
		}
		switch {
		case r <= 1 && stale:
			open[s] = &pending{t: t, seen: cur, write: r == 1}
			continue
		case r == 0:
			b.Read(t, key, cur)
		case r == 1:
			b.Read(t, key, cur)
			cur = int64(1 + rng.IntN(values))
			b.Write(t, key, cur)
		default:
			cur = int64(1 + rng.IntN(values))
			b.Write(t, key, cur)
		}
		if left[s] == 0 {
			live--
		}
	}
	return b.Finish()
}
