package prune_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// spaceLimit bounds the assignments enumerated per history.
const spaceLimit = 1 << 12

type tally struct {
	// settle is the Settle checkSound prunes with; settled counts the
	// histories where it stopped before the fixpoint.
	settle                                      float64
	settled                                     int
	histories, buildViolations, tooBig, checked int
	pruned, resolvedWR, conflicts, knownCyclic  int
	acyclicBefore, twoWidth                     int
}

func (c tally) String() string {
	return fmt.Sprintf("%d histories: %d violations at build, %d too many assignments, %d checked; %d pruned something (%d resolved a read), %d conflicts (%d of a cyclic known graph), %d satisfiable; %d width-two clauses checked",
		c.histories, c.buildViolations, c.tooBig, c.checked, c.pruned, c.resolvedWR, c.conflicts, c.knownCyclic, c.acyclicBefore, c.twoWidth)
}

// checkSound verifies on one history, by brute force over every
// assignment, that pruning keeps exactly the acyclic assignments, that a
// conflict means there is none and comes with a real cycle, that the
// fixpoint leaves no infeasible option, that Reaches is right, and that
// every width-two clause holds in every acyclic assignment.
func checkSound(t *testing.T, h *history.History, level history.Level, c *tally) {
	t.Helper()
	c.histories++
	si := level == history.SI
	g0, viol := hyperpolygraph.Build(h, level, nil)
	if viol != nil {
		c.buildViolations++
		return
	}
	if space(g0, spaceLimit) > spaceLimit {
		c.tooBig++
		return
	}
	c.checked++
	o := originOf(g0)
	want := acyclicSet(g0, o)
	if len(want) > 0 {
		c.acyclicBefore++
	}
	universe := map[hyperpolygraph.Edge]bool{}
	{
		es := slices.Clone(g0.Known)
		for _, p := range g0.WW {
			es = append(es, hyperpolygraph.Edge{From: p.A, To: p.B, Rel: history.WW, Key: p.Key},
				hyperpolygraph.Edge{From: p.B, To: p.A, Rel: history.WW, Key: p.Key})
		}
		for _, s := range g0.WR {
			for _, w := range s.Cands {
				es = append(es, hyperpolygraph.Edge{From: w, To: s.Reader, Rel: history.WR, Key: s.Key})
			}
		}
		for _, e := range withRW(es) {
			universe[e] = true
		}
	}

	g, _ := hyperpolygraph.Build(h, level, nil)
	st, reach, conf, err := prune.Prune(context.Background(), g, prune.Options{Settle: c.settle})
	require.NoError(t, err)
	fixpoint := c.settle == 0
	if !fixpoint && conf == nil {
		full, _ := hyperpolygraph.Build(h, level, nil)
		fst, _, fconf, err := prune.Prune(context.Background(), full, prune.Options{})
		require.NoError(t, err)
		if fconf != nil || fst.Passes != st.Passes {
			c.settled++
		} else {
			fixpoint = true
		}
	}
	if st.WWAfter < st.WWBefore || st.WRCandsAfter < st.WRCandsBefore {
		c.pruned++
	}
	if st.WRAfter < st.WRBefore {
		c.resolvedWR++
	}
	if conf != nil {
		c.conflicts++
		if conf.Options == nil {
			c.knownCyclic++
		}
		require.Empty(t, want, "pruning found a conflict in a history with an acyclic compatible graph")
		require.Nil(t, reach)
		cycles := conf.Options
		if cycles == nil {
			cycles = [][]hyperpolygraph.Edge{conf.Cycle}
		}
		require.Equal(t, conf.Cycle, cycles[0])
		for _, cyc := range cycles {
			require.NoError(t, validCycle(cyc, si), "%v", cyc)
			for _, e := range cyc {
				require.True(t, universe[e] || slices.Contains(g.Known, e), "edge %+v of the cycle is not a possible edge", e)
			}
		}
		return
	}
	require.NotNil(t, reach)

	// g.Reads agrees with g.WR.
	for k, rs := range g.Reads {
		for _, rd := range rs {
			if rd.Set >= 0 {
				require.Equal(t, history.TxnID(-1), rd.Writer)
				s := g.WR[rd.Set]
				require.Equal(t, rd.Reader, s.Reader)
				require.Equal(t, history.KeyID(k), s.Key)
			} else {
				require.True(t, slices.Contains(g.Known, hyperpolygraph.Edge{From: rd.Writer, To: rd.Reader, Rel: history.WR, Key: history.KeyID(k)}))
			}
		}
	}
	sets := 0
	for _, rs := range g.Reads {
		for _, rd := range rs {
			if rd.Set >= 0 {
				sets++
			}
		}
	}
	require.Equal(t, len(g.WR), sets)
	for _, s := range g.WR {
		require.GreaterOrEqual(t, len(s.Cands), 2)
	}

	// (a) the same acyclic assignments.
	got := acyclicSet(g, o)
	require.Equal(t, want, got)

	// The fixpoint: every remaining option is feasible on its own.
	known := g.Known
	for _, p := range g.WW {
		if !fixpoint {
			break
		}
		for _, e := range []hyperpolygraph.Edge{{From: p.A, To: p.B, Rel: history.WW, Key: p.Key}, {From: p.B, To: p.A, Rel: history.WW, Key: p.Key}} {
			require.True(t, acyclic(g.N(), withRW(append(slices.Clone(known), e)), si), "option %+v is infeasible after pruning", e)
		}
	}
	for _, s := range g.WR {
		if !fixpoint {
			break
		}
		for _, w := range s.Cands {
			e := hyperpolygraph.Edge{From: w, To: s.Reader, Rel: history.WR, Key: s.Key}
			require.True(t, acyclic(g.N(), withRW(append(slices.Clone(known), e)), si), "option %+v is infeasible after pruning", e)
		}
	}

	// Reaches is reachability in the known graph (induced graph for SI).
	adj := doubled(g.N(), known, si)
	for u := range g.N() {
		for v := range g.N() {
			want := u == v
			if g.Included[u] && g.Included[v] && u != v {
				if si {
					want = reachable(adj, 2*u, 2*v) || reachable(adj, 2*u, 2*v+1)
				} else {
					want = reachable(adj, u, v)
				}
			}
			require.Equal(t, want, reach.Reaches(history.TxnID(u), history.TxnID(v)), "Reaches(%d, %d)", u, v)
		}
	}

	// (b) every clause, width-two ones included, holds in every acyclic
	// assignment.
	enc := encode.Encode(g, reach, encode.Options{TwoWidth: true})
	c.twoWidth += enc.TwoWidth
	val := make([]bool, enc.NumVars+1)
	enumerate(g, func(fwd []bool, choice []int) {
		ok := acyclic(g.N(), compatEdges(g, fwd, choice), si)
		// The compatible graph the solvers resolve (version order as a
		// chain, over the reduced known order) agrees.
		a := hyperpolygraph.Assignment{Forward: fwd, Choice: make([]int32, len(choice))}
		for i, j := range choice {
			a.Choice[i] = int32(j)
		}
		require.Equal(t, ok, len(g.Resolve(a).FindCycles(1)) == 0, "Resolve disagrees on %v %v", fwd, choice)
		if !ok {
			return
		}
		for i := range g.WW {
			val[enc.WWVar[i]] = fwd[i]
		}
		for i, s := range g.WR {
			for j := range s.Cands {
				val[enc.WRBase[i]+int32(j)] = choice[i] == j
			}
		}
		for _, cl := range enc.Clauses {
			ok := false
			for _, l := range cl {
				if val[l.Var()] == (l > 0) {
					ok = true
					break
				}
			}
			require.True(t, ok, "clause %v fails in an acyclic assignment", cl)
		}
	})
}

func TestSoundnessRandom(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 500
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 1))
			var c tally
			for range n {
				checkSound(t, genHistory(rng), level, &c)
				if t.Failed() {
					return
				}
			}
			t.Log(c)
			require.Positive(t, c.pruned)
			require.Positive(t, c.conflicts)
			require.Positive(t, c.acyclicBefore)
			require.Positive(t, c.twoWidth)
		})
	}
}

// Pruning that settles before the fixpoint (Options.Settle, here after any
// pass that decides less than half of what is pending) keeps exactly the
// acyclic assignments, a fresh reachability and sound width-two clauses,
// as the fixpoint does; only options it has not reached may be
// infeasible.
func TestSoundnessSettled(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 400
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 2))
			c := tally{settle: 0.5}
			for range n {
				checkSound(t, genHistory(rng), level, &c)
				if t.Failed() {
					return
				}
			}
			t.Log(c, c.settled, "settled early")
			require.Positive(t, c.settled)
			require.Positive(t, c.pruned)
		})
	}
}
