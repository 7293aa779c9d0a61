package strong_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong"
)

// The history-order probe only ever answers "satisfied", with a witness
// that replays; on every history the default strategy (probe first) and the
// search alone (strong.NoProbe) agree. Most histories carry the intervals
// of their simulated execution (so the probe's guess is often right), some
// random ones (mostly wrong), some none (the file's order, interleaved).
// A tenth of the transactions have an unknown outcome, which the probe
// takes as committed. The test fails unless the probe both decided
// (sometimes taking unknown ones) and was tried in vain many times, at
// every level.
func TestProbeAgreesWithSearch(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 400
	}
	rng := rand.New(rand.NewPCG(21, 5))
	opts := oracle.DefaultGenOptions()
	opts.MinTxns, opts.Txns = 6, 30
	opts.Sessions, opts.Keys, opts.Values = 6, 4, 6
	dup := oracle.DupGenOptions()
	dup.MinTxns, dup.Txns, dup.Sessions, dup.Keys = 6, 24, 5, 3
	counts := map[string]int{}
	for i := range n {
		o := opts
		if i%3 == 2 {
			o = dup
		}
		o.Times = i%5 < 3
		h := oracle.Generate(rng, o)
		if i%5 == 3 {
			randomIntervals(rng, h)
		}
		levels := []history.Level{history.SER, history.SI}
		if len(h.Txns) > 1 && h.Txns[1].Timed {
			levels = append(levels, history.StrictSER)
		}
		for _, level := range levels {
			res := agreeOn(t, i, h, level, strong.Strategies[0], strong.NoProbe)
			if p, ok := res.Counters["order_probe"]; ok {
				counts[fmt.Sprintf("%s probe=%d", level, p)]++
				if p == 1 {
					require.Equal(t, check.Satisfied, res.Verdict)
					if res.Counters["unknown_taken"] > 0 {
						counts["probe took unknown"]++
					}
				}
			}
			counts[fmt.Sprintf("%s=%s", level, res.Verdict)]++
		}
	}
	t.Logf("over %d histories: %v", n, counts)
	require.Greater(t, counts["probe took unknown"], n/40, "the probe took unknown-status transactions too rarely")
	for _, level := range []history.Level{history.SER, history.SI, history.StrictSER} {
		require.Greater(t, counts[fmt.Sprintf("%s probe=1", level)], n/15, "%s: the probe decided too rarely to be tested", level)
		require.Greater(t, counts[fmt.Sprintf("%s probe=0", level)], n/20, "%s: the probe failed too rarely", level)
		require.Greater(t, counts[fmt.Sprintf("%s=violated", level)], n/20, level)
	}
}

// randomIntervals gives every transaction of h a random real-time interval:
// an order that is mostly wrong.
func randomIntervals(rng *rand.Rand, h *history.History) {
	for x := 1; x < len(h.Txns); x++ {
		s := rng.Int64N(1000)
		h.Txns[x].Start, h.Txns[x].End, h.Txns[x].Timed = s, s+rng.Int64N(100), true
	}
}

// agreeOn checks h (history i of a test) at level with strategy a alone,
// then b alone: the same verdict, and every witness replays (strict-ser's
// as the serial order it also is). It returns a's result.
func agreeOn(t *testing.T, i int, h *history.History, level history.Level, a, b strong.Strategy) *check.Result {
	t.Helper()
	var results [2]*check.Result
	for j, s := range []strong.Strategy{a, b} {
		saved := strong.Strategies
		strong.Strategies = []strong.Strategy{s}
		res, err := check.Check(context.Background(), h, level, check.Options{})
		strong.Strategies = saved
		require.NoError(t, err)
		if res.Verdict == check.Satisfied {
			replay := level
			if level == history.StrictSER {
				replay = history.SER
			}
			checkWitness(t, h, replay, res)
		}
		results[j] = res
	}
	if results[0].Verdict != results[1].Verdict {
		t.Fatalf("history %d, %s: %s with %s, %s with %s\n%s", i, level, results[0].Verdict, a.Name, results[1].Verdict, b.Name, oracle.Format(h))
	}
	return results[0]
}

// The probe asks the memory budget first; refused, it is skipped (counter
// -1) and the search decides as before.
func TestProbeAsksTheBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 8))
	opts := oracle.DefaultGenOptions()
	opts.Times = true
	asked := 0
	for i := range 200 {
		h := oracle.Generate(rng, opts)
		if len(h.Validate()) > 0 {
			continue // Decide takes validated histories
		}
		for _, level := range []history.Level{history.SER, history.SI} {
			want, err := strong.Decide(context.Background(), h, level, strong.Options{})
			require.NoError(t, err)
			got, err := strong.Decide(context.Background(), h, level, strong.Options{Fit: func(need int64, what string) error {
				if what == "the history-order probe" {
					asked++
					require.Positive(t, need)
					return errors.New("no room")
				}
				return nil
			}})
			require.NoError(t, err)
			require.Equal(t, want.Verdict, got.Verdict, "history %d, %s", i, level)
			if p, ok := got.Counters["order_probe"]; ok {
				require.Equal(t, int64(-1), p)
			}
		}
	}
	require.Greater(t, asked, 50)
}

