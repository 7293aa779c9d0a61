package prune_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// genRenewed returns a history in the shape of a Jepsen run over few keys:
// procs processes, each taking a new session id after a transaction with
// probability renew, committing transactions that read from a recent
// snapshot, one of the last window states (so many version orders stay
// open without real time) and, with probability lost, skip the
// first-committer-wins test. With window 1 the history is serial.
func genRenewed(rng *rand.Rand, txns, procs, keys, window int, renew, lost float64) *history.History {
	b := history.NewBuilder("renewed", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	sess := make([]int64, procs)
	for i := range sess {
		sess[i] = int64(i)
	}
	nextSess := int64(procs)
	seen := make([]int, procs)
	// states[k] is the store after k commits, writer[k][x] the commit
	// that last wrote x by then.
	states := [][]int64{make([]int64, keys)}
	writer := [][]int{make([]int, keys)}
	next := int64(1)
	for i := range txns {
		p := rng.IntN(procs)
		if rng.Float64() < renew {
			sess[p], nextSess = nextSess, nextSess+1
		}
		// A process's snapshots only grow and hold its own commits.
		snap := max(len(states)-1-rng.IntN(min(len(states), window)), seen[p])
		seen[p] = snap
		writes := map[int64]int64{}
		conflict := false
		type op struct {
			read bool
			x, v int64
		}
		var ops []op
		for range 1 + rng.IntN(3) {
			x := int64(rng.IntN(keys))
			if rng.IntN(2) == 0 {
				v, ok := writes[x]
				if !ok {
					v = states[snap][x]
				}
				ops = append(ops, op{true, x, v})
				continue
			}
			writes[x] = next
			ops = append(ops, op{false, x, next})
			next++
			if writer[len(writer)-1][x] > snap {
				conflict = true
			}
		}
		st := history.Committed
		if conflict && rng.Float64() >= lost {
			st = history.Aborted
		}
		id := b.Begin(b.Session(sess[p]), int64(i+1), st, history.Pos{})
		for _, o := range ops {
			if o.read {
				b.Read(id, o.x, o.v)
			} else {
				b.Write(id, o.x, o.v)
			}
		}
		if st == history.Committed && len(writes) > 0 {
			s := append([]int64(nil), states[len(states)-1]...)
			w := append([]int(nil), writer[len(writer)-1]...)
			for x, v := range writes {
				s[x] = v
				w[x] = len(states)
			}
			states = append(states, s)
			writer = append(writer, w)
			seen[p] = len(states) - 1
		}
	}
	return b.Finish()
}

// TestIncrementalSame: keeping the bitset rows that cannot have changed,
// and skipping the WW pairs whose writers' rows did not change, leaves
// every pruning with the statistics, known edges, undecided pairs and
// sets, conflict and reachability that full fills and testing every pair
// give, on small random histories and on few-key ones of many passes and
// renewed sessions (a few of them with rows of more than 64 words).
func TestIncrementalSame(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(53, uint64(level)))
			opt := oracle.DefaultGenOptions()
			rows0, pairs0 := prune.IncrementalCounts()
			multi, conflicts, wide := 0, 0, 0
			for i := range n + 206 {
				var h *history.History
				switch {
				case i < n:
					h = genMixed(rng, i, opt)
				case i >= n+200:
					// Over 4,096 states: rows of more than 64 words,
					// so more than one word of changed-word bits.
					txns, window := 3500, 6
					if level == history.SER {
						txns, window = 6500, 1
					}
					h = genRenewed(rng, txns, 10, 6, window, 0.1, 0)
				default:
					lost := 0.0
					if i%4 == 0 {
						lost = 0.05
					}
					h = genRenewed(rng, 50+rng.IntN(250), 2+rng.IntN(8), 2+rng.IntN(6), 1+rng.IntN(8), rng.Float64()*0.3, lost)
				}
				g, full, ok := buildTwice(t, h, level, i%2 == 0)
				if !ok {
					continue
				}
				st, r, conf, err := prune.Prune(context.Background(), g, prune.Options{Reach: prune.Bitset})
				require.NoError(t, err)
				was := prune.SetIncremental(false)
				fullSt, fullR, fullConf, err := prune.Prune(context.Background(), full, prune.Options{Reach: prune.Bitset})
				prune.SetIncremental(was)
				require.NoError(t, err)
				require.Equal(t, fullConf, conf, "history %d: the same conflict", i)
				require.Equal(t, fullSt, st, "history %d", i)
				require.Equal(t, full.Known, g.Known, "history %d: the same known edges", i)
				require.Equal(t, full.WW, g.WW, "history %d: the same undecided pairs", i)
				require.Equal(t, full.WR, g.WR, "history %d", i)
				require.Equal(t, fullR == nil, r == nil, "history %d", i)
				if r != nil {
					m := int32(len(g.Included)) // a bound on the nodes
					for s := range m * int32(r.Layers()) {
						if s >= int32(st.States) {
							break
						}
						row, _ := r.Source(s)
						fullRow, _ := fullR.Source(s)
						require.Equal(t, fullRow, row, "history %d: the row of state %d", i, s)
					}
				}
				if conf != nil {
					conflicts++
				}
				if st.States > 64*64 && st.Passes >= 3 {
					wide++
				}
				if st.Passes >= 3 {
					multi++
				}
			}
			rows, pairs := prune.IncrementalCounts()
			t.Logf("%d histories of three passes or more (%d of over 4,096 states), %d conflicts; %d rows recomputed in part, %d pairs skipped", multi, wide, conflicts, rows-rows0, pairs-pairs0)
			require.GreaterOrEqual(t, wide, 3, "too few wide histories of several passes")
			require.Greater(t, multi, n/20, "too few histories of several passes")
			require.Greater(t, rows-rows0, int64(n), "too few rows kept")
			require.Greater(t, pairs-pairs0, int64(n/10), "too few pairs skipped")
		})
	}
}
