package history

import "slices"

// Snapshots place each transaction's reads at one point of a guessed
// commit order, for the first guesses of both engines (strong's probe,
// weak's): in an order, a key's versions follow their writers' ranks, so a
// read of a version holds from its writer's rank up to the next writer of
// the key. A transaction whose reads have several candidate writers (a
// repeated value) reads them all at one point where every read holds, the
// latest one before its own rank; reading each from its latest candidate
// instead lets one transaction see a version and miss an older write of
// the same snapshot, and on a million-transaction history with 8 values per
// key that guess broke somewhere every time.

// SnapshotRead is one read for Snapshots.Choose: the key and the writers
// it may have read from (one, for a read with a single candidate).
type SnapshotRead struct {
	Key   KeyID
	Cands []TxnID
}

// Snapshots chooses reads' writers at one point of an order.
type Snapshots struct {
	rank []int32
	// ranks[base[k]:base[k+1]] are the ranks of key k's writers, ascending.
	base, ranks []int32
	// Scratch, kept between calls.
	all, cur, next []span
	ends           []int
}

// span is the points lo ≤ s < hi of the order, where w's version holds.
type span struct {
	lo, hi int32
	w      TxnID
}

// NewSnapshots prepares choices in the order rank gives (rank[t] for
// TxnID t) for keys 0…keys-1, writers(k) listing the writers of key k.
func NewSnapshots(rank []int32, keys int, writers func(KeyID) []TxnID) *Snapshots {
	s := &Snapshots{rank: rank, base: make([]int32, keys+1)}
	for k := range keys {
		s.base[k+1] = s.base[k] + int32(len(writers(KeyID(k))))
	}
	s.ranks = make([]int32, s.base[keys])
	for k := range keys {
		r := s.ranks[s.base[k]:s.base[k+1]]
		for i, w := range writers(KeyID(k)) {
			r[i] = rank[w]
		}
		slices.Sort(r)
	}
	return s
}

// SnapshotsBytes estimates what NewSnapshots and Choose allocate for
// writers writes in all and a transaction's reads of at most cands
// candidates in all.
func SnapshotsBytes(keys int, writers, cands int64) int64 {
	return 4*int64(keys) + 4*writers + 3*12*cands
}

// until is the rank of the writer of k that follows rank r, or the
// largest int32.
func (s *Snapshots) until(k KeyID, r int32) int32 {
	rs := s.ranks[s.base[k]:s.base[k+1]]
	i, found := slices.BinarySearch(rs, r)
	if found {
		i++
	}
	if i < len(rs) {
		return rs[i]
	}
	return 1<<31 - 1
}

// Choose fills pick[i] with the writer read i observes at the latest point
// before reader's rank where every read holds, and says whether there is
// such a point (else pick is untouched).
func (s *Snapshots) Choose(reader TxnID, reads []SnapshotRead, pick []TxnID) bool {
	limit := s.rank[reader]
	s.all, s.ends = s.all[:0], s.ends[:0]
	for _, r := range reads {
		from := len(s.all)
		for _, w := range r.Cands {
			if lo := s.rank[w]; lo < limit {
				s.all = append(s.all, span{lo, s.until(r.Key, lo), w})
			}
		}
		slices.SortFunc(s.all[from:], func(a, b span) int { return int(a.lo) - int(b.lo) })
		s.ends = append(s.ends, len(s.all))
	}
	// The intersection of every read's spans (disjoint within one read).
	s.cur = append(s.cur[:0], span{0, limit, -1})
	from := 0
	for _, end := range s.ends {
		mine := s.all[from:end]
		from = end
		s.next = s.next[:0]
		for i, j := 0, 0; i < len(s.cur) && j < len(mine); {
			lo, hi := max(s.cur[i].lo, mine[j].lo), min(s.cur[i].hi, mine[j].hi)
			if lo < hi {
				s.next = append(s.next, span{lo, hi, -1})
			}
			if s.cur[i].hi < mine[j].hi {
				i++
			} else {
				j++
			}
		}
		s.cur, s.next = s.next, s.cur
		if len(s.cur) == 0 {
			return false
		}
	}
	at := s.cur[len(s.cur)-1].hi - 1
	from = 0
	for i := range reads {
		for _, sp := range s.all[from:s.ends[i]] {
			if sp.lo <= at && at < sp.hi {
				pick[i] = sp.w
				break
			}
		}
		from = s.ends[i]
	}
	return true
}
