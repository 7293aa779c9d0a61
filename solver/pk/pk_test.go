package pk

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestSelfLoop(t *testing.T) {
	g := New(3)
	cyc, ok := g.AddEdge(1, 1, 7)
	require.False(t, ok)
	require.NotNil(t, cyc)
	require.Empty(t, cyc)
	require.Zero(t, g.NumEdges())
	require.True(t, g.Reaches(2, 2))
	p, ok := g.Path(2, 2)
	require.True(t, ok)
	require.Empty(t, p)
}

func TestForwardEdgeKeepsOrder(t *testing.T) {
	g := New(4)
	for _, e := range [][2]int32{{0, 1}, {1, 2}, {0, 3}, {2, 3}} {
		_, ok := g.AddEdge(e[0], e[1], 0)
		require.True(t, ok)
	}
	require.Equal(t, []int32{0, 1, 2, 3}, g.Order(nil))
	require.Equal(t, int64(4), g.Stats().Forward)
	require.Zero(t, g.Stats().Reordered)
}

func TestReorderAndCycle(t *testing.T) {
	g := New(5)
	// 3→4 and 0→1 agree with the identity order; 4→0 does not.
	_, ok := g.AddEdge(3, 4, 10)
	require.True(t, ok)
	_, ok = g.AddEdge(0, 1, 11)
	require.True(t, ok)
	_, ok = g.AddEdge(4, 0, 12)
	require.True(t, ok)
	// δB = {3,4} (positions 3,4), δF = {0,1} (positions 0,1): the pool
	// 0,1,3,4 goes to 3,4,0,1; node 2 keeps position 2.
	require.Equal(t, []int32{3, 4, 2, 0, 1}, g.Order(nil))
	require.Equal(t, int32(2), g.Level(2))
	require.True(t, g.Reaches(3, 1))
	require.False(t, g.Reaches(1, 3))

	cyc, ok := g.AddEdge(1, 3, 13)
	require.False(t, ok)
	require.Equal(t, []int32{10, 12, 11}, cyc) // 3→4→0→1, closed by 1→3
	require.Equal(t, 3, g.NumEdges())

	p, ok := g.Path(3, 1)
	require.True(t, ok)
	require.Equal(t, []int32{10, 12, 11}, p)

	g.RemoveLast() // 4→0
	_, ok = g.AddEdge(1, 3, 13)
	require.True(t, ok)
	require.False(t, g.Reaches(3, 1))
}

func TestParallelEdges(t *testing.T) {
	g := New(3)
	for r := range int32(3) {
		_, ok := g.AddEdge(2, 0, r)
		require.True(t, ok)
	}
	require.Equal(t, 3, g.NumEdges())
	cyc, ok := g.AddEdge(0, 2, 9)
	require.False(t, ok)
	require.Len(t, cyc, 1)
	require.Equal(t, int32(0), cyc[0], "path found through the first edge 2→0")
	g.RemoveLast()
	g.RemoveLast()
	require.Equal(t, 1, g.NumEdges())
	u, v, r := g.Edge(0)
	require.Equal(t, [3]int32{2, 0, 0}, [3]int32{u, v, r})
	require.True(t, g.Reaches(2, 0))
	g.RemoveLast()
	require.False(t, g.Reaches(2, 0))
	_, ok = g.AddEdge(0, 2, 9)
	require.True(t, ok)
	require.NoError(t, checkGraph(g, nil))
}

func TestRemovePanics(t *testing.T) {
	g := New(2)
	require.Panics(t, g.RemoveLast)
	require.Panics(t, func() { g.RemoveTo(1) })
	require.Panics(t, func() { g.RemoveTo(-1) })
}

func TestReset(t *testing.T) {
	g := New(3)
	g.AddEdge(2, 0, 0)
	g.AddEdge(1, 2, 0)
	require.NotEqual(t, []int32{0, 1, 2}, g.Order(nil))
	g.Reset()
	require.Zero(t, g.NumEdges())
	require.Equal(t, []int32{0, 1, 2}, g.Order(nil))
	require.NoError(t, checkGraph(g, nil))
}

