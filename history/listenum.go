package history

import "slices"

// The enumeration of a list history's explanations: fates the lists leave
// open, findings, and the appenders of every element.

// listEnum enumerates explanations.
type listEnum struct {
	p *listPrep
	// mark, occurs and stamp count, per version, an element's occurrences
	// in the view being checked.
	mark, occurs []int32
	stamp        int32
	opt          ListOptions
	limit        int
	count        int
	over         bool
	stopped      bool
	yield        func(*ListExplanation, error) bool
}

func (e *listEnum) done() bool { return e.over || e.stopped }

// fates settles the fates the lists force, then branches on one that is
// still open, or goes on to the appenders.
//
// taken lists the transactions committed by a branch rather than forced:
// an explanation in which such a transaction's block appears in no view
// and whose writes nobody reads is skipped, since the branch that leaves
// it out explains the same with fewer constraints.
func (e *listEnum) fates(fate []Status, taken []TxnID) {
	if e.done() {
		return
	}
	p := e.p
	open := false
	for _, f := range fate {
		if f == undetermined {
			open = true
			break
		}
	}
	if !open {
		e.views(fate, taken)
		return
	}
	fate = slices.Clone(fate)
	in := func(t TxnID) bool { return fate[t] == Committed }
	// Force the only possible appender of an element a committed reader
	// saw; a forced transaction's own reads count from then on.
	for changed := true; changed; {
		changed = false
		for _, r := range p.reads {
			if !in(r.t) || r.bad {
				continue
			}
			for _, v := range r.view {
				var only TxnID = -1
				n := 0
				for _, w := range p.cands(r.key, v) {
					if w != r.t && fate[w] != Aborted {
						only = w
						n++
					}
				}
				if n == 1 && fate[only] == undetermined {
					fate[only] = Committed
					changed = true
				}
			}
		}
	}
	branch := TxnID(-1)
	for _, r := range p.reads {
		if branch >= 0 {
			break
		}
		if !in(r.t) || r.bad {
			continue
		}
		for _, v := range r.view {
			for _, w := range p.cands(r.key, v) {
				if w != r.t && fate[w] == undetermined {
					branch = w
					break
				}
			}
			if branch >= 0 {
				break
			}
		}
	}
	if branch < 0 {
		for t := range fate {
			if fate[t] == undetermined && p.needed[t] {
				branch = TxnID(t)
				break
			}
		}
	}
	if branch >= 0 {
		fate[branch] = Committed
		e.fates(fate, append(slices.Clip(taken), branch))
		fate[branch] = Aborted
		e.fates(fate, taken)
		return
	}
	// Nobody needs the rest: leaving them out keeps every read as it is.
	for t := range fate {
		if fate[t] == undetermined {
			fate[t] = Aborted
		}
	}
	e.views(fate, taken)
}

// keyViews is what the committed readers of one key show.
type keyViews struct {
	key   KeyID
	reads []int32 // indexes into prep.reads, committed readers, good lists
	// longest is the index (into reads) of the longest view.
	longest int32
	// decomps are the explanations of the longest view: each a sequence
	// of appenders.
	decomps [][]TxnID
}

