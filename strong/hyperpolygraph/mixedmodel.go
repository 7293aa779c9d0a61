package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// The test of one model of a mixed-level history: each transaction's
// axioms (seeing, read committed, transitive visibility) checked on the
// graph of snapshots, commits and joins, and the culprit named.

// mixedModel is one compatible graph's facts for the seeing checks.
type mixedModel struct {
	m *Mixed
	c *Compatible
	// pos[KeyTxn(x, w)] is w's place among x's writers; next[...] the ww
	// edge to the writer after w.
	pos  map[uint64]int32
	next map[uint64]int32
	out  [][]int32 // edge indices by source (so, wr, ww, rw)
	in   [][]int32 // so and wr edge indices by target
	// ar is each transaction's place in one arbitration order (its commit
	// state's place in a topological order of the state graph).
	ar []int32
	// The searches of trans: a stamp per search spares clearing.
	stamp, via []int32
	cur        int32
	chainVia   map[uint64]int32
}

// find returns one forbidden structure among the edges not disabled.
func (m *Mixed) find(c *Compatible, csr stateCSR, disabled []bool) ([]int, Blame) {
	adj := csr.adj(disabled)
	if cyc := pcCycle(adj); cyc != nil {
		return cyc, m.blameCycle(c, cyc)
	}
	mm := m.model(c, disabled, adj)
	if mm == nil {
		return nil, Blame{}
	}
	cyc, b := mm.seeing()
	for _, ei := range cyc {
		if disabled[ei] {
			// The version order is the model's, set-aside edges included;
			// a structure through them was blocked already, and the first
			// search of each model has none set aside.
			return nil, Blame{}
		}
	}
	return cyc, b
}

// model gathers the per-key chains and an arbitration order of c.
func (m *Mixed) model(c *Compatible, disabled []bool, adj [][][2]int32) *mixedModel {
	n := m.G.N()
	mm := &mixedModel{m: m, c: c, pos: map[uint64]int32{}, next: map[uint64]int32{}, out: make([][]int32, n), in: make([][]int32, n), ar: make([]int32, n)}
	prev := map[uint64]bool{}
	for i, e := range c.Edges {
		if e.Rel == history.WW {
			mm.next[KeyTxn(e.Key, e.From)] = int32(i)
			prev[KeyTxn(e.Key, e.To)] = true
		}
		if disabled[i] {
			continue
		}
		mm.out[e.From] = append(mm.out[e.From], int32(i))
		switch e.Rel {
		case history.SO, history.WR, history.RT:
			mm.in[e.To] = append(mm.in[e.To], int32(i))
		}
	}
	// Each key's writers in version order, from the one with no predecessor.
	for k, ws := range m.G.Writers {
		for _, w := range ws {
			if prev[KeyTxn(history.KeyID(k), w)] {
				continue
			}
			p := int32(0)
			for x := w; ; p++ {
				if int(p) >= len(ws) {
					// A cyclic version order, its cycle set aside: not a
					// model the seeing checks can read.
					return nil
				}
				mm.pos[KeyTxn(history.KeyID(k), x)] = p
				ei, ok := mm.next[KeyTxn(history.KeyID(k), x)]
				if !ok {
					break
				}
				x = c.Edges[ei].To
			}
		}
	}
	for k, v := range topoOrder(adj) {
		if v < 3*int32(n) && v%3 == 1 {
			mm.ar[v/3] = int32(k)
		}
	}
	return mm
}

// after reports whether u writes key k after w in version order.
func (mm *mixedModel) after(k history.KeyID, u, w history.TxnID) bool {
	pu, ok := mm.pos[KeyTxn(k, u)]
	return ok && pu > mm.pos[KeyTxn(k, w)]
}

// chain returns the ww edges from a to b on key k (b after a).
func (mm *mixedModel) chain(k history.KeyID, a, b history.TxnID) []int {
	var out []int
	for x := a; x != b; {
		ei, ok := mm.next[KeyTxn(k, x)]
		if !ok {
			break // not after a: no chain (cannot happen in an acyclic model)
		}
		out = append(out, int(ei))
		x = mm.c.Edges[ei].To
	}
	return out
}

