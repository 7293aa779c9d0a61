package history

import "runtime"

// Stats summarises a history. Counts exclude the initial transaction T⊥
// unless the name says otherwise.
type Stats struct {
	Sessions     int `json:"sessions"`
	Transactions int `json:"transactions"`
	Committed    int `json:"committed"`
	Aborted      int `json:"aborted"`
	Unknown      int `json:"unknown"`
	// Operations counts the model's operations: a predicate read counts
	// once per key of its range (History.Select), and PredicateReads
	// counts the predicate reads themselves.
	Operations     int `json:"operations"`
	PredicateReads int `json:"predicate_reads,omitempty"`
	Reads          int `json:"reads"`
	Writes         int `json:"writes"`
	Keys           int `json:"keys"`
	InitWrites     int `json:"init_writes"`
	// ExternalReads counts the external reads of committed transactions.
	ExternalReads int `json:"external_reads"`
	// MultiWriterReads counts external reads of committed transactions
	// with more than one candidate writer: the duplicate-value degree.
	MultiWriterReads int `json:"multi_writer_reads"`
	// MaxCandidates is the largest candidate set of any external read.
	MaxCandidates int `json:"max_candidates"`
	// DuplicateVersions counts (key, value) pairs finally written by more
	// than one transaction (T⊥ included).
	DuplicateVersions int `json:"duplicate_versions"`
	AbortedWrites     int `json:"aborted_writes"`
}

// Stats computes the summary in one pass over the history and its index,
// on two cores for a large history (halves of the transactions and of the
// versions, summed).
func (h *History) Stats() Stats {
	ix := h.Index()
	s := Stats{
		Sessions:       len(h.Sessions),
		Transactions:   len(h.Txns) - 1,
		Keys:           len(h.Keys),
		InitWrites:     len(h.Txns[InitTxn].Ops),
		AbortedWrites:  len(h.AbortedWrites),
		PredicateReads: len(h.Selects),
	}
	nt, nv := len(h.Txns), ix.NumVersions()
	if len(ix.reads) < parallelIndexOps/2 || runtime.GOMAXPROCS(0) < 2 {
		h.statsPart(ix, &s, 1, nt, 0, nv)
		return h.withoutStandIns(ix, s)
	}
	var part [2]Stats
	both(func(i int) {
		h.statsPart(ix, &part[i], max(1, i*nt/2), (i+1)*nt/2, i*nv/2, (i+1)*nv/2)
	})
	for _, p := range part {
		s.Committed += p.Committed
		s.Aborted += p.Aborted
		s.Unknown += p.Unknown
		s.Operations += p.Operations
		s.Reads += p.Reads
		s.Writes += p.Writes
		s.ExternalReads += p.ExternalReads
		s.MultiWriterReads += p.MultiWriterReads
		s.DuplicateVersions += p.DuplicateVersions
		s.MaxCandidates = max(s.MaxCandidates, p.MaxCandidates)
	}
	return h.withoutStandIns(ix, s)
}

// withoutStandIns leaves the stand-in versions of value tests out of the
// duplicate versions: they are no versions of their own.
func (h *History) withoutStandIns(ix *Index, s Stats) Stats {
	for v := range h.OneOf {
		if len(ix.Writers(v.Key, v.Value)) > 1 {
			s.DuplicateVersions--
		}
	}
	return s
}

// statsPart adds to s the counts of transactions lo to hi and of versions
// vlo to vhi.
func (h *History) statsPart(ix *Index, s *Stats, lo, hi, vlo, vhi int) {
	ops, reads := 0, 0
	final := newFinalWrites(h)
	for t := lo; t < hi; t++ {
		tx := &h.Txns[t]
		switch tx.Status {
		case Committed:
			s.Committed++
		case Aborted:
			s.Aborted++
		default:
			s.Unknown++
		}
		ops += len(tx.Ops)
		for _, op := range tx.Ops {
			if op.Kind.IsRead() {
				reads++
			}
		}
		if tx.Status != Committed {
			continue
		}
		for _, r := range ix.Reads(TxnID(t)) {
			s.ExternalReads++
			// The writer list is looked at only for a version with two
			// or more writers; otherwise the flags and t's own writes
			// tell.
			n := ix.writersUpTo2(r.Key, r.Value)
			switch {
			case n == 2:
				ws := ix.Writers(r.Key, r.Value)
				n = len(ws)
				for _, w := range ws {
					if w == TxnID(t) {
						n--
					}
				}
			case n == 1 && ix.onlyWriterIs(final, TxnID(t), r.Key, r.Value):
				n = 0
			}
			if n > 1 {
				s.MultiWriterReads++
			}
			s.MaxCandidates = max(s.MaxCandidates, n)
		}
	}
	s.Operations += ops
	s.Reads += reads
	s.Writes += ops - reads
	for ver := vlo; ver < vhi; ver++ {
		if ix.writerStart[ver+1]-ix.writerStart[ver] > 1 {
			s.DuplicateVersions++
		}
	}
}