// views checks the committed readers' lists under fate and enumerates
// the appenders of every element.
func (e *listEnum) views(fate []Status, taken []TxnID) {
	p, h := e.p, e.p.h
	var fs []ListFinding
	add := func(f ListFinding) { fs = append(fs, f) }
	in := func(t TxnID) bool { return fate[t] == Committed }
	nk := len(h.Keys)
	byKey := make([][]int32, nk)
	for i, r := range p.reads {
		if !in(r.t) {
			continue
		}
		if r.bad {
			add(ListFinding{Kind: InternalList, Key: r.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: -1})
			continue
		}
		if f, ok := e.elementFinding(fate, r); !ok {
			add(f)
			continue
		}
		byKey[r.key] = append(byKey[r.key], int32(i))
	}
	var kvs []keyViews
	for k := range nk {
		rs := byKey[k]
		if len(rs) == 0 {
			continue
		}
		kv := keyViews{key: KeyID(k), reads: rs}
		for j, ri := range rs {
			if len(p.reads[ri].view) > len(p.reads[rs[kv.longest]].view) {
				kv.longest = int32(j)
			}
		}
		m := p.reads[rs[kv.longest]]
		ok := true
		for _, ri := range rs {
			r := p.reads[ri]
			if !isPrefix(r.view, m.view) {
				add(ListFinding{Kind: IncompatibleOrder, Key: KeyID(k), Txns: []TxnID{m.t, r.t}, Ops: []int32{m.op, r.op}, Value: -1, At: firstDiff(m.view, r.view)})
				ok = false
				break
			}
		}
		// Reads of one transaction: never less, and at levels from read
		// atomic on, the same.
		// (rs is in transaction and program order: a transaction's reads
		// of the key are consecutive, and comparing neighbours suffices.)
		for j := 1; j < len(rs); j++ {
			q, r := p.reads[rs[j-1]], p.reads[rs[j]]
			if q.t != r.t {
				continue
			}
			switch {
			case len(r.view) < len(q.view):
				add(ListFinding{Kind: InternalList, Key: KeyID(k), Txns: []TxnID{r.t, r.t}, Ops: []int32{q.op, r.op}, Value: -1})
				ok = false
			case len(r.view) > len(q.view):
				add(ListFinding{Kind: NonRepeatableList, Key: KeyID(k), Txns: []TxnID{r.t, r.t}, Ops: []int32{q.op, r.op}, Value: -1})
			}
		}
		if !ok {
			continue
		}
		kv.decomps = e.decompose(fate, &kv)
		if len(kv.decomps) == 0 {
			add(e.blockFinding(fate, &kv))
			continue
		}
		kvs = append(kvs, kv)
	}
	if len(fs) > 0 {
		// Findings of read-committed kind only (a longer re-read) still
		// leave the register view to decide the other levels.
		blocking := false
		for _, f := range fs {
			if f.Kind != NonRepeatableList {
				blocking = true
			}
		}
		if blocking {
			e.emit(&ListExplanation{Findings: fs}, fate)
			return
		}
	}
	choice := make([]int, len(kvs))
	var rec func(i int)
	rec = func(i int) {
		if e.done() {
			return
		}
		if i == len(kvs) {
			if e.seen(kvs, choice, taken) {
				e.emit(e.registerView(fate, kvs, choice, fs), fate)
			}
			return
		}
		for c := range kvs[i].decomps {
			choice[i] = c
			rec(i + 1)
		}
	}
	rec(0)
}

