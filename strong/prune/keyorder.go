// One key's known version order as bitset rows of reachability, for the
// pair tests of a pass (see order.go for why the reduced order loses
// nothing).

package prune

import (
	"cmp"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// keyOrder is the known version order of one key, over the writers that
// take part in it (its known WW edges and uncertain pairs), as bitset
// rows of reachability by known WW(x) edges alone.
type keyOrder struct {
	key history.KeyID
	// ws are the writers, loc[t] (valid when locGen[t] == gen) their
	// index in ws.
	ws          []history.TxnID
	loc, locGen []int32
	gen         int32
	words       int
	rows        []uint64
	// The recorded edges by local index, and build's scratch: in-degrees,
	// the edges by source (succ[start[u]:start[u+1]]), the topological
	// order and each writer's position in it.
	from, to         []int32
	deg, start, fill []int32
	succ, queue, pos []int32
}

// local returns t's index, adding t as a writer (before rows are built).
func (o *keyOrder) local(t history.TxnID) int32 {
	if o.locGen[t] != o.gen {
		o.locGen[t] = o.gen
		o.loc[t] = int32(len(o.ws))
		o.ws = append(o.ws, t)
	}
	return o.loc[t]
}

// reaches reports whether writer i reaches writer j by known WW(x) edges
// (i reaches itself).
func (o *keyOrder) reaches(i, j int32) bool {
	return o.rows[int(i)*o.words+int(j>>6)]&(1<<(j&63)) != 0
}

// begin starts key x: its writers are added by local, then build fills
// the rows from the known WW(x) edges given as local pairs.
func (o *keyOrder) begin(x history.KeyID, n int) {
	if len(o.loc) < n {
		o.loc = make([]int32, n)
		o.locGen = make([]int32, n)
	}
	o.key = x
	o.gen++
	o.ws = o.ws[:0]
	o.from, o.to = o.from[:0], o.to[:0]
}

// edge records a known WW(x) edge between local writers, for build.
func (o *keyOrder) edge(i, j int32) { o.from, o.to = append(o.from, i), append(o.to, j) }

// build computes the rows of the recorded edges: in reverse topological
// order each row is its own bit and its successors' rows. It returns false
// when the edges have a cycle (the rows then cover the acyclic part only;
// the known graph is cyclic and its topological sort says so).
func (o *keyOrder) build() bool {
	k := len(o.ws)
	o.words = (k + 63) / 64
	o.rows = fitLen(o.rows, k*o.words)
	clear(o.rows)
	o.deg = fitLen(o.deg, k)
	clear(o.deg)
	// The edges by source (CSR), each source's in topological order
	// below.
	o.start = fitLen(o.start, k+1)
	clear(o.start)
	for i, j := range o.to {
		o.deg[j]++
		o.start[o.from[i]+1]++
	}
	for i := 1; i <= k; i++ {
		o.start[i] += o.start[i-1]
	}
	o.succ = fitLen(o.succ, len(o.from))
	o.fill = append(o.fill[:0], o.start[:k]...)
	for e, i := range o.from {
		o.succ[o.fill[i]] = int32(e)
		o.fill[i]++
	}
	o.queue = o.queue[:0]
	for i := range int32(k) {
		if o.deg[i] == 0 {
			o.queue = append(o.queue, i)
		}
	}
	for q := 0; q < len(o.queue); q++ {
		u := o.queue[q]
		for _, e := range o.succ[o.start[u]:o.start[u+1]] {
			if v := o.to[e]; o.deg[v] > 0 {
				if o.deg[v]--; o.deg[v] == 0 {
					o.queue = append(o.queue, v)
				}
			}
		}
	}
	// pos is the topological position (k for a writer on a cycle).
	o.pos = fitLen(o.pos, k)
	for i := range o.pos {
		o.pos[i] = int32(k)
	}
	for q, u := range o.queue {
		o.pos[u] = int32(q)
	}
	for q := len(o.queue) - 1; q >= 0; q-- {
		u := o.queue[q]
		row := o.rows[int(u)*o.words : int(u+1)*o.words]
		row[u>>6] |= 1 << (u & 63)
		for _, e := range o.succ[o.start[u]:o.start[u+1]] {
			v := o.to[e]
			src := o.rows[int(v)*o.words : int(v+1)*o.words]
			for w := range row {
				row[w] |= src[w]
			}
		}
	}
	return len(o.queue) == k
}

// reduce calls redundant for every recorded edge (by its index in the
// order edge recorded them) that other edges imply, a duplicate included:
// taking each writer's successors in topological order, an edge is
// redundant iff an earlier successor reaches its target. Call it after a
// build that returned true.
func (o *keyOrder) reduce(redundant func(e int)) {
	seen := make([]uint64, o.words)
	for u := range int32(len(o.ws)) {
		out := o.succ[o.start[u]:o.start[u+1]]
		if len(out) == 0 {
			continue
		}
		slices.SortFunc(out, func(a, b int32) int { return cmp.Compare(o.pos[o.to[a]], o.pos[o.to[b]]) })
		clear(seen)
		for _, e := range out {
			v := o.to[e]
			if seen[v>>6]&(1<<(v&63)) != 0 {
				redundant(int(e))
				continue
			}
			src := o.rows[int(v)*o.words : int(v+1)*o.words]
			for w := range seen {
				seen[w] |= src[w]
			}
		}
	}
}

// chained reports whether the writers, in the order byRank lists them
// (local indexes, each writer once), form one chain of known WW(x) edges:
// then every pair of them is ordered.
func (o *keyOrder) chained(byRank []int32) bool {
	for i := 1; i < len(byRank); i++ {
		if !o.reaches(byRank[i-1], byRank[i]) {
			return false
		}
	}
	return true
}

// add records a new known edge i→j: whoever reaches i now reaches what j
// reaches.
func (o *keyOrder) add(i, j int32) {
	w := o.words
	src := o.rows[int(j)*w : int(j+1)*w]
	for u := range len(o.ws) {
		row := o.rows[u*w : (u+1)*w]
		if row[i>>6]&(1<<(i&63)) != 0 {
			for x := range row {
				row[x] |= src[x]
			}
		}
	}
}