// TestProbeSnapshotFromOneOrder: without real time, an SI reader of a
// repeated value observes the writer its other reads' snapshot holds, not
// the latest one before it. In each round R read b's initial value (so its
// snapshot precedes T2) and a = 1, which T1 and, after T2 in T2's session,
// T3 wrote: the probe must take T1's, or its guess closes
// R -rw-> T2 -so-> T3 -wr-> R. Six rounds interleave the sessions enough
// for the file's order to be a guess.
func TestProbeSnapshotFromOneOrder(t *testing.T) {
	lines := []string{`{"hyperiso":1,"init":"zero"}`}
	id := 0
	for round := range 6 {
		a, b := fmt.Sprintf("a%d", round), fmt.Sprintf("b%d", round)
		for _, l := range []string{
			`{"session":1,"id":%d,"ops":[["w","` + a + `",1]]}`,
			`{"session":2,"id":%d,"ops":[["w","` + b + `",5]]}`,
			`{"session":2,"id":%d,"ops":[["w","` + a + `",1]]}`,
			`{"session":3,"id":%d,"ops":[["r","` + a + `",1],["r","` + b + `",0]]}`,
		} {
			id++
			lines = append(lines, fmt.Sprintf(l, id))
		}
	}
	h, err := jsonl.Parse(strings.NewReader(strings.Join(lines, "\n")), "snapshot", jsonl.Options{})
	require.NoError(t, err)
	res, err := check.Check(context.Background(), h, history.SI, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Satisfied, res.Verdict)
	require.EqualValues(t, 1, res.Counters["order_probe"], "the probe's guess decides: %v", res.Counters)
}

// serialRun is a serial execution of random transactions (reads of the
// latest value, writes of unique values) over sessions, each transaction's
// session and operations; it lists them in the order they ran.
type serialTxn struct {
	session int
	ops     [][3]int64 // kind (0 read, 1 write), key, value
}

func serialRun(rng *rand.Rand, sessions, txns, keys int) []serialTxn {
	latest := make([]int64, keys)
	next := int64(1)
	out := make([]serialTxn, txns)
	for i := range out {
		out[i].session = rng.IntN(sessions)
		for range 6 {
			k := rng.IntN(keys)
			if rng.IntN(2) == 0 {
				out[i].ops = append(out[i].ops, [3]int64{0, int64(k), latest[k]})
			} else {
				latest[k] = next
				out[i].ops = append(out[i].ops, [3]int64{1, int64(k), next})
				next++
			}
		}
	}
	return out
}

// build lists run's transactions in order (indexes into run).
func buildRun(run []serialTxn, order []int) *history.History {
	b := history.NewBuilder("serial run", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	for id, i := range order {
		tx := run[i]
		t := b.Begin(b.Session(int64(tx.session)), int64(id+1), history.Committed, history.Pos{})
		for _, op := range tx.ops {
			if op[0] == 0 {
				b.Read(t, op[1], op[2])
			} else {
				b.Write(t, op[1], op[2])
			}
		}
	}
	return b.Finish()
}

// A file whose sessions are interleaved at random is no commit order: the
// probe is not tried there (counter -2), is tried and decides in the order
// the transactions ran, and the verdict is the same.
func TestProbeSkipsAShuffledFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	run := serialRun(rng, 8, 600, 60)
	inOrder := make([]int, len(run))
	for i := range inOrder {
		inOrder[i] = i
	}
	// Each session's transactions in their order, the sessions merged at
	// random.
	queues := map[int][]int{}
	for i, tx := range run {
		queues[tx.session] = append(queues[tx.session], i)
	}
	var shuffled []int
	for len(shuffled) < len(run) {
		s := rng.IntN(8)
		if len(queues[s]) > 0 {
			shuffled = append(shuffled, queues[s][0])
			queues[s] = queues[s][1:]
		}
	}
	for _, c := range []struct {
		order []int
		probe int64
	}{{inOrder, 1}, {shuffled, -2}} {
		h := buildRun(run, c.order)
		require.Empty(t, h.Validate())
		for _, level := range []history.Level{history.SER, history.SI} {
			out, err := strong.Decide(context.Background(), h, level, strong.Options{})
			require.NoError(t, err)
			require.Equal(t, "satisfied", out.Verdict.String(), "%s", level)
			require.Equal(t, c.probe, out.Counters["order_probe"], "%s", level)
		}
	}
}
