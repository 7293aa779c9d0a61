// Reach, its two strategies (bitset rows, chain vectors), the queries
// pruning and encoding ask of it, and the chain cover with its vectors.

package prune

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Strategy is how Reach stores reachability. Its values are stable so that
// reports can show them as counters.
type Strategy int

const (
	// Auto picks the strategy that needs fewer bytes (see Options.Reach).
	Auto Strategy = 0
	// Bitset keeps one row of states²/8 bytes per state: O(n²) memory,
	// one word-parallel OR per edge.
	Bitset Strategy = 1
	// Chains covers the transactions by k chains (sessions, merged along
	// known paths) and keeps per state, per chain, the first position of
	// the chain it reaches: O(n·k) memory, k-wide minimum per edge.
	Chains Strategy = 2
)

func (s Strategy) String() string {
	switch s {
	case Auto:
		return "auto"
	case Bitset:
		return "bitset"
	case Chains:
		return "chains"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// unreached is a chain entry of a state that reaches no node of the chain.
const unreached = math.MaxInt32

// Reach is the reachability of a known graph. It implements
// encode.StateReacher.
//
// With Chains, every included transaction (node) has a chain and a
// position in it; along a chain each node reaches the next (for SI: its
// state 0 reaches the next one's state 1). State s keeps a vector with an
// entry per chain: for SER the first position p of the chain that s
// reaches, as 2p; for SI 2p+f, where p is the first position at which s
// reaches the node in either state and f is 1 when it reaches only state 0
// there. Both sets are suffixes of the chain (each node, in either state,
// reaches the next one's state 1), so s reaches node j in state 1 iff
// entry ≤ 2·pos(j), in either state iff entry ≤ 2·pos(j)+1, and the
// vector of a state is the elementwise minimum of its successors' and its
// own entry. Exact reachability of a state 0 is not kept: no query needs
// it (see StateReaches).
type Reach struct {
	strategy Strategy
	layers   int
	// node maps a TxnID to its dense node number, -1 when not included;
	// txns is the inverse.
	node []int32
	txns []history.TxnID
	// sizeRank is Rank's order, computed on demand.
	sizeRank []int32

	// Bitset: words per row; row of state s is bits[s*words:(s+1)*words].
	words int
	bits  []uint64

	// Chains: the chain and position of each node; hdr[s] locates the
	// vector of state s in vecs (offset<<hdrBits | length). Entries past
	// its end (chains begun after it was filled) are unreached.
	chains int
	at     []link
	hdr    []uint64
	vecs   []int32
}

// link is a node's place in the chain cover.
type link struct{ chain, pos int32 }

// hdrBits is the width of a vector's length in its header.
const hdrBits = 24

// vec returns the vector of state s.
func (r *Reach) vec(s int32) []int32 {
	h := r.hdr[s]
	off := int64(h >> hdrBits)
	return r.vecs[off : off+int64(h&(1<<hdrBits-1))]
}

// bitsetBytes is the size of the bitset rows for m states.
func bitsetBytes(m int) int64 { return int64(m) * int64((m+63)/64) * 8 }

// chainBytes bounds the size of the chain vectors for m states over nodes
// nodes and at most k chains.
func chainBytes(m, nodes, k int) int64 {
	if k >= 1<<hdrBits {
		return math.MaxInt64 // more chains than a header holds
	}
	return int64(m)*int64(k)*4 + int64(m)*12 + int64(nodes)*8
}

// bytes is the size of what the strategy keeps.
func (r *Reach) bytes() int64 {
	if r.strategy == Chains {
		return int64(cap(r.vecs))*4 + int64(len(r.hdr))*8 + int64(len(r.at))*8
	}
	return int64(len(r.bits)) * 8
}

// has reports whether state from reaches state to, exactly with Bitset.
// With Chains a target state 0 of SI stands for its node in either state.
func (r *Reach) has(from, to int32) bool {
	if r.strategy == Bitset {
		return r.bits[int(from)*r.words+int(to>>6)]&(1<<(to&63)) != 0
	}
	j, any := to, false
	if r.layers == 2 {
		j, any = to>>1, to&1 == 0
	}
	at := r.at[j]
	key := 2 * at.pos
	if any {
		key++
	}
	h := r.hdr[from]
	if uint64(at.chain) >= h&(1<<hdrBits-1) {
		return false
	}
	return r.vecs[int64(h>>hdrBits)+int64(at.chain)] <= key
}

// implied reports whether a state edge u→v adds nothing to what the
// queries see, given what u is known to reach. With Bitset: u reaches v.
// With Chains, for SI, an edge into a state 0 is also implied when u
// reaches the node's state 1, which has every successor of state 0 (and
// the node): no query asks for a state 0 alone, and a cycle through the
// edge, b0 ⇝ u, would make u ⇝ b1 ⇝ u a cycle without it.
func (r *Reach) implied(u, v int32) bool {
	if r.strategy == Chains && r.layers == 2 && v&1 == 0 {
		return r.has(u, v+1)
	}
	return r.has(u, v)
}

// StateReaches reports whether state s reaches state t (s reaches
// itself). For SI a target state 0 stands for its node in either state:
// StateReaches(s, 2i) is whether s reaches 2i or 2i+1.
func (r *Reach) StateReaches(s, t int32) bool {
	if r.strategy == Bitset && r.layers == 2 && t&1 == 0 {
		return r.has(s, t) || r.has(s, t+1)
	}
	return r.has(s, t)
}

// Reaches reports whether to is reachable from from (every node reaches
// itself). For SI this is reachability in the induced SI graph: a path of
// the doubled graph from from's state 0, which can leave only by a non-RW
// edge, to either state of to.
func (r *Reach) Reaches(from, to history.TxnID) bool {
	if from == to {
		return true
	}
	if int(from) >= len(r.node) || int(to) >= len(r.node) || from < 0 || to < 0 {
		return false
	}
	a, b := r.node[from], r.node[to]
	if a < 0 || b < 0 {
		return false
	}
	if r.layers == 1 {
		return r.has(a, b)
	}
	return r.StateReaches(2*a, 2*b)
}

// Rank is the position of state s in a topological order of the known
// graph: when s reaches t ≠ s, Rank(s) < Rank(t); for SI state 1 of a node
// comes before its state 0. The order is by decreasing size of what a
// state reaches, so that states that reach about as much, nearly
// concurrent ones, rank close together (which keeps encode's rank windows
// short). It is computed on the first call.
func (r *Reach) Rank(s int32) int32 {
	if r.sizeRank == nil {
		r.rankBySize()
	}
	return r.sizeRank[s]
}

// rankBySize orders the states by decreasing size: with Bitset the states
// a state reaches (state 1 before state 0 when equal); with Chains the nodes it reaches plus, for SI, the
// states 1 it reaches, per chain 2·nodes+2 − entry (a path s ⇝ t makes
// both sets of s contain those of t, and one of them strictly). Ties,
// which only incomparable states share, go by state number.
func (r *Reach) rankBySize() {
	m := len(r.txns) * r.layers
	type sized struct {
		n int64
		s int32
	}
	size := make([]sized, m)
	for s := range m {
		var n int64
		if r.strategy == Bitset {
			for _, w := range r.bits[s*r.words : (s+1)*r.words] {
				n += int64(bits.OnesCount64(w))
			}
			// State 1 of a node reaches at least as many states as its
			// state 0, and must rank first.
			n = 2*n + int64(s&(r.layers-1))
		} else {
			top := 2*int64(len(r.txns)) + 2
			for _, e := range r.vec(int32(s)) {
				if e != unreached {
					n += top - int64(e)
				}
			}
		}
		size[s] = sized{n, int32(s)}
	}
	slices.SortFunc(size, func(a, b sized) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return cmp.Compare(a.s, b.s)
	})
	r.sizeRank = make([]int32, m)
	for i, x := range size {
		r.sizeRank[x.s] = int32(i)
	}
}

// Source returns what state s reaches: its bitset row, or (row nil) its
// chain vector, for tests prepared by Target.
func (r *Reach) Source(s int32) (row []uint64, vec []int32) {
	if r.strategy == Bitset {
		return r.bits[int(s)*r.words : int(s+1)*r.words], nil
	}
	return nil, r.vec(s)
}

// Target prepares target state t (in StateReaches' sense) for tests
// against a Source: a row reaches it iff row[idx]&mask != 0, a vector iff
// idx < len(vec) && vec[idx] <= key.
func (r *Reach) Target(t int32) (idx int32, mask uint64, key int32) {
	if r.strategy == Bitset {
		mask = 1 << (t & 63)
		if r.layers == 2 && t&1 == 0 {
			mask |= mask << 1 // t or t+1, in the same word
		}
		return t >> 6, mask, 0
	}
	j, any := t, false
	if r.layers == 2 {
		j, any = t>>1, t&1 == 0
	}
	at := r.at[j]
	key = 2 * at.pos
	if any {
		key++
	}
	return at.chain, 0, key
}

// Strategy is the strategy the reachability was computed with.
func (r *Reach) Strategy() Strategy { return r.strategy }

// Layers is 1 for SER and 2 for SI's doubled graph.
func (r *Reach) Layers() int { return r.layers }

// Node returns the dense node number of t, or -1 when t is not included.
// State (t, layer) is Layers()·Node(t)+layer; for SI layer 1 is "entered by
// a non-RW edge" and layer 0 "entered by an RW edge".
func (r *Reach) Node(t history.TxnID) int32 {
	if t < 0 || int(t) >= len(r.node) {
		return -1
	}
	return r.node[t]
}

// Txn returns the transaction of node i.
func (r *Reach) Txn(i int32) history.TxnID { return r.txns[i] }

// blocked reports whether adding edge from→to (RW or not) closes a cycle
// with the known graph, and through which state edge u→v (v ⇝ u).
func (p *pruner) blocked(from, to history.TxnID, rw bool) (u, v int32, ok bool) {
	a, b := p.r.node[from], p.r.node[to]
	r := &p.r
	u1, v1, u2, v2, two := hyperpolygraph.StateArcs(a, b, rw, r.layers)
	switch {
	case !two:
		return u1, v1, r.has(v1, u1)
	case r.has(v2, u2):
		return u2, v2, true
	default:
		// Back to a in either state; not in state 1, so in state 0.
		return u1, v1, r.StateReaches(v1, u1)
	}
}

// sessionLinks finds, from the session-order edges of the known graph,
// each node's successor in its session (soNext, -1 if none) and whether it
// has a predecessor there (T⊥, with an edge to every session, has no
// successor).
func (p *pruner) sessionLinks() {
	nodes := len(p.r.txns)
	outs := make([]int32, nodes)
	ins := make([]int32, nodes)
	p.soNext = make([]int32, nodes)
	for i := range p.soNext {
		p.soNext[i] = -1
	}
	for _, e := range p.g.Known {
		if e.Rel != history.SO {
			continue
		}
		a, b := p.r.node[e.From], p.r.node[e.To]
		if a < 0 || b < 0 {
			continue
		}
		outs[a]++
		ins[b]++
		p.soNext[a] = b
	}
	p.soPrev = make([]bool, nodes)
	for a, b := range p.soNext {
		switch {
		case b < 0:
		case outs[a] != 1 || ins[b] != 1:
			p.soNext[a] = -1
		default:
			p.soPrev[b] = true
		}
	}
	p.maxChains = 0
	for _, b := range p.soNext {
		if b < 0 {
			p.maxChains++
		}
	}
}

// fillChains computes the chain cover and the vectors in reverse
// topological order, dropping from the core the edges that an earlier
// successor implies, as fillBits does (see implied).
//
// The cover is built as the states are filled: a node joins the chain of
// its session successor; a node without one (the last of its session)
// joins the chain whose head it reaches, if that head is the first of its
// session (so sessions stay whole) and ranks first among those (the
// nearest); otherwise it begins a chain. Chains are thus sessions merged
// along known paths, and no more than the sessions. Positions count down
// from the number of nodes, so a head gets its successor's position minus
// one. It stops early, leaving the vectors unusable, when ctx is done or
// the budget refuses them room.
func (p *pruner) fillChains(ctx context.Context) error {
	r := &p.r
	m := p.m
	nodes := len(r.txns)
	p.core = p.core[:0]
	p.filled = false
	r.chains = 0
	r.at = fitLen(r.at, nodes)
	r.hdr = fitLen(r.hdr, m)
	r.vecs = r.vecs[:0]
	head := p.head[:0]
	open := p.open[:0]
	vec := p.vec[:0]
	layer1 := int32(r.layers - 1) // the state of a node chains link into
	work := 0
	for i := range m {
		if work += len(vec) + 16; work >= 1<<22 {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		u := p.order[m-1-i]
		vec = vec[:r.chains]
		for c := range vec {
			vec[c] = unreached
		}
		if p.inherits(u) {
			// State 0 comes after state 1 in the order, so it is filled.
			copy(vec, r.vec(u-1))
		}
		for e := p.off[u]; e < p.off[u+1]; e++ {
			v := p.dst[e]
			// Reached already (for a state 0 of SI: its state 1, see
			// implied) through an earlier successor.
			if at := r.at[v>>(r.layers-1)]; vec[at.chain] <= 2*at.pos {
				continue
			}
			p.core = append(p.core, stateEdge{u, v, p.edge[e]})
			src := r.vec(v)
			minInto(vec[:len(src)], src)
		}
		j := u >> (r.layers - 1)
		if r.layers == 1 || u&1 == 0 {
			// The node's first state filled: place it on a chain.
			var at link
			if nx := p.soNext[j]; nx >= 0 {
				at = link{r.at[nx].chain, r.at[nx].pos - 1}
			} else {
				best := -1
				for oi, oc := range open {
					h := head[oc]
					if vec[oc] <= 2*r.at[h].pos && (best < 0 || p.rank[int32(r.layers)*h+layer1] < p.rank[int32(r.layers)*head[open[best]]+layer1]) {
						best = oi
					}
				}
				if best >= 0 {
					c := open[best]
					at = link{c, r.at[head[c]].pos - 1}
					open[best] = open[len(open)-1]
					open = open[:len(open)-1]
				} else {
					at = link{int32(r.chains), int32(nodes)}
					r.chains++
					head = append(head, 0)
					vec = append(vec, unreached)
				}
			}
			r.at[j] = at
			head[at.chain] = j
			if !p.soPrev[j] {
				open = append(open, at.chain)
			}
		}
		at := r.at[j]
		own := 2 * at.pos
		if r.layers == 2 && u&1 == 0 {
			own++
		}
		vec[at.chain] = min(vec[at.chain], own)
		if len(r.vecs)+len(vec) > cap(r.vecs) {
			if err := p.growVecs(m-i, len(vec)); err != nil {
				return err
			}
		}
		r.hdr[u] = uint64(len(r.vecs))<<hdrBits | uint64(len(vec))
		r.vecs = append(r.vecs, vec...)
	}
	p.head, p.open, p.vec = head, open, vec
	p.filled = true
	return nil
}

// minInto sets dst to the elementwise minimum of dst and src (as long),
// eight entries at a time.
func minInto(dst, src []int32) {
	for len(src) >= 8 {
		d, s := dst[:8:8], src[:8:8]
		d[0], d[1], d[2], d[3] = min(d[0], s[0]), min(d[1], s[1]), min(d[2], s[2]), min(d[3], s[3])
		d[4], d[5], d[6], d[7] = min(d[4], s[4]), min(d[5], s[5]), min(d[6], s[6]), min(d[7], s[7])
		dst, src = dst[8:], src[8:]
	}
	for c, x := range src {
		dst[c] = min(dst[c], x)
	}
}

// growVecs makes room in the vector store for the rest states left to
// fill, k entries each (chains only grow), after asking the budget.
func (p *pruner) growVecs(rest, k int) error {
	r := &p.r
	need := max(len(r.vecs)+rest*k, cap(r.vecs)+cap(r.vecs)/4)
	if err := p.fit(int64(need)*4, fmt.Sprintf("pruning's chain vectors (%d states, %d chains)", p.m, k)); err != nil {
		return budgetError{err}
	}
	grown := make([]int32, len(r.vecs), need)
	copy(grown, r.vecs)
	r.vecs = grown
	return nil
}

// fitLen returns s with length n, reusing its array when it is large
// enough.
func fitLen[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