// seeing checks what the state graph cannot: that no non-prefix
// transaction sees a writer that overwrote a version it read. Its visible
// set is no order: RA sees its session predecessors and the writers it
// read from; CC and PSI close that under what those see; RC's reads each
// see the writers of its read events so far.
func (mm *mixedModel) seeing() ([]int, Blame) {
	m, c := mm.m, mm.c
	h := m.G.H
	// RA: session predecessors, by a pass over each session keeping, per
	// key, the writer latest in version order so far.
	latest := map[history.KeyID]history.TxnID{}
	for _, s := range h.Sessions {
		clear(latest)
		for _, t := range s.Txns {
			if !m.G.Included[t] {
				continue
			}
			if m.Level[t] == history.RA {
				for _, ei := range mm.out[t] {
					e := c.Edges[ei]
					if e.Rel != history.RW {
						continue
					}
					// A session predecessor wrote the key at or after the
					// version that overwrote the one t read.
					if u, ok := latest[e.Key]; ok && (u == e.To || mm.after(e.Key, u, e.To)) {
						return mm.soCycle(int(ei), u), Blame{Txn: t, Level: history.RA, Axiom: "SESSION", Saw: u, Missed: e.To, Key: e.Key}
					}
				}
			}
			for _, w := range h.Index().Writes(t) {
				if u, ok := latest[w.Key]; !ok || mm.after(w.Key, t, u) {
					latest[w.Key] = t
				}
			}
		}
	}
	for t := range m.G.N() {
		tid := history.TxnID(t)
		if !m.G.Included[t] {
			continue
		}
		if m.Level[t].ReadsApart() {
			// Each read its own set (RC, RR): none may follow a read of a
			// later version of its key.
			if cyc, b := mm.rc(tid); cyc != nil {
				return cyc, b
			}
		}
		switch m.Level[t] {
		case history.RA:
			// The writers it read from.
			for _, ei := range mm.out[t] {
				rw := c.Edges[ei]
				if rw.Rel != history.RW {
					continue
				}
				for _, wi := range mm.in[t] {
					if wr := c.Edges[wi]; wr.Rel == history.WR && (wr.From == rw.To || mm.after(rw.Key, wr.From, rw.To)) {
						cyc := append([]int{int(ei)}, mm.chain(rw.Key, rw.To, wr.From)...)
						return append(cyc, int(wi)), Blame{Txn: tid, Level: history.RA, Axiom: "EXT", Saw: wr.From, Missed: rw.To, Key: rw.Key}
					}
				}
			}
		case history.CC, history.PSI:
			if cyc, b := mm.trans(tid); cyc != nil {
				return cyc, b
			}
		}
	}
	return nil, Blame{}
}

// soCycle is t →rw b, b's version chain to u, and u's session order to
// t, where rw is the edge index of t →rw b.
func (mm *mixedModel) soCycle(rw int, u history.TxnID) []int {
	e := mm.c.Edges[rw]
	cyc := append([]int{rw}, mm.chain(e.Key, e.To, u)...)
	// Session order: follow so edges from u to e.From.
	for x := u; x != e.From; {
		found := false
		for _, ei := range mm.out[x] {
			if f := mm.c.Edges[ei]; f.Rel == history.SO {
				cyc = append(cyc, int(ei))
				x, found = f.To, true
				break
			}
		}
		if !found {
			break
		}
	}
	return cyc
}

