package history

// HintEdge is a version order between the transactions that installed the
// two versions: From's write of Key precedes To's.
type HintEdge struct {
	Key      KeyID
	From, To TxnID
}

// HintEdges turns version hints into orders between their writers. The
// writer of a version is the transaction that wrote it, finally or not (an
// intermediate element of a list stands for its transaction: transactions
// install their writes at once). A hint from version a to version b gives
// A → B when a and b each have exactly one writer, A and B, both included,
// A ≠ B. Writers are counted among the included transactions and the
// unknown-status ones left out alike, so that leaving an unknown
// transaction out never makes another writer unique: it only removes
// orders. A version with several writers (a value appended twice) leaves
// its hints out: those orders stay uncertain. The result is deduplicated,
// in the order of hints.
func (h *History) HintEdges(hints []VersionHint, included func(TxnID) bool) []HintEdge {
	if len(hints) == 0 {
		return nil
	}
	ix := h.Index()
	const none, many TxnID = -1, -2
	writer := make([]TxnID, ix.NumVersions())
	for i := range writer {
		writer[i] = none
	}
	for t := range h.Txns {
		if h.Txns[t].Status != Unknown && !included(TxnID(t)) {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if !op.Kind.IsWrite() {
				continue
			}
			ver := ix.Ver(op.Key, op.Value)
			switch w := writer[ver]; {
			case w == none:
				writer[ver] = TxnID(t)
			case w != TxnID(t):
				writer[ver] = many
			}
		}
	}
	seen := map[HintEdge]bool{}
	var out []HintEdge
	for _, vh := range hints {
		a, b := writer[ix.Ver(vh.Key, vh.Before)], writer[ix.Ver(vh.Key, vh.After)]
		if a < 0 || b < 0 || a == b || !included(a) || !included(b) {
			continue
		}
		e := HintEdge{Key: vh.Key, From: a, To: b}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}
