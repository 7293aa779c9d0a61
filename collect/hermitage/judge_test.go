package hermitage

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

type op struct {
	write    bool
	key, val int64
}

type tx struct {
	status history.Status
	ops    []op
}

func rd(k, v int64) op { return op{key: k, val: v} }
func wr(k, v int64) op { return op{write: true, key: k, val: v} }

// synthetic builds the history of transactions, one session each.
func synthetic(txs ...tx) *history.History {
	b := history.NewBuilder("synthetic", "collect")
	b.SetInit(history.InitImplicit, -1)
	b.InitAllKeys(0)
	for i, t := range txs {
		id := b.Begin(b.Session(int64(i+1)), int64(i+1), t.status, history.Pos{})
		for _, o := range t.ops {
			if o.write {
				b.Write(id, o.key, o.val)
			} else {
				b.Read(id, o.key, o.val)
			}
		}
	}
	return b.Finish()
}

const (
	ok = history.Committed
	ab = history.Aborted
)

// TestJudgeFindsEachAnomalyAtItsLevel checks the anomaly → level map the
// matrix relies on: the history of each anomaly, as the scenarios would
// record it, violates the scenario's level (and no weaker one where the
// anomaly is the only thing wrong).
func TestJudgeFindsEachAnomalyAtItsLevel(t *testing.T) {
	cases := []struct {
		scenario string
		h        *history.History
		weakest  history.Level
	}{
		{"G1a", synthetic(tx{ab, []op{wr(1, 101)}}, tx{ok, []op{rd(1, 101), rd(2, 0)}}), history.RC},
		{"G1b", synthetic(tx{ok, []op{wr(1, 101), wr(1, 11)}}, tx{ok, []op{rd(1, 101), rd(2, 0)}}), history.RC},
		{"G1c", synthetic(tx{ok, []op{wr(1, 11), rd(2, 22)}}, tx{ok, []op{wr(2, 22), rd(1, 11)}}), history.RC},
		// T3 sees T2's write of 1, then T1's write of 2 that T2
		// overwrote, as its last look shows.
		{"OTV", synthetic(tx{ok, []op{wr(1, 11), wr(2, 19)}}, tx{ok, []op{wr(1, 12), wr(2, 18)}},
			tx{ok, []op{rd(1, 12), rd(2, 19), rd(1, 12), rd(2, 18)}}, tx{ok, []op{rd(1, 12), rd(2, 18)}}), history.RC},
		// Without that last look the version order is open, and only
		// T3's fractured read shows.
		{"OTV", synthetic(tx{ok, []op{wr(1, 11), wr(2, 19)}}, tx{ok, []op{wr(1, 12), wr(2, 18)}},
			tx{ok, []op{rd(1, 12), rd(2, 19)}}, tx{ok, []op{rd(1, 12), rd(2, 18)}}), history.RA},
		{"P4", synthetic(tx{ok, []op{rd(1, 0), wr(1, 11)}}, tx{ok, []op{rd(1, 0), wr(1, 12)}}, tx{ok, []op{rd(1, 12), rd(2, 0)}}), history.SI},
		{"G-single", synthetic(tx{ok, []op{rd(1, 0), rd(2, 18)}}, tx{ok, []op{rd(1, 0), rd(2, 0), wr(1, 12), wr(2, 18)}}), history.RA},
		{"G2-item", synthetic(tx{ok, []op{rd(1, 0), rd(2, 0), wr(1, 11)}}, tx{ok, []op{rd(1, 0), rd(2, 0), wr(2, 21)}}), history.SER},
		// The observer sees T2's write of 1 and T1's of 2: a write cycle
		// shows in a history without version order as the observer's
		// fractured read.
		{"G0", synthetic(tx{ok, []op{wr(1, 11), wr(2, 21)}}, tx{ok, []op{wr(1, 12), wr(2, 22)}}, tx{ok, []op{rd(1, 12), rd(2, 21)}}), history.RA},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			sc, found := Lookup(c.scenario)
			require.True(t, found)
			cell, err := Judge(context.Background(), &Run{Scenario: c.scenario, History: c.h})
			require.NoError(t, err)
			require.Equal(t, c.weakest, cell.Weakest, "anomalies %v", cell.Anomalies)
			require.Len(t, cell.Verdicts, len(Checked))
			if c.weakest <= sc.Level {
				require.True(t, cell.Occurred(sc))
			}
		})
	}
}
