package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// Mixed histories (MixIso, Definition 3.5; docs/mixed.md) are decided, for
// one version order and read-from choice, on a graph of states. Every
// transaction t has a snapshot s(t), a commit c(t) and, when its level does
// not see a prefix of the arbitration order, a join σ(t):
//
//   - c(t) is t's place in the arbitration order AR;
//   - a transaction at PC or SI ("prefix" levels) sees exactly the commits
//     before s(t); at SER s(t) is c(t);
//   - a transaction at RC, RA, CC or PSI sees a least set: its direct
//     predecessors (so, wr; for PSI also every earlier writer of a key it
//     writes), closed, for CC and PSI, under what those see. σ(t) follows
//     the snapshots of the prefix-level transactions that closure reaches,
//     since t sees their whole prefixes too. κ(x, a) joins what the writers
//     of x up to a see, for PSI writers of x.
//
// Arcs: s(t)→c(t); c(a)→s(t) for a →so|wr t; c(a)→c(b) for a →ww b, and
// c(a)→s(b) when b is at SI (NoConflict); s(t)→c(b) for t →rw b when t is at
// a prefix level; and, for a non-prefix u, J(a)→σ(u) for each direct
// predecessor a (J(a) = s(a) at prefix levels, σ(a) otherwise), with
// σ(t)→c(b) for t →rw b when t is at CC or PSI. The history is consistent
// for this choice iff the graph is acyclic and no non-prefix transaction
// sees a writer that overwrote a version it read (checked apart, since
// seeing is not an order).

// Mixed holds what the per-model test needs of a mixed-level graph: each
// transaction's level and the read events of its RC transactions. With an
// optional part (g.Opt), each model's graph gets its own Mixed (For).
type Mixed struct {
	G *Graph
	// Level is each transaction's level (T⊥ counts as SER).
	Level []history.Level
	// rcEvents lists each RC transaction's read events in program order.
	rcEvents map[history.TxnID][]rcEvent
	// refs lists them as NewMixed made them, for For.
	refs map[history.TxnID][]rcRef
	// kBase[x] numbers the κ states of key x (κ(x, Writers[x][i]) is
	// kBase[x]+i), or is -1 when no PSI transaction writes x.
	kBase []int32
	nk    int32
}

// rcEvent is a read event of an RC transaction: g.Reads[key][read].
type rcEvent struct {
	key  history.KeyID
	read int32
}

// rcRef is a read event of the graph NewMixed prepared: g.Reads[key][read]
// for a certain reader, g.Opt.WR[opt] for an optional one (read -1).
type rcRef struct {
	key       history.KeyID
	read, opt int32
}

// Blame says whose axiom a forbidden structure breaks, in MixIso's terms.
type Blame struct {
	// Txn ran at Level and breaks Axiom (EXT, SESSION, TRANSVis, PREFIX,
	// NoConflict, TOTALVis; INT for its own reads).
	Txn   history.TxnID
	Level history.Level
	Axiom string
	// Saw is a transaction Txn had to see (-1 if none), Missed one whose
	// write Txn read past (-1 if none); Via lists the transactions through
	// which Txn had to see Saw.
	Saw, Missed history.TxnID
	Via         []history.TxnID
	// Key is the key whose older version Txn read (-1 if none).
	Key history.KeyID
}

// prefixLevel: MixIso's PREFIX (or TOTALVis) holds at l (the level table).
func prefixLevel(l history.Level) bool { return l.SeesPrefix() }

// transVis: MixIso's TRANSVis is l's own axiom, not implied by PREFIX.
func transVis(l history.Level) bool { return l.TransitiveVis() && !l.SeesPrefix() }

