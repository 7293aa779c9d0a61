package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// Optional is the part of a hyper-polygraph that exists only for the
// unknown-status transactions that may or may not have committed, the
// optional ones; a solver decides which are taken. An optional
// transaction stays a node of the graph (Included) with its session-order
// and real-time edges into it: left out, it has no other edge, it precedes
// nothing in real time (an unknown outcome has no end), and a path through
// it by session order alone is the session order of its neighbours, so the
// known graph holds whichever way it is decided. Everything else that
// touches it moves here, out of Known, WW, WR, Reads and Writers, which
// pruning and the width-two clauses take as certain.
type Optional struct {
	// Is marks the optional transactions, by TxnID.
	Is []bool
	// WW holds the version-order pairs with an optional writer: a pair
	// orders its writers only when both are taken.
	WW []WWPair
	// Known holds certain version orders (T⊥'s version first, list
	// hints) with an optional writer: each holds when both ends are taken.
	Known []Edge
	// WR holds the external reads of optional readers, a set with one
	// candidate included: a taken reader reads from exactly one taken
	// candidate.
	WR []WRSet
	// Writers[k] lists the optional final writers of key k, ascending.
	Writers [][]history.TxnID
}

// SplitOptional moves what touches the transactions is marks out of g's
// certain part into g.Opt. Call it after Build (with the optional
// transactions included), ApplyVersionHints and AddRealTime, before
// pruning. A read-from edge known in g from an optional writer to a
// certain reader stays known: the encoding takes that writer.
func (g *Graph) SplitOptional(is []bool) {
	opt := &Optional{Is: is, Writers: make([][]history.TxnID, len(g.Writers))}
	known := g.Known[:0]
	for _, e := range g.Known {
		if e.Rel == history.SO || e.Rel == history.RT || (!is[e.From] && !is[e.To]) {
			known = append(known, e)
			continue
		}
		switch e.Rel {
		case history.WW:
			opt.Known = append(opt.Known, e)
		case history.WR:
			if is[e.To] {
				opt.WR = append(opt.WR, WRSet{Reader: e.To, Key: e.Key, Cands: []history.TxnID{e.From}})
			} else {
				known = append(known, e)
			}
		}
		// RW edges are derived again from the parts they follow from.
	}
	g.Known = known
	ww := g.WW[:0]
	for _, p := range g.WW {
		if is[p.A] || is[p.B] {
			opt.WW = append(opt.WW, p)
		} else {
			ww = append(ww, p)
		}
	}
	g.WW = ww
	newSet := make([]int32, len(g.WR))
	wr := g.WR[:0]
	for i, s := range g.WR {
		if is[s.Reader] {
			newSet[i] = -1
			opt.WR = append(opt.WR, s)
			continue
		}
		newSet[i] = int32(len(wr))
		wr = append(wr, s)
	}
	g.WR = wr
	for k, rs := range g.Reads {
		keep := rs[:0]
		for _, r := range rs {
			if is[r.Reader] {
				continue
			}
			if r.Set >= 0 {
				r.Set = newSet[r.Set]
			}
			keep = append(keep, r)
		}
		g.Reads[k] = keep
	}
	for k, ws := range g.Writers {
		keep := ws[:0]
		for _, w := range ws {
			if is[w] {
				opt.Writers[k] = append(opt.Writers[k], w)
			} else {
				keep = append(keep, w)
			}
		}
		g.Writers[k] = keep
	}
	g.Opt = opt
}

// Taking returns the graph of one decision: the optional transactions
// take marks are committed, the others left out. Its WW and WR extend g's
// with the pairs and reads of g.Opt among the taken transactions:
// optWW[i] is the index in g.Opt.WW of pair len(g.WW)+i, optWR[i] that
// in g.Opt.WR of set len(g.WR)+i. Session order goes around the
// transactions left out. g itself is not changed.
func (g *Graph) Taking(take []bool) (t *Graph, optWW, optWR []int32) {
	opt := g.Opt
	in := func(x history.TxnID) bool { return !opt.Is[x] || take[x] }
	t = &Graph{H: g.H, Level: g.Level, Included: slices.Clone(g.Included),
		Writers: make([][]history.TxnID, len(g.Writers)), Reads: make([][]Read, len(g.Reads))}
	for x, is := range opt.Is {
		if is && !take[x] {
			t.Included[x] = false
		}
	}
	for _, s := range g.H.Sessions {
		prev := history.InitTxn
		for _, x := range s.Txns {
			if t.Included[x] {
				t.Known = append(t.Known, Edge{From: prev, To: x, Rel: history.SO, Key: -1})
				prev = x
			}
		}
	}
	for _, e := range g.Known {
		if e.Rel != history.SO && t.Included[e.From] && t.Included[e.To] {
			t.Known = append(t.Known, e)
		}
	}
	for _, e := range opt.Known {
		if in(e.From) && in(e.To) {
			t.Known = append(t.Known, e)
		}
	}
	for k := range g.Writers {
		t.Writers[k] = slices.Clone(g.Writers[k])
		for _, w := range opt.Writers[k] {
			if take[w] {
				t.Writers[k] = append(t.Writers[k], w)
			}
		}
		slices.Sort(t.Writers[k])
		t.Reads[k] = slices.Clone(g.Reads[k])
	}
	t.WW = slices.Clone(g.WW)
	for i, p := range opt.WW {
		if in(p.A) && in(p.B) {
			t.WW = append(t.WW, p)
			optWW = append(optWW, int32(i))
		}
	}
	t.WR = slices.Clone(g.WR)
	for i, s := range opt.WR {
		if take[s.Reader] {
			t.Reads[s.Key] = append(t.Reads[s.Key], Read{Reader: s.Reader, Writer: -1, Set: int32(len(t.WR)), Pred: s.Pred})
			t.WR = append(t.WR, s)
			optWR = append(optWR, int32(i))
		}
	}
	return t, optWW, optWR
}
