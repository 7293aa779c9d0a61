// The known part of each key's version order, kept as its transitive
// reduction: the reachability among one key's writers that case I asks
// before it adds a WW edge, and the compaction that drops, between
// passes, the known WW edges later ones made redundant and the RW edges
// derived from them.
//
// Why a reduced order loses nothing. Let the known WW(x) edges be any set
// whose transitive closure is the known version order of x, and let the
// known RW edges on x be r→c for each known reader r of a version a and
// each direct known successor c of a (c ≠ r). A full edge a→b of the
// closure is a path a→c1→…→b of direct edges; a full RW edge r→b, r a
// reader of a, is r→c1 followed by c1→…→b (or, when r = c1, the path from
// r itself). So for SER every full edge is a path of the reduced graph,
// and the two graphs, one a subgraph of the other, reach the same nodes.
// In SI's doubled graph a WW edge a→b is a0→b1 and a1→b1, and its path
// of direct edges gives the same arcs, state 1 to state 1; a full RW edge
// r→b is r1→b0, whose replacement r1→c1_0→c2_1→…→b1 ends in b1, not b0.
// b1 has every successor of b0 (each arc out of b0 belongs to a non-RW
// edge, which leaves b1 too), so a path through b0 goes through b1
// instead, and only "state 0 exactly" can differ: a state reaches a node's
// state 1, or the node in either state, in one graph iff in the other.
// Those are the only questions pruning and encoding ask of a target state
// 0 (Reach.StateReaches, and blocked, which asks a state 1 or either), and
// a cycle, passing through a state 0 only on its way to a non-RW arc, is
// kept. TestReducedKnownSameReach checks this on random hyper-polygraphs.

package prune