func TestNodeRecordIsOneCacheLine(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(node{}))
}

func TestEpochWrap(t *testing.T) {
	g := New(4)
	g.AddEdge(0, 1, 0)
	g.epoch = ^uint32(0) - 5
	for range 10 {
		require.True(t, g.Reaches(0, 1))
		require.False(t, g.Reaches(1, 0))
		require.False(t, g.Reaches(2, 3))
	}
}

// TestNoAllocSteadyState checks that insertions needing a reorder, refused
// insertions, removals and reachability queries do not allocate once the
// buffers have grown.
func TestNoAllocSteadyState(t *testing.T) {
	const n = 200
	r := rand.New(rand.NewPCG(1, 2))
	g := New(n)
	type e struct{ u, v int32 }
	var es []e
	for range 4 * n {
		es = append(es, e{int32(r.IntN(n)), int32(r.IntN(n))})
	}
	run := func() {
		for i, x := range es {
			g.AddEdge(x.u, x.v, int32(i))
			if i%7 == 0 {
				g.Reaches(x.v, x.u)
				g.Path(x.u, x.v)
			}
		}
		g.RemoveTo(g.NumEdges() / 3)
		for i, x := range es[:n] {
			g.AddEdge(x.v, x.u, int32(i))
		}
		g.RemoveTo(0)
	}
	run() // grow buffers
	run()
	require.Zero(t, testing.AllocsPerRun(20, run))
	require.Positive(t, g.Stats().Reordered)
	require.Positive(t, g.Stats().Refused)
}

// ---- property test against a plain DFS model ----

type medge struct {
	from, to int32
	present  bool
}

// model is the reference: every edge ever inserted, indexed by its reason,
// and the stack of present reasons.
type model struct {
	n     int
	all   []medge
	stack []int32
}

func (m *model) adj(reverse bool) [][]int32 {
	a := make([][]int32, m.n)
	for _, r := range m.stack {
		e := m.all[r]
		if reverse {
			e.from, e.to = e.to, e.from
		}
		a[e.from] = append(a[e.from], e.to)
	}
	return a
}

// search returns the set of nodes reachable from src by plain DFS over a.
func search(a [][]int32, src int32) []bool {
	seen := make([]bool, len(a))
	st := []int32{src}
	seen[src] = true
	for len(st) > 0 {
		w := st[len(st)-1]
		st = st[:len(st)-1]
		for _, x := range a[w] {
			if !seen[x] {
				seen[x] = true
				st = append(st, x)
			}
		}
	}
	return seen
}

// dist returns the number of edges of a shortest path src ⇝ dst, or -1.
func (m *model) dist(src, dst int32) int {
	a := m.adj(false)
	d := make([]int, m.n)
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	q := []int32{src}
	for len(q) > 0 {
		w := q[0]
		q = q[1:]
		for _, x := range a[w] {
			if d[x] < 0 {
				d[x] = d[w] + 1
				q = append(q, x)
			}
		}
	}
	return d[dst]
}

// reach returns the set of nodes reachable from src.
func (m *model) reach(src int32) []bool { return search(m.adj(false), src) }

// reachBack returns the set of nodes that reach dst.
func (m *model) reachBack(dst int32) []bool { return search(m.adj(true), dst) }

