package pk

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

type benchEdge struct{ u, v int32 }

// dagEdges returns m edges that all follow a hidden random order of the n
// nodes, in random insertion order. Against the initial identity order
// about half of them point backwards, so the graph is always acyclic but
// many insertions need a reorder.
func dagEdges(r *rand.Rand, n, m int) []benchEdge {
	hidden := r.Perm(n) // hidden[i]: node at hidden position i
	es := make([]benchEdge, m)
	for i := range es {
		a, b := r.IntN(n), r.IntN(n)
		for a == b {
			b = r.IntN(n)
		}
		if a > b {
			a, b = b, a
		}
		es[i] = benchEdge{int32(hidden[a]), int32(hidden[b])}
	}
	return es
}

// randomEdges returns m uniformly random edges; once the graph is dense
// enough many of them close cycles and are refused.
func randomEdges(r *rand.Rand, n, m int) []benchEdge {
	es := make([]benchEdge, m)
	for i := range es {
		es[i] = benchEdge{int32(r.IntN(n)), int32(r.IntN(n))}
	}
	return es
}

// BenchmarkInsert inserts a whole edge sequence into a reset graph per
// iteration (buffers already grown), and reports the cost per edge.
func BenchmarkInsert(b *testing.B) {
	cases := []struct {
		name string
		n, m int
		gen  func(*rand.Rand, int, int) []benchEdge
	}{
		{"dag/n=10k/m=20k", 10_000, 20_000, dagEdges},
		{"dag/n=10k/m=50k", 10_000, 50_000, dagEdges},
		{"dag/n=100k/m=200k", 100_000, 200_000, dagEdges},
		{"dag/n=100k/m=500k", 100_000, 500_000, dagEdges},
		{"random/n=10k/m=20k", 10_000, 20_000, randomEdges},
		{"random/n=100k/m=200k", 100_000, 200_000, randomEdges},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			es := c.gen(rand.New(rand.NewPCG(1, uint64(c.n))), c.n, c.m)
			g := New(c.n)
			cycleEdges := 0
			pass := func() {
				g.Reset()
				for i, e := range es {
					if cyc, ok := g.AddEdge(e.u, e.v, int32(i)); !ok {
						cycleEdges += len(cyc) + 1
					}
				}
			}
			pass() // grow the buffers
			g.ResetStats()
			cycleEdges = 0
			passes := 0
			for b.Loop() {
				pass()
				passes++
			}
			st := g.Stats()
			tot := float64(passes) * float64(len(es))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/tot, "ns/edge")
			b.ReportMetric(float64(st.Reordered)/tot, "reorder/edge")
			b.ReportMetric(float64(st.Refused)/tot, "refused/edge")
			b.ReportMetric(float64(st.Visited)/tot, "visited/edge")
			if st.Refused > 0 {
				b.ReportMetric(float64(cycleEdges)/float64(st.Refused), "cycle-len")
			}
		})
	}
}

// BenchmarkSolverPattern imitates the way a CDCL(T) solver drives the
// theory: a fixed base of known edges (session chains that follow a hidden
// serial order), then decision levels that each add a few edges — mostly
// consistent with the hidden order and local in it, sometimes arbitrary —
// and on every refused edge (a conflict) a backjump to an earlier level,
// with an occasional restart to the base. One op is one AddEdge, the
// amortized removals included.
func BenchmarkSolverPattern(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			r := rand.New(rand.NewPCG(7, uint64(n)))
			hidden := r.Perm(n)
			g := New(n)
			const sessions = 50
			reason := int32(0)
			for s := range sessions {
				prev := -1
				for i := s; i < n; i += sessions {
					if prev >= 0 {
						g.AddEdge(int32(hidden[prev]), int32(hidden[i]), reason)
						reason++
					}
					prev = i
				}
			}
			base := g.NumEdges()
			levels := []int{}
			pending := 0 // edges left in the current decision level
			conflicts, cycleEdges := 0, 0
			pick := func() (int32, int32) {
				a := r.IntN(n)
				var c int
				switch x := r.IntN(10); {
				case x < 7: // local: near in the hidden order
					c = min(n-1, max(0, a+r.IntN(401)-200))
				default:
					c = r.IntN(n)
				}
				for c == a {
					c = r.IntN(n)
				}
				if r.IntN(10) != 0 && c < a { // 90% follow the hidden order
					a, c = c, a
				}
				return int32(hidden[a]), int32(hidden[c])
			}
			step := func() {
				if pending == 0 {
					levels = append(levels, g.NumEdges())
					pending = 1 + r.IntN(8)
				}
				u, v := pick()
				reason++
				cyc, ok := g.AddEdge(u, v, reason)
				if ok {
					pending--
					if len(levels) >= 3000 { // restart
						g.RemoveTo(base)
						levels, pending = levels[:0], 0
					}
					return
				}
				conflicts++
				cycleEdges += len(cyc) + 1
				// Backjump: usually a few levels, sometimes far.
				back := 1 + r.IntN(4)
				if r.IntN(20) == 0 {
					back = r.IntN(len(levels)) + 1
				}
				lvl := max(0, len(levels)-back)
				g.RemoveTo(levels[lvl])
				levels, pending = levels[:lvl], 0
			}
			for range 50_000 { // warm up: grow buffers, reach steady state
				step()
			}
			g.ResetStats()
			conflicts, cycleEdges = 0, 0
			ops := 0
			for b.Loop() {
				step()
				ops++
			}
			st := g.Stats()
			b.ReportMetric(float64(conflicts)/float64(ops), "conflicts/op")
			b.ReportMetric(float64(st.Reordered)/float64(ops), "reorder/op")
			b.ReportMetric(float64(st.Visited)/float64(ops), "visited/op")
			b.ReportMetric(float64(cycleEdges)/float64(max(1, conflicts)), "cycle-len")
		})
	}
}

// BenchmarkReaches measures the order-bounded reachability query on a DAG
// of 10k nodes and 50k edges.
func BenchmarkReaches(b *testing.B) {
	const n, m = 10_000, 50_000
	r := rand.New(rand.NewPCG(3, 4))
	g := New(n)
	for i, e := range dagEdges(r, n, m) {
		g.AddEdge(e.u, e.v, int32(i))
	}
	qs := randomEdges(r, n, 1<<12)
	i := 0
	for b.Loop() {
		q := qs[i&(len(qs)-1)]
		g.Reaches(q.u, q.v)
		i++
	}
}
