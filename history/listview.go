package history

import (
	"math"
	"slices"
)

// One explanation of a list history as a register view (lists.go says what
// it holds).

// registerView builds the register view of one explanation: fates fixed,
// and kvs[i]'s decomposition choice[i] naming the appender of every
// element.
func (e *listEnum) registerView(fate []Status, kvs []keyViews, choice []int, fs []ListFinding) *ListExplanation {
	p, h := e.p, e.p.h
	nk := len(h.Keys)
	g := &History{
		Source: h.Source, Format: h.Format, Sessions: h.Sessions, InitKind: h.InitKind,
		Keys: slices.Clone(h.Keys), Values: slices.Clone(h.Values), AbortedWrites: h.AbortedWrites,
		VersionHints: slices.Clone(h.VersionHints), Warnings: h.Warnings, Meta: h.Meta, Dropped: h.Dropped,
	}
	if h.KeyNames != nil {
		g.KeyNames = slices.Clone(h.KeyNames)
	}
	if h.ValueNames != nil {
		g.ValueNames = slices.Clone(h.ValueNames)
	}
	// The version each committed appender installs: its block's last
	// value, or a fresh stand-in when another transaction appended that
	// value too. bver[t][j] is that of t's block j; keyApp[k] lists the
	// committed appenders of k in TxnID order.
	bver := make([][]ValueID, len(h.Txns))
	keyApp := make([][]TxnID, nk)
	var owner map[int32]TxnID
	for t := 1; t < len(h.Txns); t++ {
		if fate[t] != Committed || len(p.blocks[t]) == 0 {
			continue
		}
		bver[t] = make([]ValueID, len(p.blocks[t]))
		for j, b := range p.blocks[t] {
			k := b.key
			v := b.vals[len(b.vals)-1]
			ver := p.base[k] + int32(v)
			if len(p.appenders[ver]) > 1 || count(b.vals, v) > 1 || p.aborted[ver] {
				if owner == nil {
					owner = map[int32]TxnID{}
				}
				if o, ok := owner[ver]; ok && o != TxnID(t) {
					v = freshValue(g, k, v, h.TxnString(TxnID(t)))
				} else {
					owner[ver] = TxnID(t)
				}
			}
			bver[t][j] = v
			keyApp[k] = append(keyApp[k], TxnID(t))
		}
	}
	version := func(t TxnID, k KeyID) ValueID {
		for j, b := range p.blocks[t] {
			if b.key == k {
				return bver[t][j]
			}
		}
		return -1
	}
	// Stated orders: the blocks of each longest view, then every other
	// committed appender after its last block.
	inSeq := make([]int32, len(h.Txns)) // == i+1: in kvs[i]'s sequence
	for i, kv := range kvs {
		seq := kv.decomps[choice[i]]
		k := kv.key
		for j, w := range seq {
			inSeq[w] = int32(i + 1)
			if j > 0 {
				g.VersionHints = append(g.VersionHints, VersionHint{Key: k, Before: version(seq[j-1], k), After: version(w, k)})
			}
		}
		if len(seq) == 0 {
			continue // every appender follows T⊥, whose version was read
		}
		last := version(seq[len(seq)-1], k)
		for _, w := range keyApp[k] {
			if inSeq[w] != int32(i+1) {
				g.VersionHints = append(g.VersionHints, VersionHint{Key: k, Before: last, After: version(w, k)})
			}
		}
	}
	// Each read's view: the appenders of its blocks, as a prefix of its
	// key's decomposition.
	viewOf := make([][]TxnID, len(p.reads))
	budget := 4 * len(p.reads) // NoConflictHints past the sequences' ends
	var views []ListView
	for i, kv := range kvs {
		seq := kv.decomps[choice[i]]
		k := kv.key
		for _, w := range seq {
			inSeq[w] = int32(i + 1)
		}
		for _, ri := range kv.reads {
			n, pos := 0, 0
			r := p.reads[ri]
			for pos < len(r.view) {
				pos += len(p.block(seq[n], k))
				n++
			}
			viewOf[ri] = seq[:n]
			if e.ambiguous(r) {
				views = append(views, ListView{Txn: r.t, Op: r.op, Appenders: slices.Clone(seq[:n])})
			}
			// Where writers of one key see each other, a reader that
			// appends to the key installs its block right after its
			// view: before the next block of the sequence, or, after a
			// view of the whole sequence, before every other appender
			// (bounded: these orders only name cycles as Elle does, the
			// engines infer them anyway).
			mine := version(r.t, k)
			switch {
			case mine < 0:
			case n < len(seq) && seq[n] != r.t:
				g.NoConflictHints = append(g.NoConflictHints, VersionHint{Key: k, Before: mine, After: version(seq[n], k)})
			case n == len(seq) && inSeq[r.t] != int32(i+1):
				for _, w := range keyApp[k] {
					if w != r.t && inSeq[w] != int32(i+1) && budget > 0 {
						budget--
						g.NoConflictHints = append(g.NoConflictHints, VersionHint{Key: k, Before: mine, After: version(w, k)})
					}
				}
			}
		}
	}
	visKey := map[TxnID]KeyID{}
	one := ValueID(0)
	var vis func(TxnID) KeyID
	nOps := 0
	fresh := newFreshNames(g)
	vis = func(w TxnID) KeyID {
		if k, ok := visKey[w]; ok {
			return k
		}
		k := fresh.key("[a list holding " + h.TxnString(w) + "'s appends]")
		visKey[w] = k
		g.Values = append(g.Values, []int64{1})
		if g.ValueNames != nil {
			g.ValueNames = append(g.ValueNames, nil)
		}
		return k
	}
	for t := range h.Txns {
		nOps += len(h.Txns[t].Ops) + 2*len(p.blocks[t])
	}
	ops := make([]Op, 0, nOps)
	origin := make([][]int32, len(h.Txns))
	g.Txns = make([]Txn, len(h.Txns))
	var orig []int32
	visSeen := make([]int32, len(h.Txns)) // == t: t reads w's stand-in already
	readKey := make([]int32, nk)          // == t: t reads the key
	// Per session, the latest transaction (by index) a read's view is
	// known to see so far: an earlier one of the same session precedes
	// it in session order, and so is seen too where visibility is
	// transitive.
	sessLatest := make([]int32, len(h.Sessions))
	sessStamp := make([]int32, len(h.Sessions))
	visRead := int32(0)
	seen := func(w TxnID) {
		s := h.Txns[w].Session
		if sessStamp[s] != visRead || sessLatest[s] < h.Txns[w].Index {
			sessStamp[s], sessLatest[s] = visRead, h.Txns[w].Index
		}
	}
	before := func(w TxnID) bool {
		s := h.Txns[w].Session
		return sessStamp[s] == visRead && sessLatest[s] > h.Txns[w].Index
	}
	// covOf is how many blocks of k's version order w's own view of k
	// holds (its reads of k all show one view at levels from RA on).
	covOf := func(w TxnID, k KeyID) int {
		n := 0
		for _, ri := range p.readsOf[w] {
			if p.reads[ri].key == k {
				n = max(n, len(viewOf[ri]))
			}
		}
		return n
	}
	for t := range h.Txns {
		tx := h.Txns[t]
		if fate[t] == Committed {
			tx.Status = Committed
		} else if fate[t] == Aborted {
			tx.Status = Aborted
		}
		start := len(ops)
		orig = orig[:0]
		if e.opt.Visibility == VisibleReadKeys {
			for _, op := range tx.Ops {
				if op.Kind.IsRead() {
					readKey[op.Key] = int32(t)
				}
			}
		}
		next := 0 // t's list reads come in p.readsOf[t] in program order
		for i, op := range tx.Ops {
			switch {
			case t == 0 || !p.isList[op.Key]:
				ops = append(ops, op)
				orig = append(orig, int32(i))
			case op.Kind == OpAppend:
				if tx.Status == Aborted {
					ops = append(ops, Op{Kind: OpWrite, Key: op.Key, Value: op.Value})
					orig = append(orig, int32(i))
				}
			case tx.Status == Committed:
				ri := p.readsOf[t][next]
				next++
				seq := viewOf[ri]
				if e.opt.Visibility != VisibleNone && len(seq) > 1 {
					cov := 0 // seq[:cov] is covered
					if e.opt.Visibility == VisibleCovered {
						cov = covOf(seq[len(seq)-1], op.Key)
						visRead++
						seen(seq[len(seq)-1])
					}
					for j := len(seq) - 2; j >= 0; j-- {
						w := seq[j]
						switch e.opt.Visibility {
						case VisibleReadKeys:
							if !p.writesReadKey(w, op.Key, readKey, int32(t)) {
								continue
							}
						case VisibleCovered:
							if j < cov || before(w) {
								continue
							}
							cov = max(cov, covOf(w, op.Key))
							seen(w)
						}
						if visSeen[w] != int32(t) {
							visSeen[w] = int32(t)
							ops = append(ops, Op{Kind: OpRead, Key: vis(w), Value: one})
							orig = append(orig, -1)
						}
					}
				}
				v := p.empty[op.Key]
				if len(seq) > 0 {
					v = version(seq[len(seq)-1], op.Key)
				}
				ops = append(ops, Op{Kind: OpRead, Key: op.Key, Value: v})
				orig = append(orig, int32(i))
			}
		}
		if tx.Status == Committed && t > 0 {
			for j, b := range p.blocks[t] {
				ops = append(ops, Op{Kind: OpWrite, Key: b.key, Value: bver[t][j]})
				orig = append(orig, lastAppend(h, TxnID(t), b.key))
			}
			if k, ok := visKey[TxnID(t)]; ok {
				ops = append(ops, Op{Kind: OpWrite, Key: k, Value: one})
				orig = append(orig, -1)
			}
		}
		tx.Ops = ops[start:len(ops):len(ops)]
		origin[t] = slices.Clone(orig)
		g.Txns[t] = tx
	}
	// A stand-in key is written by an appender processed after some of its
	// readers: those reads were added first, which is fine, but an
	// appender whose key was made after its own transaction was laid out
	// still needs its write.
	for w, k := range visKey {
		tx := &g.Txns[w]
		if n := len(tx.Ops); n > 0 && tx.Ops[n-1].Key == k {
			continue
		}
		tx.Ops = append(slices.Clip(tx.Ops), Op{Kind: OpWrite, Key: k, Value: one})
		origin[w] = append(origin[w], -1)
	}
	slices.SortFunc(views, func(a, b ListView) int {
		if a.Txn != b.Txn {
			return int(a.Txn - b.Txn)
		}
		return int(a.Op - b.Op)
	})
	return &ListExplanation{H: g, Findings: fs, OpOrigin: origin, Views: views}
}