// checkGraph verifies the invariants of g, and with a model, that g holds
// exactly the model's present edges in the same order.
func checkGraph(g *Graph, m *model) error {
	n := g.NumNodes()
	seen := make([]bool, n)
	for v := range n {
		p := g.Level(int32(v))
		if p < 0 || int(p) >= n || seen[p] {
			return fmt.Errorf("levels are not a permutation: node %d at %d", v, p)
		}
		seen[p] = true
		if g.At(p) != int32(v) {
			return fmt.Errorf("At(%d)=%d, want %d", p, g.At(p), v)
		}
	}
	outN := make([]int, n)
	inN := make([]int, n)
	for i := range g.NumEdges() {
		u, v, r := g.Edge(i)
		if g.Level(u) >= g.Level(v) {
			return fmt.Errorf("edge %d→%d (reason %d) against the order: %d ≥ %d", u, v, r, g.Level(u), g.Level(v))
		}
		if m != nil {
			want := m.stack[i]
			if r != want || m.all[want].from != u || m.all[want].to != v {
				return fmt.Errorf("edge %d is %d→%d/%d, model has reason %d", i, u, v, r, want)
			}
		}
		if a := g.nodes[u].out[outN[u]]; a.node != v || a.edge != int32(i) {
			return fmt.Errorf("out[%d][%d]=%v, want {%d %d}", u, outN[u], a, v, i)
		}
		if a := g.nodes[v].in[inN[v]]; a.node != u || a.edge != int32(i) {
			return fmt.Errorf("in[%d][%d]=%v, want {%d %d}", v, inN[v], a, u, i)
		}
		outN[u]++
		inN[v]++
	}
	for v := range n {
		if len(g.nodes[v].out) != outN[v] || len(g.nodes[v].in) != inN[v] {
			return fmt.Errorf("node %d: %d out / %d in arcs, want %d / %d", v, len(g.nodes[v].out), len(g.nodes[v].in), outN[v], inN[v])
		}
	}
	if m != nil && g.NumEdges() != len(m.stack) {
		return fmt.Errorf("%d edges, model has %d", g.NumEdges(), len(m.stack))
	}
	return nil
}

// checkPath verifies that reasons form a path src ⇝ dst of present edges.
func checkPath(m *model, src, dst int32, reasons []int32) error {
	cur := src
	for i, r := range reasons {
		if r < 0 || int(r) >= len(m.all) {
			return fmt.Errorf("step %d: unknown reason %d", i, r)
		}
		e := m.all[r]
		if !e.present {
			return fmt.Errorf("step %d: reason %d is not a present edge", i, r)
		}
		if e.from != cur {
			return fmt.Errorf("step %d: edge %d→%d does not start at %d", i, e.from, e.to, cur)
		}
		cur = e.to
	}
	if cur != dst {
		return fmt.Errorf("path %v ends at %d, not %d", reasons, cur, dst)
	}
	return nil
}

// levels copies every node's level into dst and returns it.
func levels(g *Graph, dst []int32) []int32 {
	for v := range dst {
		dst[v] = g.Level(int32(v))
	}
	return dst
}

type propCounts struct {
	runs, adds, forward, reordered, refused, removes, queries int
}

