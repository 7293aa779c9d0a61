package robust

// The static dependency graph (Definition 6.13) has an edge between two
// distinct instances for every key one writes and the other reads or
// writes: WR from writer to reader, WW both ways between writers, RW from
// reader to writer. Its edge count is quadratic in the instances sharing a
// key, so it is never built: the per-key reader and writer lists stand for
// it, and reachability runs on a graph with two nodes per key, linear in
// the accesses, whose paths between instances are exactly the static
// graph's:
//
//	P → in(x)  for every key x that P reads or writes,  in(x) → Q  for every writer Q of x
//	           (WW and RW edges into Q);
//	P → out(x) for every key x that P writes,           out(x) → Q for every reader Q of x
//	           (WR edges out of P);
//	P → Q      when Q comes right after P in their session.
//
// Session order is part of the graph: SO ⊆ VIS, and a cycle through it is
// as non-serializable as any (hyperiso's SER contains session order, as
// MixIso's SESSION axiom asks of every level).

// Relation is the kind of a static dependency.
type Relation uint8

const (
	// WR: the first instance writes a key the second reads.
	WR Relation = iota
	// WW: both write the key.
	WW
	// RW: the first reads a key the second writes.
	RW
	// SO: the first precedes the second in their session.
	SO
)

func (r Relation) String() string {
	switch r {
	case WR:
		return "wr"
	case WW:
		return "ww"
	case SO:
		return "so"
	}
	return "rw"
}

// index holds, per key, the instances that read it and that write it.
type index struct {
	w       *Workload
	readers [][]int32
	writers [][]int32
}

func newIndex(w *Workload) *index {
	x := &index{w: w, readers: make([][]int32, len(w.Keys)), writers: make([][]int32, len(w.Keys))}
	nr, nw := make([]int32, len(w.Keys)), make([]int32, len(w.Keys))
	for i := range w.Instances {
		for _, k := range w.Instances[i].Reads {
			nr[k]++
		}
		for _, k := range w.Instances[i].Writes {
			nw[k]++
		}
	}
	// One backing array each, cut per key: fewer allocations than growing
	// one slice per key.
	var tr, tw int32
	for k := range nr {
		tr += nr[k]
		tw += nw[k]
	}
	rb, wb := make([]int32, 0, tr), make([]int32, 0, tw)
	for k := range nr {
		x.readers[k] = rb[len(rb) : len(rb) : len(rb)+int(nr[k])]
		rb = rb[:len(rb)+int(nr[k])]
		x.writers[k] = wb[len(wb) : len(wb) : len(wb)+int(nw[k])]
		wb = wb[:len(wb)+int(nw[k])]
	}
	for i := range w.Instances {
		for _, k := range w.Instances[i].Reads {
			x.readers[k] = append(x.readers[k], int32(i))
		}
		for _, k := range w.Instances[i].Writes {
			x.writers[k] = append(x.writers[k], int32(i))
		}
	}
	return x
}

// edges counts the static graph's edges between distinct instances, one
// per (pair, relation, key), without listing them.
func (x *index) edges() int64 {
	var n int64
	for k := range x.readers {
		r, w := int64(len(x.readers[k])), int64(len(x.writers[k]))
		both := int64(0) // instances reading and writing k: no self edges
		for _, q := range x.readers[k] {
			if containsKey(x.w.Instances[q].Writes, KeyID(k)) {
				both++
			}
		}
		n += w*(w-1) + 2*(r*w-both)
	}
	return n
}

func containsKey(ks []KeyID, k KeyID) bool {
	lo, hi := 0, len(ks)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case ks[m] == k:
			return true
		case ks[m] < k:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}

// Node numbering of the reachability graph: instances 0..n-1, then in(x)
// = n+2x and out(x) = n+2x+1.
func (x *index) nodes() int { return len(x.w.Instances) + 2*len(x.w.Keys) }

// succ calls f on every successor of node v until f returns false.
func (x *index) succ(v int32, f func(int32) bool) {
	n := int32(len(x.w.Instances))
	if v < n {
		p := &x.w.Instances[v]
		for _, k := range p.Reads {
			if !f(n + 2*k) {
				return
			}
		}
		for _, k := range p.Writes {
			if !containsKey(p.Reads, k) && !f(n+2*k) {
				return
			}
			if !f(n + 2*k + 1) {
				return
			}
		}
		if q := x.w.next(v); q >= 0 {
			f(q)
		}
		return
	}
	k := (v - n) / 2
	list := x.writers[k]
	if (v-n)%2 == 1 {
		list = x.readers[k]
	}
	for _, q := range list {
		if !f(q) {
			return
		}
	}
}