// NewMixed prepares g, built for level history.Mixed (and split with
// SplitOptional when it has optional transactions), for the per-model
// test with level[t] the level of each transaction. It adds to g the read
// events of RC transactions beyond their first read of a key (read
// committed lets a re-read return another version): those of optional
// readers to g.Opt.WR, where a read no transaction wrote keeps its reader
// out. It returns a Violation for such a read of a certain reader.
func NewMixed(g *Graph, level []history.Level) (*Mixed, *Violation) {
	m := &Mixed{G: g, Level: slices.Clone(level), refs: map[history.TxnID][]rcRef{}}
	m.Level[history.InitTxn] = history.SER
	h := g.H
	ix := h.Index()
	opt := g.Opt
	isOpt := func(t history.TxnID) bool { return opt != nil && opt.Is[t] }
	first := map[uint64]rcRef{} // KeyTxn(key, RC reader) → its first read
	for k, rs := range g.Reads {
		for i, r := range rs {
			if m.Level[r.Reader] == history.RC {
				first[KeyTxn(history.KeyID(k), r.Reader)] = rcRef{history.KeyID(k), int32(i), -1}
			}
		}
	}
	if opt != nil {
		for i, s := range opt.WR {
			if m.Level[s.Reader] == history.RC {
				first[KeyTxn(s.Key, s.Reader)] = rcRef{s.Key, -1, int32(i)}
			}
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		if !g.Included[t] || m.Level[t] != history.RC {
			continue
		}
		tid := history.TxnID(t)
		wrote := map[history.KeyID]bool{}
		seen := map[history.KeyID]bool{}
		var evs []rcRef
		for i, op := range h.Txns[t].Ops {
			k := op.Key
			switch {
			case op.Kind.IsWrite():
				wrote[k] = true
				continue
			case !op.Kind.IsRead() || wrote[k]:
				continue // a read after an own write is INT's business
			case !seen[k]:
				seen[k] = true
				if r, ok := first[KeyTxn(k, tid)]; ok {
					evs = append(evs, r)
				}
				continue
			}
			var cands []history.TxnID
			for _, w := range ix.Writers(k, op.Value) {
				if w != tid && g.Included[w] {
					cands = append(cands, w)
				}
			}
			if isOpt(tid) {
				evs = append(evs, rcRef{k, -1, int32(len(opt.WR))})
				opt.WR = append(opt.WR, WRSet{Reader: tid, Key: k, Value: op.Value, Cands: cands})
				continue
			}
			rd := Read{Reader: tid, Writer: -1, Set: -1}
			switch len(cands) {
			case 0:
				return nil, &Violation{Reader: tid, Read: history.ExtRead{Key: k, Value: op.Value, Op: int32(i)}}
			case 1:
				rd.Writer = cands[0]
				g.Known = append(g.Known, Edge{From: cands[0], To: tid, Rel: WR, Key: k})
			default:
				rd.Set = int32(len(g.WR))
				g.WR = append(g.WR, WRSet{Reader: tid, Key: k, Value: op.Value, Cands: cands})
			}
			evs = append(evs, rcRef{k, int32(len(g.Reads[k])), -1})
			g.Reads[k] = append(g.Reads[k], rd)
		}
		m.refs[tid] = evs
	}
	m.events(nil)
	return m, nil
}

// For returns the Mixed of g, the graph of one model (Graph.Taking of the
// graph m was prepared on): its included transactions, their version
// chains and RC read events. Without an optional part it is m.
func (m *Mixed) For(g *Graph) *Mixed {
	if g == m.G {
		return m
	}
	// Taking appends the reads of g.Opt.WR whose reader it takes, in order.
	opt := m.G.Opt
	optRead := make([]int32, len(opt.WR))
	n := map[history.KeyID]int32{}
	for i, s := range opt.WR {
		optRead[i] = -1
		if g.Included[s.Reader] {
			optRead[i] = int32(len(m.G.Reads[s.Key])) + n[s.Key]
			n[s.Key]++
		}
	}
	v := &Mixed{G: g, Level: m.Level, refs: m.refs}
	v.events(optRead)
	return v
}

// events sets rcEvents and the κ numbering for m.G; optRead[i] is where
// the read of m.G.Opt.WR[i] is in m.G.Reads (nil: m.G is the prepared
// graph, and its optional readers have no events).
func (m *Mixed) events(optRead []int32) {
	m.rcEvents = make(map[history.TxnID][]rcEvent, len(m.refs))
	for t, refs := range m.refs {
		if !m.G.Included[t] || optRead == nil && m.G.Opt != nil && m.G.Opt.Is[t] {
			continue
		}
		evs := make([]rcEvent, len(refs))
		for i, r := range refs {
			if r.opt >= 0 {
				r.read = optRead[r.opt]
			}
			evs[i] = rcEvent{r.key, r.read}
		}
		m.rcEvents[t] = evs
	}
	m.kBase, m.nk = make([]int32, len(m.G.Writers)), 0
	for k, ws := range m.G.Writers {
		m.kBase[k] = -1
		for _, w := range ws {
			if m.Level[w] == history.PSI {
				m.kBase[k] = m.nk
				m.nk += int32(len(ws))
				break
			}
		}
	}
}

// Node numbers of the state graph: s(t) = 3t, c(t) = 3t+1, σ(t) = 3t+2,
// then the κ states.
func (m *Mixed) snap(t history.TxnID) int32 {
	if m.Level[t] == history.SER {
		return 3*int32(t) + 1
	}
	return 3 * int32(t)
}

func commit(t history.TxnID) int32 { return 3*int32(t) + 1 }
func join(t history.TxnID) int32   { return 3*int32(t) + 2 }

// j is J(a): what a transaction that sees a sees of a's own view.
func (m *Mixed) j(a history.TxnID) int32 {
	if prefixLevel(m.Level[a]) {
		return m.snap(a)
	}
	return join(a)
}

func (m *Mixed) kappa(k history.KeyID, a history.TxnID) int32 {
	i, _ := slices.BinarySearch(m.G.Writers[k], a)
	return 3*int32(m.G.N()) + m.kBase[k] + int32(i)
}

// stateCSR is the state graph of one compatible graph, every edge in: the
// arcs of state v are arcs[start[v]:start[v+1]], each (target, edge index;
// -1 for arcs no edge stands for).
type stateCSR struct {
	start []int32
	arcs  [][2]int32
}

// stateArcs builds the state graph of c once; each search takes the arcs of
// the edges it has not set aside (adj).
func (m *Mixed) stateArcs(c *Compatible) stateCSR {
	n := m.G.N()
	nn := 3*n + int(m.nk)
	s := stateCSR{start: make([]int32, nn+1)}
	emit := func(add func(u, v, e int32)) {
		for t := range n {
			tid := history.TxnID(t)
			if m.G.Included[t] && m.Level[t] != history.SER {
				add(m.snap(tid), commit(tid), -1)
			}
		}
		for k, ws := range m.G.Writers {
			if m.kBase[k] >= 0 {
				for _, a := range ws {
					add(m.j(a), m.kappa(history.KeyID(k), a), -1)
				}
			}
		}
		for i, e := range c.Edges {
			if false {
				continue
			}
			ei := int32(i)
			a, b := e.From, e.To
			switch e.Rel {
			case SO, WR, RT:
				add(commit(a), m.snap(b), ei)
				if !prefixLevel(m.Level[b]) {
					add(m.j(a), join(b), ei)
				}
			case WW:
				add(commit(a), commit(b), ei)
				if m.Level[b] == history.SI {
					add(commit(a), m.snap(b), ei)
				}
				if m.kBase[e.Key] >= 0 {
					add(m.kappa(e.Key, a), m.kappa(e.Key, b), ei)
					if m.Level[b] == history.PSI {
						add(m.kappa(e.Key, a), join(b), ei)
					}
				}
			case RW:
				switch l := m.Level[a]; {
				case prefixLevel(l):
					add(m.snap(a), commit(b), ei)
				case transVis(l):
					add(join(a), commit(b), ei)
				}
			}
		}
	}
	emit(func(u, _, _ int32) { s.start[u+1]++ })
	for v := 1; v <= nn; v++ {
		s.start[v] += s.start[v-1]
	}
	s.arcs = make([][2]int32, s.start[nn])
	fill := slices.Clone(s.start[:nn])
	emit(func(u, v, e int32) { s.arcs[fill[u]] = [2]int32{v, e}; fill[u]++ })
	return s
}

// adj returns the state graph's adjacency without the arcs of disabled
// edges (nil: none disabled).
func (s stateCSR) adj(disabled []bool) [][][2]int32 {
	nn := len(s.start) - 1
	adj := make([][][2]int32, nn)
	if !slices.Contains(disabled, true) {
		for v := range nn {
			adj[v] = s.arcs[s.start[v]:s.start[v+1]]
		}
		return adj
	}
	backing := make([][2]int32, 0, len(s.arcs))
	for v := range nn {
		lo := len(backing)
		for _, a := range s.arcs[s.start[v]:s.start[v+1]] {
			if a[1] < 0 || !disabled[a[1]] {
				backing = append(backing, a)
			}
		}
		adj[v] = backing[lo:len(backing):len(backing)]
	}
	return adj
}

// FindMixedCycles returns up to max forbidden structures of c, each as the
// indices into c.Edges of a dependency cycle, with whose axiom each breaks;
// none means c is consistent. As in FindCycles, a structure's uncertain
// edges are set aside before the next search.
func (c *Compatible) FindMixedCycles(m *Mixed, max int) ([][]int, []Blame) {
	var blames []Blame
	csr := m.stateArcs(c)
	cycles := c.findMany(max, func(disabled []bool) []int {
		cyc, b := m.find(c, csr, disabled)
		if cyc != nil {
			blames = append(blames, b)
		}
		return cyc
	})
	return cycles, blames
}

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
		if e.Rel == WW {
			mm.next[KeyTxn(e.Key, e.From)] = int32(i)
			prev[KeyTxn(e.Key, e.To)] = true
		}
		if disabled[i] {
			continue
		}
		mm.out[e.From] = append(mm.out[e.From], int32(i))
		switch e.Rel {
		case SO, WR, RT:
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
					if e.Rel != RW {
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
		switch m.Level[t] {
		case history.RA:
			// The writers it read from.
			for _, ei := range mm.out[t] {
				rw := c.Edges[ei]
				if rw.Rel != RW {
					continue
				}
				for _, wi := range mm.in[t] {
					if wr := c.Edges[wi]; wr.Rel == WR && (wr.From == rw.To || mm.after(rw.Key, wr.From, rw.To)) {
						cyc := append([]int{int(ei)}, mm.chain(rw.Key, rw.To, wr.From)...)
						return append(cyc, int(wi)), Blame{Txn: tid, Level: history.RA, Axiom: "EXT", Saw: wr.From, Missed: rw.To, Key: rw.Key}
					}
				}
			}
		case history.RC:
			if cyc, b := mm.rc(tid); cyc != nil {
				return cyc, b
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
			if f := mm.c.Edges[ei]; f.Rel == SO {
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
// follow, in program order, a read from a writer of x later than w.
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
			if e.Rel != WR || e.Key != ev.key {
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
			if t2 == w || !mm.after(ev.key, t2, w) {
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
				if e := c.Edges[ei]; e.Rel == RW && e.Key == ev.key && e.To == b && c.Prov[ei].WR == set[i] {
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
			return cyc, Blame{Txn: t, Level: history.RC, Axiom: "EXT", Saw: t2, Missed: b, Key: ev.key}
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
		if rw.Rel != RW || mm.ar[rw.To] >= mm.ar[t] {
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
				case SO, WR, RT:
					visit(e.To, ei)
				case WW:
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
			for e.Rel == WW {
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
			case SO:
				b.Axiom = "SESSION"
			case WR:
				b.Axiom = "EXT"
			case WW:
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
		if e.Rel != RW {
			continue
		}
		l := m.Level[e.From]
		b := Blame{Txn: e.From, Level: l, Missed: e.To, Saw: -1, Key: e.Key}
		switch {
		case l == history.SER:
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
			if p.Rel == RW {
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
		if e.Rel == WW && m.Level[e.To] == history.SI {
			return Blame{Txn: e.To, Level: history.SI, Axiom: "NoConflict", Saw: e.From, Missed: -1, Key: e.Key}
		}
	}
	e := c.Edges[cyc[0]]
	return Blame{Txn: e.To, Level: m.Level[e.To], Axiom: "EXT", Saw: e.From, Missed: -1, Key: -1}
}

// MixedOrder returns an arbitration order of the included transactions
// and, for each, how many of the order (from its start) it sees when its
// level sees a prefix (SER: all before it), else -1. ok is false if the
// state graph has a cycle.
func (c *Compatible) MixedOrder(m *Mixed) (order []history.TxnID, snap []int, ok bool) {
	adj := m.stateArcs(c).adj(nil)
	queue := topoOrder(adj)
	n := int32(c.G.N())
	commits := 0
	snapOf := make([]int, n)
	for _, v := range queue {
		if v < 3*n {
			t := history.TxnID(v / 3)
			if c.G.Included[t] {
				switch {
				case v%3 == 0:
					snapOf[t] = commits
				case v%3 == 1:
					s := -1
					switch {
					case m.Level[t] == history.SER:
						s = commits
					case prefixLevel(m.Level[t]):
						s = snapOf[t]
					}
					order = append(order, t)
					snap = append(snap, s)
					commits++
				}
			}
		}
	}
	return order, snap, len(queue) == len(adj)
}

// PruneMixed resolves, for any mix of levels, the version-order pairs and
// read-from choices that the known edges already decide. Session order,
// read-from and version order lie inside the arbitration order at every
// level (SESSION and EXT put so and wr inside VIS ⊆ AR, and an RC
// transaction's commit follows its session and its writers too), and the
// version order of a key is AR on its writers: so a writer that reaches
// another through known so, wr and ww edges comes first, and a read cannot
// have been written by a transaction its reader reaches. Unlike prune, it
// never uses rw edges, which some levels let go backwards in AR. It
// repeats until nothing changes and returns how many pairs and reads it
// resolved; a cyclic known graph is left to the search.
func PruneMixed(g *Graph) (pairs, reads int) {
	h := g.H
	for {
		reach, ok := g.knownReach()
		if !ok {
			return pairs, reads
		}
		before := func(a, b history.TxnID) bool { // a reaches b
			if a == history.InitTxn {
				return true
			}
			if b == history.InitTxn {
				return false
			}
			return reach[b][h.Txns[a].Session] >= h.Txns[a].Index
		}
		changed := false
		keep := g.WW[:0]
		for _, p := range g.WW {
			switch {
			case before(p.B, p.A):
				g.Known = append(g.Known, Edge{From: p.B, To: p.A, Rel: WW, Key: p.Key})
			case before(p.A, p.B):
				g.Known = append(g.Known, Edge{From: p.A, To: p.B, Rel: WW, Key: p.Key})
			default:
				keep = append(keep, p)
				continue
			}
			pairs++
			changed = true
		}
		g.WW = keep
		// Read-from sets: drop the candidates the reader reaches; one left
		// becomes a known read.
		newIdx := make([]int32, len(g.WR))
		sets := g.WR[:0]
		for i, s := range g.WR {
			cands := s.Cands[:0]
			for _, w := range s.Cands {
				if !before(s.Reader, w) {
					cands = append(cands, w)
				}
			}
			if len(cands) == 1 {
				g.Known = append(g.Known, Edge{From: cands[0], To: s.Reader, Rel: WR, Key: s.Key})
				newIdx[i] = -1 - int32(cands[0]) // resolved to this writer
				reads++
				changed = true
				continue
			}
			if len(cands) == 0 {
				cands = s.Cands[:len(s.Cands):len(s.Cands)] // no writer fits: the search says so
			}
			s.Cands = cands
			newIdx[i] = int32(len(sets))
			sets = append(sets, s)
		}
		g.WR = sets
		for k := range g.Reads {
			for j := range g.Reads[k] {
				r := &g.Reads[k][j]
				if r.Set < 0 {
					continue
				}
				if ni := newIdx[r.Set]; ni >= 0 {
					r.Set = ni
				} else {
					r.Set, r.Writer = -1, history.TxnID(-1-ni)
				}
			}
		}
		if !changed {
			return pairs, reads
		}
	}
}

// knownReach returns, for each included transaction t, reach[t][s]: the
// highest session index in session s of a transaction that reaches t
// through known so, wr and ww edges (-1 if none; T⊥ left out). ok is false
// if those edges have a cycle.
func (g *Graph) knownReach() (reach [][]int32, ok bool) {
	h := g.H
	n, ns := g.N(), len(h.Sessions)
	succ := make([][]history.TxnID, n)
	indeg := make([]int32, n)
	for _, e := range g.Known {
		if (e.Rel == SO || e.Rel == WR || e.Rel == WW) && e.From != history.InitTxn {
			succ[e.From] = append(succ[e.From], e.To)
			indeg[e.To]++
		}
	}
	reach = make([][]int32, n)
	flat := make([]int32, n*ns)
	for i := range flat {
		flat[i] = -1
	}
	var queue []history.TxnID
	total := 0
	for t := 1; t < n; t++ {
		if g.Included[t] {
			reach[t] = flat[t*ns : (t+1)*ns]
			total++
			if indeg[t] == 0 {
				queue = append(queue, history.TxnID(t))
			}
		}
	}
	for k := 0; k < len(queue); k++ {
		t := queue[k]
		own := reach[t]
		for _, u := range succ[t] {
			ru := reach[u]
			for s, v := range own {
				ru[s] = max(ru[s], v)
			}
			ru[h.Txns[t].Session] = max(ru[h.Txns[t].Session], h.Txns[t].Index)
			if indeg[u]--; indeg[u] == 0 {
				queue = append(queue, u)
			}
		}
	}
	return reach, len(queue) == total
}