// rc checks RC transaction t's read events: a read of x from w must not
// follow, in program order, a read from a writer of x later than w (the
// rows of one predicate read do not follow one another).
func (mm *mixedModel) rc(t history.TxnID) ([]int, Blame) {
	m, c := mm.m, mm.c
	evs := m.rcEvents[t]
	writer := make([]history.TxnID, len(evs))
	wrEdge := make([]int, len(evs))
	set := make([]int32, len(evs))
	for i, ev := range evs {
		rd := m.G.Reads[ev.key][ev.read]
		writer[i], wrEdge[i], set[i] = rd.Writer, -1, rd.Set
		for _, wi := range mm.in[t] {
			e := c.Edges[wi]
			if e.Rel != history.WR || e.Key != ev.key {
				continue
			}
			if p := c.Prov[wi]; rd.Set >= 0 && p.WR == rd.Set || rd.Set < 0 && p.WR < 0 && e.From == rd.Writer {
				writer[i], wrEdge[i] = e.From, int(wi)
				break
			}
		}
	}
	for i, ev := range evs {
		w := writer[i]
		for j := range i {
			t2 := writer[j]
			if t2 == w || evs[j].at == ev.at || !mm.after(ev.key, t2, w) {
				continue
			}
			// t →rw next(w) →ww … t2 →wr t.
			nx, ok := mm.next[KeyTxn(ev.key, w)]
			if !ok {
				continue
			}
			b := c.Edges[nx].To
			// The rw edge of this read event: another event's, of another
			// read-from choice, would block models that read past nothing.
			rw := -1
			for _, ei := range mm.out[t] {
				if e := c.Edges[ei]; e.Rel == history.RW && e.Key == ev.key && e.To == b && c.Prov[ei].WR == set[i] {
					rw = int(ei)
					break
				}
			}
			if rw < 0 {
				continue // t itself overwrote w: the state graph orders it
			}
			cyc := append([]int{rw}, mm.chain(ev.key, b, t2)...)
			if wrEdge[j] >= 0 {
				cyc = append(cyc, wrEdge[j])
			}
			return cyc, Blame{Txn: t, Level: m.Level[t], Axiom: "EXT", Saw: t2, Missed: b, Key: ev.key}
		}
	}
	return nil, Blame{}
}

// trans checks CC or PSI transaction t: for each t →rw b, neither b nor a
// later writer of the key reaches t through what t sees. The search goes
// forward from those writers over the edges that make a transaction
// visible (so, wr, and ww into a PSI transaction, whose earlier writers it
// all sees), not through prefix-level transactions (what they see lies in
// their snapshot, which the state graph orders), and only through
// transactions before t in the arbitration order.
func (mm *mixedModel) trans(t history.TxnID) ([]int, Blame) {
	m, c := mm.m, mm.c
	if mm.via == nil {
		mm.via = make([]int32, m.G.N())
		mm.stamp = make([]int32, m.G.N())
		mm.chainVia = map[uint64]int32{}
	}
	via, chainVia := mm.via, mm.chainVia // edge that reached a transaction (-1: a start); ww edge into a writer on a chain walk (-1: its origin)
	for _, ri := range mm.out[t] {
		rw := c.Edges[ri]
		if rw.Rel != history.RW || mm.ar[rw.To] >= mm.ar[t] {
			continue // what t cannot see, as it comes after t
		}
		mm.cur++
		cur := mm.cur
		seen := func(v history.TxnID) bool { return mm.stamp[v] == cur }
		if len(chainVia) > 0 {
			clear(chainVia)
		}
		var stack []history.TxnID
		for x := rw.To; ; {
			if mm.ar[x] >= mm.ar[t] {
				break
			}
			mm.stamp[x], via[x] = cur, -1
			stack = append(stack, x)
			nx, ok := mm.next[KeyTxn(rw.Key, x)]
			if !ok {
				break
			}
			x = c.Edges[nx].To
		}
		for len(stack) > 0 && !seen(t) {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if via[u] >= 0 && prefixLevel(m.Level[u]) {
				continue
			}
			visit := func(v history.TxnID, e int32) {
				if !seen(v) && mm.ar[v] <= mm.ar[t] {
					mm.stamp[v], via[v] = cur, e
					stack = append(stack, v)
				}
			}
			for _, ei := range mm.out[u] {
				e := c.Edges[ei]
				switch e.Rel {
				case history.SO, history.WR, history.RT:
					visit(e.To, ei)
				case history.WW:
					// Every later PSI writer of the key sees u.
					kt := KeyTxn(e.Key, u)
					if _, done := chainVia[kt]; done {
						continue
					}
					chainVia[kt] = -1
					for ej := ei; ; {
						y := c.Edges[ej].To
						ky := KeyTxn(e.Key, y)
						if _, done := chainVia[ky]; done || mm.ar[y] > mm.ar[t] {
							break
						}
						chainVia[ky] = ej
						if m.Level[y] == history.PSI {
							visit(y, ej)
						}
						nx, ok := mm.next[ky]
						if !ok {
							break
						}
						ej = nx
					}
				}
			}
		}
		if !seen(t) {
			continue
		}
		// Rebuild the path back from t to a start; a ww edge was reached by
		// a walk along its key's versions, followed back to where it began.
		var path []int
		var seenVia []history.TxnID
		x := t
		for via[x] >= 0 {
			ei := via[x]
			e := c.Edges[ei]
			path = append(path, int(ei))
			for e.Rel == history.WW {
				cv := chainVia[KeyTxn(e.Key, e.From)]
				if cv < 0 {
					break
				}
				ei, e = cv, c.Edges[cv]
				path = append(path, int(ei))
			}
			x = e.From
			seenVia = append(seenVia, x)
		}
		slices.Reverse(path)
		cyc := append([]int{int(ri)}, mm.chain(rw.Key, rw.To, x)...)
		cyc = append(cyc, path...)
		b := Blame{Txn: t, Level: m.Level[t], Axiom: "TRANSVis", Saw: x, Missed: rw.To, Key: rw.Key}
		if len(seenVia) > 0 {
			// seenVia runs from t's direct predecessor back to x; x is last.
			seenVia = seenVia[:len(seenVia)-1]
			slices.Reverse(seenVia)
			b.Via = seenVia
		}
		if len(path) == 1 {
			switch c.Edges[path[0]].Rel {
			case history.SO:
				b.Axiom = "SESSION"
			case history.WR:
				b.Axiom = "EXT"
			case history.WW:
				b.Axiom = "NoConflict"
			}
		} else if len(b.Via) == 0 {
			b.Axiom = "NoConflict"
		}
		return cyc, b
	}
	return nil, Blame{}
}