// sccs returns the strongly connected component of every node (iterative
// Tarjan, linear in the reachability graph).
func (x *index) sccs() []int32 {
	nn := x.nodes()
	const unvisited = -1
	idx := make([]int32, nn)
	low := make([]int32, nn)
	comp := make([]int32, nn)
	onStack := make([]bool, nn)
	for i := range idx {
		idx[i] = unvisited
		comp[i] = -1
	}
	// Successors of each node, materialised once as a CSR array so that
	// the iterative DFS can resume a node's successor list.
	start := make([]int64, nn+1)
	var adj []int32
	for v := range nn {
		start[v] = int64(len(adj))
		x.succ(int32(v), func(s int32) bool { adj = append(adj, s); return true })
	}
	start[nn] = int64(len(adj))
	next := make([]int64, nn)
	var stack, call []int32
	var counter, ncomp int32
	for root := range nn {
		if idx[root] != unvisited {
			continue
		}
		call = append(call, int32(root))
		idx[root], low[root] = counter, counter
		counter++
		next[root] = start[root]
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(call) > 0 {
			v := call[len(call)-1]
			if next[v] < start[v+1] {
				s := adj[next[v]]
				next[v]++
				switch {
				case idx[s] == unvisited:
					idx[s], low[s] = counter, counter
					counter++
					next[s] = start[s]
					stack = append(stack, s)
					onStack[s] = true
					call = append(call, s)
				case onStack[s]:
					low[v] = min(low[v], idx[s])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1]
				low[u] = min(low[u], low[v])
			}
			if low[v] == idx[v] {
				for {
					s := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[s] = false
					comp[s] = ncomp
					if s == v {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp
}

// path returns a shortest path of static edges from instance a to
// instance b that stays in their component and avoids instance avoid
// when it can (so that a reported cycle passes its middle once), or nil.
func (x *index) path(a, b, avoid int32, comp []int32) []Edge {
	if p := x.bfs(a, b, avoid, comp); p != nil {
		return p
	}
	return x.bfs(a, b, -1, comp)
}

func (x *index) bfs(a, b, avoid int32, comp []int32) []Edge {
	n := int32(len(x.w.Instances))
	if a == b {
		return nil
	}
	parent := map[int32]int32{a: -1}
	queue := []int32{a}
	c := comp[a]
	found := false
	for len(queue) > 0 && !found {
		v := queue[0]
		queue = queue[1:]
		x.succ(v, func(s int32) bool {
			if comp[s] != c || s == avoid {
				return true
			}
			if _, seen := parent[s]; seen {
				return true
			}
			parent[s] = v
			queue = append(queue, s)
			found = s == b
			return !found
		})
	}
	if !found {
		return nil
	}
	// Nodes from b back to a: instances, with a key node between two
	// instances unless the hop is session order.
	var nodes []int32
	for v := b; v != -1; v = parent[v] {
		nodes = append(nodes, v)
	}
	var out []Edge
	for i := len(nodes) - 1; i >= 1; {
		from := nodes[i]
		if nodes[i-1] < n {
			out = append(out, Edge{From: from, To: nodes[i-1], Rel: SO, Key: -1})
			i--
			continue
		}
		key, to := nodes[i-1], nodes[i-2]
		k := (key - n) / 2
		rel := WR
		if (key-n)%2 == 0 {
			rel = RW
			if containsKey(x.w.Instances[from].Writes, k) {
				rel = WW
			}
		}
		out = append(out, Edge{From: from, To: to, Rel: rel, Key: k})
		i -= 2
	}
	return out
}

// Edge is one static dependency; Key is -1 for session order.
type Edge struct {
	From, To int32
	Rel      Relation
	Key      KeyID
}

// StaticEdges counts w's static dependency graph's edges, one per (pair,
// relation, key), without listing them.
func StaticEdges(w *Workload) int64 { return newIndex(w).edges() }
