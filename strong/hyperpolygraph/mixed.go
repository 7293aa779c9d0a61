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

// rcEvent is a read event of an RC transaction: g.Reads[key][read], at
// program point at (history.ReadPoint: a predicate read's rows share one).
type rcEvent struct {
	key      history.KeyID
	read, at int32
}

// rcRef is a read event of the graph NewMixed prepared: g.Reads[key][read]
// for a certain reader, g.Opt.WR[opt] for an optional one (read -1).
type rcRef struct {
	key           history.KeyID
	read, opt, at int32
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
// events of transactions whose reads are apart (RC, RR: the level table's
// ReadsApart) beyond their first read of a key (such a re-read may return
// another version): those of optional readers to g.Opt.WR, where a read
// no transaction wrote keeps its reader out. It marks Pred the reads of
// rows a predicate read did not return, of transactions at a level whose
// predicate anti-dependencies are free (RR). It returns a Violation for a
// re-read no transaction wrote, of a certain reader.
func NewMixed(g *Graph, level []history.Level) (*Mixed, *Violation) {
	m := &Mixed{G: g, Level: slices.Clone(level), refs: map[history.TxnID][]rcRef{}}
	m.Level[history.InitTxn] = history.SER
	h := g.H
	ix := h.Index()
	opt := g.Opt
	isOpt := func(t history.TxnID) bool { return opt != nil && opt.Is[t] }
	first := map[uint64]rcRef{} // KeyTxn(key, reader whose reads are apart) → its first read
	for k, rs := range g.Reads {
		for i, r := range rs {
			if m.Level[r.Reader].ReadsApart() {
				first[KeyTxn(history.KeyID(k), r.Reader)] = rcRef{history.KeyID(k), int32(i), -1, 0}
			}
		}
	}
	if opt != nil {
		for i, s := range opt.WR {
			if m.Level[s.Reader].ReadsApart() {
				first[KeyTxn(s.Key, s.Reader)] = rcRef{s.Key, -1, int32(i), 0}
			}
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		if !g.Included[t] || !m.Level[t].ReadsApart() {
			continue
		}
		tid := history.TxnID(t)
		predFree := m.Level[t].PredicateRWFree()
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
					r.at = h.ReadPoint(tid, int32(i))
					evs = append(evs, r)
					if predFree && h.Unreturned(op) {
						if r.read >= 0 {
							g.Reads[k][r.read].Pred = true
						} else {
							opt.WR[r.opt].Pred = true
						}
					}
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
				evs = append(evs, rcRef{k, -1, int32(len(opt.WR)), h.ReadPoint(tid, int32(i))})
				opt.WR = append(opt.WR, WRSet{Reader: tid, Key: k, Value: op.Value, Cands: cands, Pred: predFree && h.Unreturned(op)})
				continue
			}
			rd := Read{Reader: tid, Writer: -1, Set: -1, Pred: predFree && h.Unreturned(op)}
			switch len(cands) {
			case 0:
				return nil, &Violation{Reader: tid, Read: history.ExtRead{Key: k, Value: op.Value, Op: int32(i)}}
			case 1:
				rd.Writer = cands[0]
				g.Known = append(g.Known, Edge{From: cands[0], To: tid, Rel: history.WR, Key: k})
			default:
				rd.Set = int32(len(g.WR))
				g.WR = append(g.WR, WRSet{Reader: tid, Key: k, Value: op.Value, Cands: cands})
			}
			evs = append(evs, rcRef{k, int32(len(g.Reads[k])), -1, h.ReadPoint(tid, int32(i))})
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
			evs[i] = rcEvent{r.key, r.read, r.at}
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
	if m.Level[t].TotalVis() {
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
			if m.G.Included[t] && !m.Level[t].TotalVis() {
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
			case history.SO, history.WR, history.RT:
				add(commit(a), m.snap(b), ei)
				if !prefixLevel(m.Level[b]) {
					add(m.j(a), join(b), ei)
				}
			case history.WW:
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
			case history.RW:
				switch l := m.Level[a]; {
				case l.PredicateRWFree() && c.IsPred(i):
					// A predicate anti-dependency: it may point backwards.
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
					case m.Level[t].TotalVis():
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