// ambiguous reports whether some element of r's view has several possible
// appenders.
func (e *listEnum) ambiguous(r listRead) bool {
	for _, v := range r.view {
		if len(e.p.cands(r.key, v)) > 1 {
			return true
		}
	}
	return false
}

func lastAppend(h *History, t TxnID, k KeyID) int32 {
	ops := h.Txns[t].Ops
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Kind == OpAppend && ops[i].Key == k {
			return int32(i)
		}
	}
	return -1
}

// freshValue adds to key k a stand-in for value v as written by the named
// transaction: an unused raw value, printed as v's name with the writer.
// Renames are few (values appended more than once), so a scan is enough.
func freshValue(g *History, k KeyID, v ValueID, writer string) ValueID {
	raw := int64(math.MinInt64 + 1)
	for slices.Contains(g.Values[k], raw) {
		raw++
	}
	name := g.ValueString(k, v) + " (" + writer + ")"
	g.Values[k] = append(slices.Clip(g.Values[k]), raw)
	if g.ValueNames == nil {
		g.ValueNames = make([][]string, len(g.Keys))
	}
	names := slices.Clip(g.ValueNames[k])
	for len(names) < len(g.Values[k])-1 {
		names = append(names, "")
	}
	g.ValueNames[k] = append(names, name)
	return ValueID(len(g.Values[k]) - 1)
}

// freshNames hands out stand-in keys whose raw values no key uses.
type freshNames struct {
	g    *History
	used map[int64]bool
	next int64
}

func newFreshNames(g *History) *freshNames {
	used := make(map[int64]bool, len(g.Keys))
	for _, k := range g.Keys {
		used[k] = true
	}
	return &freshNames{g: g, used: used, next: math.MinInt64 + 1}
}

// key adds a stand-in key with the given name.
func (f *freshNames) key(name string) KeyID {
	for f.used[f.next] {
		f.next++
	}
	g := f.g
	if g.KeyNames == nil {
		g.KeyNames = make([]string, len(g.Keys))
	}
	g.Keys = append(g.Keys, f.next)
	g.KeyNames = append(g.KeyNames, name)
	f.next++
	return KeyID(len(g.Keys) - 1)
}
