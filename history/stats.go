package history

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

// Stats computes the summary in one pass over the history and its index.
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
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		switch tx.Status {
		case Committed:
			s.Committed++
		case Aborted:
			s.Aborted++
		default:
			s.Unknown++
		}
		s.Operations += len(tx.Ops)
		for _, op := range tx.Ops {
			if op.Kind.IsRead() {
				s.Reads++
			} else {
				s.Writes++
			}
		}
		if tx.Status != Committed {
			continue
		}
		for _, r := range ix.Reads(TxnID(t)) {
			s.ExternalReads++
			n := len(ix.Writers(r.Key, r.Value))
			for _, w := range ix.Writers(r.Key, r.Value) {
				if w == TxnID(t) {
					n--
				}
			}
			if n > 1 {
				s.MultiWriterReads++
			}
			s.MaxCandidates = max(s.MaxCandidates, n)
		}
	}
	for ver := range ix.NumVersions() {
		if ix.writerStart[ver+1]-ix.writerStart[ver] > 1 {
			s.DuplicateVersions++
		}
	}
	for v := range h.OneOf { // stand-ins are no versions of their own
		if len(ix.Writers(v.Key, v.Value)) > 1 {
			s.DuplicateVersions--
		}
	}
	return s
}