// seen reports whether every transaction in taken appears in some view of
// the chosen decompositions or has writes some transaction reads.
func (e *listEnum) seen(kvs []keyViews, choice []int, taken []TxnID) bool {
	for _, t := range taken {
		if e.p.needed[t] {
			continue
		}
		found := false
		for i, kv := range kvs {
			if slices.Contains(kv.decomps[choice[i]], t) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// emit yields one explanation, counting it against the bound.
func (e *listEnum) emit(x *ListExplanation, fate []Status) {
	if e.done() {
		return
	}
	if e.count >= e.limit {
		e.over = true
		return
	}
	e.count++
	h := e.p.h
	for t := range fate {
		if h.Txns[t].Status == Unknown && e.p.relevant[t] {
			if fate[t] == Committed {
				x.Committed = append(x.Committed, TxnID(t))
			} else {
				x.Aborted = append(x.Aborted, TxnID(t))
			}
		}
	}
	if !e.yield(x, nil) {
		e.stopped = true
	}
}

// elementFinding checks that every element of r's view has an appender
// that may have committed, other than r, and as many of them as the view
// holds the value.
func (e *listEnum) elementFinding(fate []Status, r listRead) (ListFinding, bool) {
	p, h := e.p, e.p.h
	f := ListFinding{Key: r.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: -1}
	e.stamp++
	for pos, v := range r.view {
		ver := p.base[r.key] + int32(v)
		if e.mark[ver] != e.stamp {
			e.mark[ver], e.occurs[ver] = e.stamp, 0
		}
		e.occurs[ver]++
		cs := p.cands(r.key, v)
		if len(cs) == 1 && cs[0] != r.t && fate[cs[0]] != Aborted && e.occurs[ver] == 1 {
			continue // the common case: one appender, seen once so far
		}
		avail := int32(0)
		for _, w := range cs {
			if w != r.t && fate[w] != Aborted {
				avail += int32(count(p.block(w, r.key), v))
			}
		}
		if avail >= e.occurs[ver] {
			continue
		}
		f.Value, f.At = v, pos
		switch {
		case avail > 0 || e.occurs[ver] > 1:
			f.Kind = DuplicateElements
		case slices.Contains(p.block(r.t, r.key), v):
			f.Kind = FutureElement
			if slices.Contains(ownBefore(h, r.t, r.op), v) {
				f.Kind = InternalList
			}
		case p.aborted[p.base[r.key]+int32(v)] || anyFate(p.cands(r.key, v), fate, Aborted):
			f.Kind = AbortedElement
			for t := 1; t < len(h.Txns); t++ {
				if (h.Txns[t].Status == Aborted || fate[t] == Aborted) && appended(h, TxnID(t), r.key, v) {
					f.Writers = append(f.Writers, TxnID(t))
				}
			}
		default:
			f.Kind = GarbageElement
		}
		return f, false
	}
	return f, true
}

func anyFate(ts []TxnID, fate []Status, s Status) bool {
	for _, t := range ts {
		if fate[t] == s {
			return true
		}
	}
	return false
}

func appended(h *History, t TxnID, k KeyID, v ValueID) bool {
	for _, op := range h.Txns[t].Ops {
		if op.Kind == OpAppend && op.Key == k && op.Value == v {
			return true
		}
	}
	return false
}

func count(vs []ValueID, v ValueID) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}

// decompose returns the ways (at most the bound) to spell the longest
// view of kv as whole blocks of distinct committed appenders, such that
// every view of the key ends at a block boundary and no reader's own
// block lies within its view.
func (e *listEnum) decompose(fate []Status, kv *keyViews) [][]TxnID {
	p := e.p
	m := p.reads[kv.reads[kv.longest]].view
	boundary := make([]bool, len(m)+1)
	readerEnd := map[TxnID]int{} // the longest view of each reader
	for _, ri := range kv.reads {
		r := p.reads[ri]
		boundary[len(r.view)] = true
		readerEnd[r.t] = max(readerEnd[r.t], len(r.view))
	}
	var out [][]TxnID
	var seq []TxnID
	used := map[TxnID]bool{}
	var rec func(pos int)
	rec = func(pos int) {
		if e.over {
			return
		}
		if pos == len(m) {
			if len(out) >= e.limit {
				e.over = true // never a silent cut: the caller reports it
				return
			}
			out = append(out, slices.Clone(seq))
			return
		}
		for _, w := range p.cands(kv.key, m[pos]) {
			if fate[w] != Committed || used[w] {
				continue
			}
			if end, ok := readerEnd[w]; ok && pos < end {
				continue // w's own block inside its own view
			}
			b := p.block(w, kv.key)
			if len(b) == 0 || pos+len(b) > len(m) || !slices.Equal(m[pos:pos+len(b)], b) {
				continue
			}
			bad := false
			for q := pos + 1; q < pos+len(b); q++ {
				if boundary[q] {
					bad = true // a view ends inside w's block
					break
				}
			}
			if bad {
				continue
			}
			used[w] = true
			seq = append(seq, w)
			rec(pos + len(b))
			seq = seq[:len(seq)-1]
			used[w] = false
		}
	}
	rec(0)
	return out
}

// blockFinding names why no decomposition exists. With one appender per
// element it finds the read and the block at fault; otherwise it reports
// the longest view as unexplained.
func (e *listEnum) blockFinding(fate []Status, kv *keyViews) ListFinding {
	p := e.p
	for _, ri := range kv.reads {
		r := p.reads[ri]
		pos := 0
		for pos < len(r.view) {
			var ws []TxnID
			for _, w := range p.cands(kv.key, r.view[pos]) {
				if w != r.t && fate[w] == Committed {
					ws = append(ws, w)
				}
			}
			if len(ws) != 1 {
				break
			}
			w := ws[0]
			b := p.block(w, kv.key)
			f := ListFinding{Key: kv.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: r.view[pos], At: pos, Writers: []TxnID{w}}
			switch {
			case b[0] != r.view[pos]:
				f.Kind = IncompatibleOrder
				return f
			case pos+len(b) > len(r.view) && slices.Equal(r.view[pos:], b[:len(r.view)-pos]):
				f.Kind = IntermediateList
				return f
			case pos+len(b) > len(r.view) || !slices.Equal(r.view[pos:pos+len(b)], b):
				f.Kind = IncompatibleOrder
				f.At = pos + firstDiff(r.view[pos:], b)
				return f
			}
			pos += len(b)
		}
	}
	r := p.reads[kv.reads[kv.longest]]
	return ListFinding{Kind: UnexplainedList, Key: kv.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: -1}
}

// isPrefix reports whether a is a prefix of b.
func isPrefix(a, b []ValueID) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }

func firstDiff(a, b []ValueID) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