// blameCycle names whose axiom a cycle of the state graph breaks: the
// first rw edge from a prefix-level transaction (PREFIX, or TOTALVis at
// SER) or from a CC or PSI one (TRANSVis through a prefix it sees), else a
// ww edge into an SI transaction (NoConflict), else the cycle of so, wr and
// ww edges no arbitration order can follow (EXT).
func (m *Mixed) blameCycle(c *Compatible, cyc []int) Blame {
	k := len(cyc)
	for i, ei := range cyc {
		e := c.Edges[ei]
		if e.Rel != history.RW {
			continue
		}
		l := m.Level[e.From]
		b := Blame{Txn: e.From, Level: l, Missed: e.To, Saw: -1, Key: e.Key}
		switch {
		case l.TotalVis():
			b.Axiom = "TOTALVis"
		case prefixLevel(l):
			b.Axiom = "PREFIX"
		case transVis(l):
			b.Axiom = "TRANSVis"
		default:
			continue
		}
		// What it saw: the edges before it on the cycle that lead into it
		// (for TRANSVis, back through non-prefix transactions to the
		// prefix-level one whose snapshot it inherits).
		for j := 1; j < k; j++ {
			p := c.Edges[cyc[(i-j+k)%k]]
			if p.Rel == history.RW {
				break
			}
			b.Saw = p.From
			if prefixLevel(l) || prefixLevel(m.Level[p.From]) {
				break
			}
			b.Via = append(b.Via, p.From)
		}
		if nv := len(b.Via); nv > 0 && b.Via[nv-1] == b.Saw {
			b.Via = b.Via[:nv-1]
		}
		slices.Reverse(b.Via)
		return b
	}
	for _, ei := range cyc {
		e := c.Edges[ei]
		if e.Rel == history.WW && m.Level[e.To] == history.SI {
			return Blame{Txn: e.To, Level: history.SI, Axiom: "NoConflict", Saw: e.From, Missed: -1, Key: e.Key}
		}
	}
	e := c.Edges[cyc[0]]
	return Blame{Txn: e.To, Level: m.Level[e.To], Axiom: "EXT", Saw: e.From, Missed: -1, Key: -1}
}
