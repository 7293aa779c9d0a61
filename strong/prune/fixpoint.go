// The pruning fixpoint: Prune, its passes over the WW pairs and the WR
// sets, and the known edges a decided constraint adds.

package prune

import (
	"context"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/memlimit"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Stats reports what pruning did. Constraint counts are of uncertain
// constraints: version-order pairs (WW) and read-from sets (WR).
type Stats struct {
	Passes            int
	WWBefore, WWAfter int
	WRBefore, WRAfter int
	// WRCandsBefore and WRCandsAfter count the candidates of all read-from
	// sets.
	WRCandsBefore, WRCandsAfter int
	// KnownBefore and KnownAfter count g.Known.
	KnownBefore, KnownAfter int
	// Nodes is the number of included transactions; States is Nodes for
	// SER and 2·Nodes for SI.
	Nodes, States int
	// ReachBytes is the size of the reachability: the bitset rows, or the
	// chain vectors (when Prune stops before filling them, the bound it
	// asked the budget for).
	ReachBytes int64
	// ReachStrategy is the strategy used (Bitset or Chains), ReachChains
	// the number of chains of the last pass's cover (0 with Bitset).
	ReachStrategy Strategy
	ReachChains   int
}

// Prune mutates g to the width-one fixpoint (cases I–III of VeriStrong §6.1),
// or with Options.Settle to where passes stop paying:
//
//   - I: a WW pair with an infeasible orientation leaves g.WW, and the other
//     orientation joins g.Known with the RW edges it derives from known WR
//     edges of its key, unless known WW edges of the key already order the
//     pair (the known part of each version order is kept as its transitive
//     reduction: see order.go);
//   - II: a read-from candidate whose WR edge, or an RW edge it derives from
//     known WW edges, closes a cycle leaves its set; a set left with one
//     candidate leaves g.WR and that candidate joins g.Known with its RW
//     edges (g.Reads is kept in step);
//   - III: is case I for the RW edges of an orientation.
//
// An option is infeasible iff one of its edges u→v has v ⇝ u in the known
// graph; when the known graph is acyclic no cycle can use two edges of one
// option (they share their target, or their source, or would need a known
// cycle), so edge-by-edge tests are complete.
//
// When g's pairs are pending (BuildOptions.LazyPairs), the first pass lists
// each key's pairs as it reaches the key and keeps in g.WW those it cannot
// decide, so that g.WW ends as it would from listed pairs; when Prune stops
// early the keys not reached stay pending (Graph.ListPairs lists them).
//
// It returns the final reachability (nil with a Conflict or an error), or a
// Conflict when a constraint has no feasible option or the known graph is
// cyclic, or ErrTooLarge (wrapping Fit's error when the budget refused an
// allocation), or the context's error.
func Prune(ctx context.Context, g *hyperpolygraph.Graph, opt Options) (Stats, *Reach, *Conflict, error) {
	p := newPruner(g)
	st := Stats{
		WWBefore:      g.NumPairs(),
		WRBefore:      len(g.WR),
		WRCandsBefore: countCands(g),
		KnownBefore:   len(g.Known),
		Nodes:         len(p.r.txns),
		States:        p.m,
	}
	p.fit = opt.Fit
	if p.fit == nil {
		p.fit = memlimit.Default().Fit
	}
	if err := p.choose(opt, &st); err != nil {
		return st, nil, nil, err
	}
	p.reserveKnown()
	finish := func() {
		st.WWAfter, st.WRAfter, st.WRCandsAfter, st.KnownAfter = g.NumPairs(), len(g.WR), countCands(g), len(g.Known)
		st.ReachChains = p.r.chains
		if p.filled {
			st.ReachBytes = p.r.bytes()
		}
	}
	settled := false
	for {
		if err := ctx.Err(); err != nil {
			finish()
			return st, nil, nil, err
		}
		st.Passes++
		if p.addedWW && reduceKnown {
			if err := p.compact(); err != nil {
				finish()
				return st, nil, nil, err
			}
			p.addedWW = false
		}
		if err := p.buildCSR(); err != nil {
			finish()
			return st, nil, nil, err
		}
		if cyc := p.topoSort(); cyc != nil {
			finish()
			return st, nil, &Conflict{Cycle: cyc}, nil
		}
		if err := p.fill(ctx); err != nil {
			finish()
			return st, nil, nil, err
		}
		if settled {
			// The graph is checked acyclic and its reachability is
			// fresh: what a last pass that decided nothing leaves.
			break
		}
		before := pending(g)
		changed, c, err := p.pass(ctx)
		if err != nil || c != nil {
			finish()
			return st, nil, c, err
		}
		if !changed {
			break
		}
		settled = opt.Settle > 0 && float64(before-pending(g)) < opt.Settle*float64(before)
	}
	p.clipKnown()
	finish()
	return st, &p.r, nil, nil
}

// smallRows is the size of bitset rows under which Auto keeps them.
const smallRows = 4 << 20

// choose picks the strategy (Options.Reach, or for Auto the one that needs
// fewer bytes, so that the other would not fit either, unless the rows are
// small), checks it against MaxBytes and the budget, and allocates the
// bitset rows.
func (p *pruner) choose(opt Options, st *Stats) error {
	nodes := len(p.r.txns)
	p.sessionLinks()
	bits := bitsetBytes(p.m)
	chains := chainBytes(p.m, nodes, p.maxChains)
	s := opt.Reach
	if s == Auto {
		// Small rows are faster: a row is a few words, a query one load
		// (measured on the 1k and 10k bench histories).
		s = Bitset
		if chains < bits && bits > smallRows {
			s = Chains
		}
	}
	try := func(s Strategy) error {
		need, what := bits, fmt.Sprintf("pruning's reachability matrix (%d states)", p.m)
		if s == Chains {
			need, what = chains, fmt.Sprintf("pruning's chain vectors (%d states, at most %d chains)", p.m, p.maxChains)
		}
		st.ReachStrategy, st.ReachBytes = s, need
		if opt.MaxBytes > 0 && need > opt.MaxBytes {
			return fmt.Errorf("%w: %d states need %d bytes, limit %d", ErrTooLarge, p.m, need, opt.MaxBytes)
		}
		if err := p.fit(need, what); err != nil {
			return budgetError{err}
		}
		p.r.strategy = s
		if s == Bitset {
			p.r.words = (p.m + 63) / 64
			p.r.bits = make([]uint64, p.m*p.r.words)
		}
		return nil
	}
	return try(s)
}

// fill computes the reachability of the core with the chosen strategy.
func (p *pruner) fill(ctx context.Context) error {
	if p.r.strategy == Chains {
		return p.fillChains(ctx)
	}
	return p.fillBits(ctx)
}

// pending counts the uncertain constraints of g: its version-order pairs
// and its read-from candidates.
func pending(g *hyperpolygraph.Graph) int { return g.NumPairs() + countCands(g) }

func countCands(g *hyperpolygraph.Graph) int {
	n := 0
	for _, s := range g.WR {
		n += len(s.Cands)
	}
	return n
}

// kt packs a key and a transaction into a map key.
func kt(k history.KeyID, t history.TxnID) uint64 { return hyperpolygraph.KeyTxn(k, t) }

type pruner struct {
	g *hyperpolygraph.Graph
	r Reach
	m int // number of states
	// core holds the state edges that matter for reachability: every
	// state edge of g.Known[:seen] except those found implied by other
	// edges (dropping them keeps reachability, and so cycles, unchanged).
	core []stateEdge
	seen int
	// filled says whether r holds the reachability of core.
	filled bool
	// The core in CSR form: the successors of state u are
	// dst[off[u]:off[u+1]], each made from g.Known[edge[i]].
	off  []int32
	dst  []int32
	edge []int32
	// order is a topological order of the states, rank its inverse.
	order, rank []int32
	// What deciding one key's pairs writes (each passWW worker has its
	// own: parallel.go), and whether this is a worker, which keeps the
	// edges it decides for applyWW.
	keyScratch
	buffered bool
	// wwSucc[kt(x, t)] lists the known WW successors of t on x, kept only
	// for the candidates t of uncertain reads of x (the only ones asked).
	wwSucc map[uint64][]history.TxnID
	// fit is Options.Fit, or the default budget's.
	fit func(need int64, what string) error
	// The chain cover: each node's successor in its session (-1: none),
	// whether it has a predecessor there, the number of nodes without a
	// successor (a bound on the chains), and, while filling, the head of
	// each chain, the chains whose head begins its session, and the vector
	// being filled.
	soNext          []int32
	soPrev          []bool
	maxChains       int
	head, open, vec []int32
	// The known WW (and for compact RW) edges by key, and whether a pass
	// added WW edges since the last compaction.
	kOff, kIdx []int32
	addedWW    bool
	// The keys that gained known WW edges since the last compaction
	// (isDirty by key), or all of them (dirtyAll, until the first).
	dirty    []history.KeyID
	isDirty  []bool
	dirtyAll bool
	// The writer each reader of a key read from, for compact.
	wrOf    []history.TxnID
	wrStamp []int32
	wrGen   int32
	// Scratch of compact.
	gone []bool
	// fixed is the size of the per-transaction indexes newPruner
	// allocated, asked of the budget with the first state graph.
	fixed int64
	// The incremental fill (bitset rows): whether the rows hold the
	// reachability of the previous core, whether this pass's fill was
	// incremental, each state's row changed by it and the words that did
	// (dirtyWords words of bits a state), the previous core by source, a
	// scratch row, and partialRow's marks.
	rowsValid, rowsInc bool
	rowChanged         []bool
	dirtyW             []uint64
	dirtyWords         int
	prevOff, prevDst   []int32
	rowBuf             []uint64
	mark               []int32
	markGen            int32
	// readersChanged says that the last pass resolved read-from sets, so
	// the known readers that WW pairs derive RW edges from changed.
	readersChanged bool
	// skipPairs: this pass's passWW may skip pairs (see pass).
	skipPairs bool
	// addedLast is the number of known edges the last pass added.
	addedLast int
	// Scratch.
	fillBuf, indeg []int32
	stamp          []int32
	drop           []history.TxnID
	keys           []uint64
}

// keyScratch is what deciding the pairs of one key at a time writes:
// the key's known version order, the known readers of its writers'
// versions, the options tested, which pairs were decided, and the WW
// edges decided (wwOut), applied once the pass has decided every key.
type keyScratch struct {
	// The known version order of the key case I is at.
	ord keyOrder
	// The known readers of each writer's version of key rdKey, as linked
	// lists: rdHead[w] (valid when rdStamp[w] == rdGen) indexes rdList and
	// rdNext. Loaded per key from g.Reads.
	rdKey           history.KeyID
	rdGen           int32
	rdHead, rdStamp []int32
	rdNext          []int32
	rdList          []history.TxnID
	opt             []hyperpolygraph.Edge
	// Scratch of decideKey.
	dropPair                      []bool
	byRank, place, count, pairIdx []int32
	rankKeys                      []uint64
	out                           wwOut
}

// wwOut is what a passWW worker decided, in key order: the known edges
// (each WW edge with the RW edges it derives) and the WW edges themselves
// (for wwSucc and the keys to compact), when it is buffered; and, on a
// graph whose pairs are pending, the pairs it left undecided.
type wwOut struct {
	edges []hyperpolygraph.Edge
	ww    []hyperpolygraph.WWPair // A→B on Key
	kept  []hyperpolygraph.WWPair
}

func newPruner(g *hyperpolygraph.Graph) *pruner {
	p := &pruner{g: g, keyScratch: keyScratch{rdKey: -1}, dirtyAll: true}
	p.r.layers = 1
	if g.Level == history.SI {
		p.r.layers = 2
	}
	p.r.node = make([]int32, g.N())
	for t, in := range g.Included {
		p.r.node[t] = -1
		if in {
			p.r.node[t] = int32(len(p.r.txns))
			p.r.txns = append(p.r.txns, history.TxnID(t))
		}
	}
	p.m = len(p.r.txns) * p.r.layers
	p.rdHead = make([]int32, g.N())
	p.rdStamp = make([]int32, g.N())
	p.wwSucc = g.CandidateWWSuccessors()
	// node, rdHead, rdStamp; txns; sessionLinks' four arrays.
	p.fixed = 12*int64(g.N()) + 4*int64(len(p.r.txns)) + 13*int64(len(p.r.txns))
	return p
}

// loadReaders indexes the known readers of key x by writer.
func (p *pruner) loadReaders(x history.KeyID) {
	if x == p.rdKey {
		return
	}
	p.rdKey = x
	p.rdGen++
	p.rdList, p.rdNext = p.rdList[:0], p.rdNext[:0]
	for _, rd := range p.g.Reads[x] {
		w := rd.Writer
		if w < 0 {
			continue
		}
		if p.rdStamp[w] != p.rdGen {
			p.rdStamp[w], p.rdHead[w] = p.rdGen, -1
		}
		p.rdList = append(p.rdList, rd.Reader)
		p.rdNext = append(p.rdNext, p.rdHead[w])
		p.rdHead[w] = int32(len(p.rdList) - 1)
	}
}

// firstReader starts the list of known readers of w's version of the
// loaded key (-1: none).
func (p *pruner) firstReader(w history.TxnID) int32 {
	if p.rdStamp[w] != p.rdGen {
		return -1
	}
	return p.rdHead[w]
}

// wwBad reports whether orientation a→b of a WW pair on x is infeasible,
// testing the WW edge before the RW edges it derives.
func (p *pruner) wwBad(x history.KeyID, a, b history.TxnID) bool {
	if _, _, bad := p.blocked(a, b, false); bad {
		return true
	}
	p.loadReaders(x)
	for i := p.firstReader(a); i >= 0; i = p.rdNext[i] {
		if s := p.rdList[i]; s != b {
			if _, _, bad := p.blocked(s, b, true); bad {
				return true
			}
		}
	}
	return false
}

// wrBad reports whether candidate t of the read of x by s is infeasible.
func (p *pruner) wrBad(x history.KeyID, t, s history.TxnID) bool {
	if _, _, bad := p.blocked(t, s, false); bad {
		return true
	}
	for _, t2 := range p.wwSucc[kt(x, t)] {
		if t2 != s {
			if _, _, bad := p.blocked(s, t2, true); bad {
				return true
			}
		}
	}
	return false
}

// wwOption collects the edges of orientation a→b of a WW pair on key x:
// the WW edge and the RW edges it derives from known reads of a's version.
func (p *pruner) wwOption(x history.KeyID, a, b history.TxnID) []hyperpolygraph.Edge {
	p.opt = append(p.opt[:0], hyperpolygraph.Edge{From: a, To: b, Rel: history.WW, Key: x})
	p.loadReaders(x)
	for i := p.firstReader(a); i >= 0; i = p.rdNext[i] {
		if s := p.rdList[i]; s != b {
			p.opt = append(p.opt, hyperpolygraph.Edge{From: s, To: b, Rel: history.RW, Key: x})
		}
	}
	return p.opt
}

// wrOption collects the edges of candidate t of a read of x by s: the WR
// edge and the RW edges it derives from known WW successors of t.
func (p *pruner) wrOption(x history.KeyID, t, s history.TxnID) []hyperpolygraph.Edge {
	p.opt = append(p.opt[:0], hyperpolygraph.Edge{From: t, To: s, Rel: history.WR, Key: x})
	for _, t2 := range p.wwSucc[kt(x, t)] {
		if t2 != s {
			p.opt = append(p.opt, hyperpolygraph.Edge{From: s, To: t2, Rel: history.RW, Key: x})
		}
	}
	return p.opt
}

// pass tests every constraint once against the reachability of the known
// graph as it was at the start of the pass. New known edges join g.Known
// (and the derivation indexes) at once, so later constraints of the same
// pass already derive RW edges from them; reachability catches up next pass.
func (p *pruner) pass(ctx context.Context) (changed bool, c *Conflict, err error) {
	g := p.g
	// A WW pair's test reads the rows of its writers' states and the known
	// readers of their versions: when neither changed since the last
	// pass, which tested every pair, it cannot decide the pair now.
	p.skipPairs = p.r.strategy == Bitset && p.rowsInc && !p.readersChanged && skipUnchanged
	p.readersChanged = false
	known := len(g.Known)
	defer func() { p.addedLast = len(g.Known) - known }()
	changed, c, err = p.passWW(ctx)
	p.skipPairs = false
	if err != nil || c != nil {
		return changed, c, err
	}

	// Case II. newSet[i] is the new index of set i, or -1 when it became
	// known, with writer[i] its writer.
	if err := p.ask(8*int64(len(g.WR)), "pruning's renumbering of read-from sets"); err != nil {
		return changed, nil, err
	}
	newSet := make([]int32, len(g.WR))
	writer := make([]history.TxnID, len(g.WR))
	n := 0
	resolved := false
	// keepFrom leaves set i and those after it as they are and compacts:
	// the graph stays consistent when the pass stops early.
	keepFrom := func(i int) {
		for j := i; j < len(g.WR); j++ {
			newSet[j] = int32(n)
			g.WR[n] = g.WR[j]
			n++
		}
		p.compactWR(newSet, writer, n, resolved)
	}
	work := 0
	for i := range g.WR {
		s := &g.WR[i]
		// ctx is polled by work (candidates tested), not by sets: a set
		// can have thousands of candidates.
		if work += 1 + len(s.Cands); work >= 1<<12 {
			work = 0
			if err := ctx.Err(); err != nil {
				keepFrom(i) // the sets not reached, minus resolved ones
				return changed, nil, err
			}
		}
		cands := s.Cands[:0]
		p.drop = p.drop[:0]
		for _, t := range s.Cands {
			if p.wrBad(s.Key, t, s.Reader) {
				p.drop = append(p.drop, t)
				continue
			}
			cands = append(cands, t)
		}
		if len(p.drop) > 0 {
			changed = true
		}
		switch len(cands) {
		case 0:
			// Every candidate closes a cycle: keep the set whole for the
			// report and leave the graph consistent.
			s.Cands = append(cands, p.drop...)
			var cycles [][]hyperpolygraph.Edge
			for _, t := range s.Cands {
				cycles = append(cycles, p.optionCycle(p.wrOption(s.Key, t, s.Reader)))
			}
			orig := *s
			orig.Cands = slices.Clone(s.Cands)
			keepFrom(i)
			return changed, &Conflict{Cycle: cycles[0], Options: cycles, WR: &orig}, nil
		case 1:
			if err := p.addWR(s.Key, cands[0], s.Reader); err != nil {
				s.Cands = append(cands, p.drop...)
				keepFrom(i)
				return changed, nil, err
			}
			newSet[i] = -1
			writer[i] = cands[0]
			resolved = true
		default:
			s.Cands = cands
			newSet[i] = int32(n)
			g.WR[n] = *s
			n++
		}
	}
	p.compactWR(newSet, writer, n, resolved)
	p.readersChanged = resolved
	return changed, nil, nil
}

// skipUnchanged lets passWW skip the pairs whose writers' rows did not
// change; tests turn it off to compare with testing every pair.
var skipUnchanged = true

// compactWR truncates g.WR to n sets and renumbers g.Reads.
func (p *pruner) compactWR(newSet []int32, writer []history.TxnID, n int, resolved bool) {
	g := p.g
	clear(g.WR[n:])
	g.WR = g.WR[:n]
	p.rdKey = -1 // g.Reads changes
	if !resolved && n == len(newSet) {
		return
	}
	for k := range g.Reads {
		rs := g.Reads[k]
		for j := range rs {
			if i := rs[j].Set; i >= 0 {
				if ns := newSet[i]; ns >= 0 {
					rs[j].Set = ns
				} else {
					rs[j].Set, rs[j].Writer = -1, writer[i]
				}
			}
		}
	}
}

// addWW makes a→b a known WW edge on x, with the RW edges it derives;
// a passWW worker (buffered) keeps them in p.out for applyWW instead.
func (p *pruner) addWW(x history.KeyID, a, b history.TxnID) (err error) {
	opt := p.wwOption(x, a, b)
	if p.buffered {
		// Doubling: the buffer is dropped after the pass, and growing by
		// a quarter would leave four times its size behind as garbage.
		if e := p.out.edges; cap(e)-len(e) < len(opt) {
			if p.out.edges, err = growFit(p, e, max(len(opt), len(e)), "pruning's decided version orders"); err != nil {
				return err
			}
		}
		if w := p.out.ww; cap(w) == len(w) {
			if p.out.ww, err = growFit(p, w, max(1, len(w)), "pruning's decided version orders"); err != nil {
				return err
			}
		}
		p.out.edges = append(p.out.edges, opt...)
		p.out.ww = append(p.out.ww, hyperpolygraph.WWPair{Key: x, A: a, B: b})
		return nil
	}
	if err := p.growKnown(len(opt)); err != nil {
		return err
	}
	p.g.Known = append(p.g.Known, opt...)
	p.noteWW(x, a, b)
	return nil
}

// noteWW records a new known WW edge a→b on x for case II and compact.
func (p *pruner) noteWW(x history.KeyID, a, b history.TxnID) {
	if l, ok := p.wwSucc[kt(x, a)]; ok {
		p.wwSucc[kt(x, a)] = append(l, b)
	}
	p.addedWW = true
	p.markDirty(x)
}

// applyWW makes the edges a worker decided (out) known, all or, when the
// budget refuses the room, none: their pairs then go back to g.WW
// undecided, so the graph stays what the pass found.
func (p *pruner) applyWW(out *wwOut) error {
	defer func() { out.edges, out.ww = out.edges[:0], out.ww[:0] }()
	if len(out.ww) == 0 {
		return nil
	}
	if err := p.growKnown(len(out.edges)); err != nil {
		for _, e := range out.ww {
			p.g.WW = append(p.g.WW, hyperpolygraph.WWPair{Key: e.Key, A: min(e.A, e.B), B: max(e.A, e.B)})
		}
		return err
	}
	p.g.Known = append(p.g.Known, out.edges...)
	for _, e := range out.ww {
		p.noteWW(e.Key, e.A, e.B)
	}
	return nil
}

// addWR makes t→s a known WR edge on x, with the RW edges it derives.
func (p *pruner) addWR(x history.KeyID, t, s history.TxnID) error {
	opt := p.wrOption(x, t, s)
	if err := p.growKnown(len(opt)); err != nil {
		return err
	}
	p.g.Known = append(p.g.Known, opt...)
	// The reader joins g.Reads (and so the reader index) when the pass
	// compacts the sets; no WW pair is tested before that.
	return nil
}