import (
	"cmp"
	"context"
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// wwByKey groups the indexes of the known WW edges (and, with rw, the RW
// edges) by key, in CSR form: key x's are idx[off[x]:off[x+1]]. Keys past
// those of the graph's writers are counted too.
func wwByKey(known []hyperpolygraph.Edge, keys int, rw bool, off, idx []int32) ([]int32, []int32) {
	want := func(e hyperpolygraph.Edge) bool {
		return e.Key >= 0 && (e.Rel == history.WW || (rw && e.Rel == history.RW))
	}
	n := 0
	for _, e := range known {
		if want(e) {
			keys = max(keys, int(e.Key)+1)
			n++
		}
	}
	off = fitLen(off, keys+1)
	clear(off)
	for _, e := range known {
		if want(e) {
			off[e.Key+1]++
		}
	}
	for i := 1; i <= keys; i++ {
		off[i] += off[i-1]
	}
	idx = fitLen(idx, n)
	fill := make([]int32, keys)
	copy(fill, off[:keys])
	for i, e := range known {
		if want(e) {
			idx[fill[e.Key]] = int32(i)
			fill[e.Key]++
		}
	}
	return off, idx
}

// reduceKnown switches the reduced version order on; tests turn it off to
// compare with the full one.
var reduceKnown = true

// compactDirty limits compaction to the keys that gained WW edges since
// the last one; tests turn it off to compare with compacting every key.
var compactDirty = true

// markDirty records that key x gained a known WW edge, for compact.
func (p *pruner) markDirty(x history.KeyID) {
	if int(x) >= len(p.isDirty) {
		p.isDirty = append(p.isDirty, make([]bool, int(x)+1-len(p.isDirty))...)
	}
	if !p.isDirty[x] {
		p.isDirty[x] = true
		p.dirty = append(p.dirty, x)
	}
}

// passWW is cases I and III of a pass, key by key. A pair that known
// WW(x) edges already order (those this pass added included) leaves
// g.WW and adds nothing. The other pairs are tested as before, those of
// writers close in the topological order of the known graph first: when
// the version order follows that order, the edges between neighbours come
// first and imply the rest, so a key of k writers adds about k edges,
// not k²/2. The pairs kept stay in their order.
//
// On a graph whose pairs are pending (the first pass of a graph built
// with LazyPairs) it lists each key's pairs in scratch, decides them,
// and lists in g.WW only those it cannot decide, so the pairs of one key
// at a time are held, not those of all. On a stop the keys not reached
// stay pending.
func (p *pruner) passWW(ctx context.Context) (changed bool, c *Conflict, err error) {
	g := p.g
	lazy := g.Pending && len(g.WW) == 0
	if !lazy {
		// A graph a stopped pruning left partly listed is listed whole:
		// its listed pairs must be tested in this pass too.
		g.ListPairs()
		if !slices.IsSortedFunc(g.WW, func(a, b hyperpolygraph.WWPair) int { return cmp.Compare(a.Key, b.Key) }) {
			// Build lists pairs key by key; a graph made otherwise is grouped.
			slices.SortStableFunc(g.WW, func(a, b hyperpolygraph.WWPair) int { return cmp.Compare(a.Key, b.Key) })
		}
	}
	if err := p.indexWW(false); err != nil {
		return false, nil, err
	}
	tasks := p.keyTasks(lazy)
	return p.decideTasks(ctx, tasks, lazy)
}

// decideKey is cases I and III for the pairs of key x, marking in
// p.dropPair those it decides. It stops at a pair both of whose
// orientations are infeasible (the Conflict), or when ctx is done or the
// budget refuses a known edge; the pairs it has not reached stay unmarked.
func (p *pruner) decideKey(ctx context.Context, x history.KeyID, group []hyperpolygraph.WWPair, tested *int) (changed bool, c *Conflict, err error) {
	p.loadOrder(x, group)
	p.dropPair = fitLen(p.dropPair, len(group))
	clear(p.dropPair)
	for _, i := range p.pairOrder(group) {
		drop, ch, c, err := p.decidePair(ctx, x, group[i], tested)
		p.dropPair[i] = drop
		changed = changed || ch
		if err != nil || c != nil {
			return changed, c, err
		}
	}
	return changed, nil, nil
}

// decideAllPairs is decideKey for every pair of key x's writers but T⊥,
// none listed: it takes them in pairOrder's order straight from the
// writers' ranks and appends those it does not decide to p.out.kept in
// Build's order (KeyPairs), so that it ends as listing the pairs and
// deciding them would, but holds only the undecided ones. On a stop the
// pairs not reached are kept.
func (p *pruner) decideAllPairs(ctx context.Context, x history.KeyID, tested *int) (changed bool, c *Conflict, err error) {
	o := &p.ord
	ws := p.g.Writers[x]
	if len(ws) > 0 && ws[0] == history.InitTxn {
		ws = ws[1:]
	}
	o.begin(x, p.g.N())
	for _, w := range ws {
		o.local(w)
	}
	p.loadKnownOrder(x)
	byRank := p.byPlace()
	from := len(p.out.kept)
	k := len(byRank)
	pair := func(i, j int32) hyperpolygraph.WWPair {
		a, b := o.ws[byRank[i]], o.ws[byRank[j]]
		return hyperpolygraph.WWPair{Key: x, A: min(a, b), B: max(a, b)}
	}
	// After a stop, the pairs not reached stay undecided.
	stopped := false
	for d := int32(1); d < int32(k); d++ {
		for i := int32(0); i+d < int32(k); i++ {
			if o.ws[byRank[i]] == history.InitTxn || o.ws[byRank[i+d]] == history.InitTxn {
				continue // T⊥ orders its writes
			}
			pr := pair(i, i+d)
			if stopped {
				p.out.kept = append(p.out.kept, pr)
				continue
			}
			drop, ch, pc, perr := p.decidePair(ctx, x, pr, tested)
			changed = changed || ch
			if !drop {
				p.out.kept = append(p.out.kept, pr)
			}
			if perr != nil || pc != nil {
				stopped, c, err = true, pc, perr
			}
		}
		if !stopped && o.chained(byRank) {
			// Every further pair is ordered through the chain: at 1M
			// transactions a key's 200 writers have 20,000 pairs, and
			// visiting each one only to find it known costs more than
			// deciding the chain did.
			break
		}
	}
	sortPairs(p.out.kept[from:])
	return changed, c, err
}

// sortPairs puts one key's pairs in Build's order: by first writer, then
// second.
func sortPairs(prs []hyperpolygraph.WWPair) {
	slices.SortFunc(prs, func(a, b hyperpolygraph.WWPair) int {
		if c := cmp.Compare(a.A, b.A); c != 0 {
			return c
		}
		return cmp.Compare(a.B, b.B)
	})
}

// decidePair is cases I and III for one pair of key x: drop says that it
// leaves the uncertain pairs, known already or decided now (changed).
func (p *pruner) decidePair(ctx context.Context, x history.KeyID, pr hyperpolygraph.WWPair, tested *int) (drop, changed bool, c *Conflict, err error) {
	o := &p.ord
	if *tested++; *tested&255 == 0 {
		if err := ctx.Err(); err != nil {
			return false, false, nil, err
		}
	}
	ia, ib := o.loc[pr.A], o.loc[pr.B]
	if reduceKnown && (o.reaches(ia, ib) || o.reaches(ib, ia)) {
		// Known already: the other orientation closes a WW cycle.
		return true, false, nil, nil
	}
	if p.skipPairs && !p.rowsChanged(pr.A) && !p.rowsChanged(pr.B) {
		// Tested last pass against the same rows and readers: both
		// orientations are feasible again.
		skippedPairs.Add(1)
		return false, false, nil, nil
	}
	fwdBad := p.wwBad(x, pr.A, pr.B)
	bwdBad := p.wwBad(x, pr.B, pr.A)
	switch {
	case fwdBad && bwdBad:
		c1 := p.optionCycle(p.wwOption(x, pr.A, pr.B))
		c2 := p.optionCycle(p.wwOption(x, pr.B, pr.A))
		// A copy: taking pr's address would move every pair tested to
		// the heap.
		ww := new(hyperpolygraph.WWPair)
		*ww = pr
		return false, false, &Conflict{Cycle: c1, Options: [][]hyperpolygraph.Edge{c1, c2}, WW: ww}, nil
	case fwdBad || bwdBad:
		a, b, ia, ib := pr.A, pr.B, ia, ib
		if fwdBad {
			a, b, ia, ib = b, a, ib, ia
		}
		if err := p.addWW(x, a, b); err != nil {
			return false, false, nil, err
		}
		o.add(ia, ib)
		return true, true, nil, nil
	}
	return false, false, nil, nil
}

// rowsChanged reports whether a row of t's states changed in this pass's
// fill (true when t has none).
func (p *pruner) rowsChanged(t history.TxnID) bool {
	n := p.r.node[t]
	if n < 0 {
		return true
	}
	s := n * int32(p.r.layers)
	for l := range int32(p.r.layers) {
		if p.rowChanged[s+l] {
			return true
		}
	}
	return false
}

// indexWW groups the known WW edges (and with rw the RW edges) by key,
// after asking the budget for the index.
func (p *pruner) indexWW(rw bool) error {
	if need := int64(len(p.g.Known)) * 4; int64(cap(p.kIdx))*4 < need {
		if err := p.ask(need+int64(len(p.g.Writers)+1)*4, "pruning's index of known edges by key"); err != nil {
			return err
		}
	}
	p.kOff, p.kIdx = wwByKey(p.g.Known, len(p.g.Writers), rw, p.kOff, p.kIdx)
	return nil
}

// knownWW returns the indexes in g.Known of the known WW (and RW, if
// indexed) edges of key x.
func (p *pruner) knownWW(x history.KeyID) []int32 {
	if int(x)+1 >= len(p.kOff) {
		return nil
	}
	return p.kIdx[p.kOff[x]:p.kOff[x+1]]
}

// loadOrder loads key x's known version order over the writers of its
// known WW edges and of the pairs in group.
func (p *pruner) loadOrder(x history.KeyID, group []hyperpolygraph.WWPair) {
	o := &p.ord
	o.begin(x, p.g.N())
	for _, pr := range group {
		o.local(pr.A)
		o.local(pr.B)
	}
	p.loadKnownOrder(x)
}

// loadKnownOrder adds key x's known WW edges to the order begun, and
// builds it.
func (p *pruner) loadKnownOrder(x history.KeyID) {
	o := &p.ord
	for _, i := range p.knownWW(x) {
		if e := p.g.Known[i]; e.Rel == history.WW {
			o.edge(o.local(e.From), o.local(e.To))
		}
	}
	o.build()
}

// byPlace returns the loaded writers (local indexes) in the topological
// order of the known graph (p.place[w] is w's position in it).
func (p *pruner) byPlace() []int32 {
	o := &p.ord
	k := len(o.ws)
	byRank := fitLen(p.byRank, k)
	// Sorted as (rank+1, index) packed in one word: a plain sort of
	// integers, not a comparison through two lookups (a sixth of
	// pruning's time at 300k transactions).
	keyed := fitLen(p.rankKeys, k)
	for i := range k {
		r := int64(-1)
		if n := p.r.node[o.ws[i]]; n >= 0 {
			r = int64(p.rank[n*int32(p.r.layers)+int32(p.r.layers-1)])
		}
		keyed[i] = uint64(r+1)<<32 | uint64(i)
	}
	slices.Sort(keyed)
	for i, kv := range keyed {
		byRank[i] = int32(uint32(kv))
	}
	p.rankKeys = keyed
	place := fitLen(p.place, k)
	for i, w := range byRank {
		place[w] = int32(i)
	}
	p.byRank, p.place = byRank, place
	return byRank
}

// pairOrder returns the indexes of group by increasing distance of the
// pair's writers in the topological order of the known graph, pairs at
// one distance by the place of their first writer in it (the order in
// which decideAllPairs makes them).
func (p *pruner) pairOrder(group []hyperpolygraph.WWPair) []int32 {
	o := &p.ord
	k := len(o.ws)
	p.byPlace()
	place := p.place
	lower := func(pr hyperpolygraph.WWPair) int32 { return min(place[o.loc[pr.A]], place[o.loc[pr.B]]) }
	dist := func(pr hyperpolygraph.WWPair) int32 {
		d := place[o.loc[pr.A]] - place[o.loc[pr.B]]
		return max(d, -d)
	}
	// Two counting sorts: by first place, then (stable) by distance.
	count := fitLen(p.count, k+1)
	byLower := fitLen(p.pairIdx, 2*len(group))
	order, tmp := byLower[:len(group)], byLower[len(group):]
	sortBy := func(dst, src []int32, key func(hyperpolygraph.WWPair) int32) {
		clear(count)
		for _, i := range src {
			count[key(group[i])]++
		}
		sum := int32(0)
		for d := range count {
			count[d], sum = sum, sum+count[d]
		}
		for _, i := range src {
			d := key(group[i])
			dst[count[d]] = i
			count[d]++
		}
	}
	for i := range tmp {
		tmp[i] = int32(i)
	}
	sortBy(order, tmp, lower)
	copy(tmp, order)
	sortBy(order, tmp, dist)
	p.count, p.pairIdx = count, byLower
	return order
}

// compact drops the known WW edges that others of their key imply, and
// the RW edges derived from them: r→b, where r read x from a and a→b was
// dropped, is r→c→…→b through a's direct successor c (see the file
// comment). The state graph is rebuilt from the compacted edges.
func (p *pruner) compact() error {
	g := p.g
	if err := p.indexWW(true); err != nil {
		return err
	}
	words := (len(g.Known) + 63) / 64
	if err := p.ask(int64(words)*8, "pruning's compaction of known edges"); err != nil {
		return err
	}
	drop := make([]uint64, words)
	dropped := 0
	o := &p.ord
	var ww, rw []int32
	// Only the keys that gained WW edges since the last compaction (all,
	// the first time): another key's edges are reduced already, its RW
	// edges derived from direct successors only.
	for _, x := range p.dirty {
		p.isDirty[x] = false
	}
	keys := p.dirty
	if p.dirtyAll || !compactDirty {
		keys = keys[:0]
		for x := range len(p.kOff) - 1 {
			keys = append(keys, history.KeyID(x))
		}
	}
	p.dirtyAll = false
	for _, x := range keys {
		if int(x)+1 >= len(p.kOff) {
			continue
		}
		ww, rw = ww[:0], rw[:0]
		for _, i := range p.knownWW(x) {
			if g.Known[i].Rel == history.WW {
				ww = append(ww, i)
			} else {
				rw = append(rw, i)
			}
		}
		if len(ww) < 2 {
			continue
		}
		o.begin(x, g.N())
		for _, i := range ww {
			e := g.Known[i]
			o.edge(o.local(e.From), o.local(e.To))
		}
		if !o.build() {
			continue // a cycle: the next topological sort reports it
		}
		// gone[a·k+b]: a→b was dropped and no copy of it kept.
		k := len(o.ws)
		gone := fitLen(p.gone, k*k)
		clear(gone)
		o.reduce(func(e int) {
			i := ww[e]
			drop[i>>6] |= 1 << (i & 63)
			dropped++
			gone[int(o.from[e])*k+int(o.to[e])] = true
		})
		for e := range ww {
			if i := ww[e]; drop[i>>6]&(1<<(i&63)) == 0 {
				gone[int(o.from[e])*k+int(o.to[e])] = false
			}
		}
		p.gone = gone
		if len(rw) == 0 || int(x) >= len(g.Reads) {
			continue
		}
		// The writer each reader of x read from (-2: more than one).
		p.loadWriters(x)
		for _, i := range rw {
			e := g.Known[i]
			a := p.writerOf(e.From)
			if a < 0 || o.locGen[a] != o.gen || o.locGen[e.To] != o.gen {
				continue
			}
			if gone[int(o.loc[a])*k+int(o.loc[e.To])] {
				drop[i>>6] |= 1 << (i & 63)
				dropped++
			}
		}
	}
	p.dirty = keys[:0]
	if dropped == 0 {
		return nil
	}
	keep := g.Known[:0]
	for i, e := range g.Known {
		if drop[i>>6]&(1<<(i&63)) == 0 {
			keep = append(keep, e)
		}
	}
	clear(g.Known[len(keep):])
	g.Known = keep
	// The state graph refers to edges by index: build it anew.
	p.core, p.seen, p.filled = p.core[:0], 0, false
	// A candidate's known successors are now its direct ones.
	for key, l := range p.wwSucc {
		p.wwSucc[key] = l[:0]
	}
	for _, e := range g.Known {
		if e.Rel == history.WW {
			if l, ok := p.wwSucc[kt(e.Key, e.From)]; ok {
				p.wwSucc[kt(e.Key, e.From)] = append(l, e.To)
			}
		}
	}
	return nil
}

// loadWriters records the writer each known reader of x read from.
func (p *pruner) loadWriters(x history.KeyID) {
	p.wrGen++
	if len(p.wrOf) < p.g.N() {
		p.wrOf = make([]history.TxnID, p.g.N())
		p.wrStamp = make([]int32, p.g.N())
	}
	for _, rd := range p.g.Reads[x] {
		if rd.Writer < 0 {
			continue
		}
		switch {
		case p.wrStamp[rd.Reader] != p.wrGen:
			p.wrStamp[rd.Reader], p.wrOf[rd.Reader] = p.wrGen, rd.Writer
		case p.wrOf[rd.Reader] != rd.Writer:
			p.wrOf[rd.Reader] = -2
		}
	}
}

// writerOf returns the writer r read the loaded key from, or a negative
// number when it read none or several.
func (p *pruner) writerOf(r history.TxnID) history.TxnID {
	if p.wrStamp[r] != p.wrGen {
		return -1
	}
	return p.wrOf[r]
}