// runProperty performs one random run and returns an error describing the
// first discrepancy.
func runProperty(seed uint64, c *propCounts) error {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := 2 + r.IntN(59) // 2..60
	dense := r.IntN(2) == 0
	limit := n
	if dense {
		limit = max(n, n*(n-1)/3)
	}
	hidden := r.Perm(n)    // a secret order most edges follow in "ordered" runs
	ordered := r.Float64() // probability that an added edge follows hidden
	pRemove := 0.05 + 0.3*r.Float64()
	ops := 50 + r.IntN(350)

	g := New(n)
	m := &model{n: n}
	c.runs++
	prev := make([]int32, n)
	cur := make([]int32, n)
	for op := range ops {
		wrap := func(err error) error {
			return fmt.Errorf("seed %d n %d op %d: %w", seed, n, op, err)
		}
		nm := len(m.stack)
		if nm > 0 && (r.Float64() < pRemove || nm >= limit) {
			c.removes++
			k := nm - 1
			if r.IntN(3) == 0 { // backtrack several levels
				k = r.IntN(nm)
			}
			if k == nm-1 {
				g.RemoveLast()
			} else {
				g.RemoveTo(k)
			}
			for len(m.stack) > k {
				top := m.stack[len(m.stack)-1]
				m.all[top].present = false
				m.stack = m.stack[:len(m.stack)-1]
			}
			if err := checkGraph(g, m); err != nil {
				return wrap(err)
			}
			continue
		}

		if r.IntN(40) == 0 {
			reserveRandom(g, r)
		}

		var u, v int32
		switch x := r.Float64(); {
		case x < 0.02:
			u = int32(r.IntN(n))
			v = u
		case x < 0.12 && nm > 0: // parallel edge
			e := m.all[m.stack[r.IntN(nm)]]
			u, v = e.from, e.to
		default:
			a, b := r.IntN(n), r.IntN(n)
			for b == a {
				b = r.IntN(n)
			}
			if r.Float64() < ordered && hidden[a] > hidden[b] {
				a, b = b, a
			}
			u, v = int32(a), int32(b)
		}

		reason := int32(len(m.all))
		levels(g, prev)
		before := g.NumEdges()
		ou, ov := g.Level(u), g.Level(v)
		wantCycle := u == v || m.reach(v)[u]
		var fromV, toU []bool
		if ou > ov && !wantCycle {
			fromV, toU = m.reach(v), m.reachBack(u)
		}
		st0 := g.Stats()
		cyc, ok := g.AddEdge(u, v, reason)
		c.adds++
		if ok == wantCycle {
			return wrap(fmt.Errorf("AddEdge(%d,%d) ok=%v, plain DFS says cycle=%v", u, v, ok, wantCycle))
		}
		if !ok {
			c.refused++
			if u == v && (cyc == nil || len(cyc) != 0) {
				return wrap(fmt.Errorf("self-loop path %v", cyc))
			}
			if err := checkPath(m, v, u, cyc); err != nil {
				return wrap(err)
			}
			if d := m.dist(v, u); u != v && len(cyc) != d {
				return wrap(fmt.Errorf("cycle path has %d edges, shortest has %d", len(cyc), d))
			}
			if g.NumEdges() != before || !slices.Equal(prev, levels(g, cur)) {
				return wrap(fmt.Errorf("refused AddEdge changed the graph"))
			}
			if err := checkGraph(g, m); err != nil {
				return wrap(err)
			}
		} else {
			m.all = append(m.all, medge{from: u, to: v, present: true})
			m.stack = append(m.stack, reason)
			if ou < ov {
				c.forward++
				if !slices.Equal(prev, levels(g, cur)) {
					return wrap(fmt.Errorf("forward edge changed the order"))
				}
			} else {
				c.reordered++
				// Only δF (reachable from v, below u) and δB (reaching
				// u, above v) are visited, and only they may move.
				region := 0
				for x := range n {
					if (fromV[x] && prev[x] < ou) || (toU[x] && prev[x] > ov) {
						region++
					}
				}
				st := g.Stats()
				if vis, mv := st.Visited-st0.Visited, st.Moved-st0.Moved; vis != int64(region) || mv != int64(region) {
					return wrap(fmt.Errorf("visited %d and moved %d nodes, affected region has %d", vis, mv, region))
				}
				for x := range n {
					if prev[x] == g.Level(int32(x)) {
						continue
					}
					inF := fromV[x] && prev[x] < ou
					inB := toU[x] && prev[x] > ov
					if !inF && !inB {
						return wrap(fmt.Errorf("node %d outside the affected region moved %d→%d", x, prev[x], g.Level(int32(x))))
					}
				}
			}
			if err := checkGraph(g, m); err != nil {
				return wrap(err)
			}
		}

		// Reachability queries against the model.
		if r.IntN(4) == 0 {
			c.queries++
			a, b := int32(r.IntN(n)), int32(r.IntN(n))
			want := m.reach(a)[b]
			if got := g.Reaches(a, b); got != want {
				return wrap(fmt.Errorf("Reaches(%d,%d)=%v, want %v", a, b, got, want))
			}
			p, ok := g.Path(a, b)
			if ok != want {
				return wrap(fmt.Errorf("Path(%d,%d) ok=%v, want %v", a, b, ok, want))
			}
			if ok {
				if err := checkPath(m, a, b, p); err != nil {
					return wrap(fmt.Errorf("Path(%d,%d): %w", a, b, err))
				}
				if d := m.dist(a, b); a != b && len(p) != d {
					return wrap(fmt.Errorf("Path(%d,%d) has %d edges, shortest has %d", a, b, len(p), d))
				}
			}
		}
	}
	return nil
}

// reserveRandom reserves random room; the property checks then show that
// the arcs already present survive and later insertions use the room.
func reserveRandom(g *Graph, r *rand.Rand) {
	degrees := func() []int32 {
		if r.IntN(4) == 0 {
			return nil
		}
		d := make([]int32, g.NumNodes())
		for i := range d {
			d[i] = int32(r.IntN(4))
		}
		return d
	}
	g.Reserve(r.IntN(100), degrees(), degrees())
}

func TestPropertyAgainstDFS(t *testing.T) {
	modes := []struct {
		name         string
		runs         int
		sort, bitmap bool
	}{
		{"auto", 4000, false, false},
		{"sort", 1000, true, false},
		{"bitmap", 1000, false, true},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			forceSort, forceBitmap = mode.sort, mode.bitmap
			defer func() { forceSort, forceBitmap = false, false }()
			runs := mode.runs
			if testing.Short() {
				runs /= 10
			}
			var c propCounts
			for i := range runs {
				err := runProperty(uint64(i)+1, &c)
				require.NoError(t, err)
			}
			t.Logf("runs %d: %d insertions (%d forward, %d reordered, %d refused), %d removals, %d reachability queries",
				c.runs, c.adds, c.forward, c.reordered, c.refused, c.removes, c.queries)
			require.Positive(t, c.reordered)
			require.Positive(t, c.refused)
		})
	}
}

// TestLargerGraphs runs fewer, longer sequences on bigger graphs, checking
// the invariants after every operation and the DFS verdicts on a sample.
func TestLargerGraphs(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 3
	}
	for _, mode := range []struct{ sort, bitmap bool }{{false, false}, {true, false}, {false, true}} {
		forceSort, forceBitmap = mode.sort, mode.bitmap
		larger(t, runs)
	}
	forceSort, forceBitmap = false, false
}

func larger(t *testing.T, runs int) {
	for i := range runs {
		r := rand.New(rand.NewPCG(uint64(i), 99))
		n := 200 + r.IntN(300)
		g := New(n)
		m := &model{n: n}
		hidden := r.Perm(n)
		for op := range 3000 {
			if len(m.stack) > 0 && r.IntN(5) == 0 {
				k := r.IntN(len(m.stack))
				g.RemoveTo(k)
				for _, x := range m.stack[k:] {
					m.all[x].present = false
				}
				m.stack = m.stack[:k]
				continue
			}
			a, b := r.IntN(n), r.IntN(n)
			if r.IntN(10) != 0 && hidden[a] > hidden[b] {
				a, b = b, a
			}
			u, v := int32(a), int32(b)
			reason := int32(len(m.all))
			cyc, ok := g.AddEdge(u, v, reason)
			if op%10 == 0 {
				want := u == v || m.reach(v)[u]
				require.Equal(t, !want, ok, "run %d op %d", i, op)
			}
			if ok {
				m.all = append(m.all, medge{from: u, to: v, present: true})
				m.stack = append(m.stack, reason)
			} else {
				require.NoError(t, checkPath(m, v, u, cyc), "run %d op %d", i, op)
			}
			require.NoError(t, checkGraph(g, m), "run %d op %d", i, op)
		}
	}
}
