package elle_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// edgeString renders an edge with native transaction ids and input keys.
func edgeString(h *history.History, e hyperpolygraph.Edge) string {
	s := fmt.Sprintf("T%d-%s", h.Txns[e.From].ID, e.Rel)
	if e.Key >= 0 {
		s += "(" + h.KeyString(e.Key) + ")"
	}
	return s + fmt.Sprintf("->T%d", h.Txns[e.To].ID)
}

// rotate renders a cycle starting at its edge out of the smallest id.
func rotate(h *history.History, cyc []hyperpolygraph.Edge) []string {
	start := 0
	for i, e := range cyc {
		if h.Txns[e.From].ID < h.Txns[cyc[start].From].ID {
			start = i
		}
	}
	var out []string
	for i := range cyc {
		out = append(out, edgeString(h, cyc[(start+i)%len(cyc)]))
	}
	return out
}

// The Elle paper's Figure 2: T6 = {[:append 250 10] [:r 253 [1 3 4]] [:r 255
// [2 3 4 5]] [:append 256 3]}, T2 = {[:append 255 8] [:r 253 [1 3 4]]},
// T4 = {[:append 256 4] [:r 255 [2 3 4 5 8]] [:r 256 [1 2 4]] [:r 253 [1 3 4]]}
// (ids are the invocations' :index). T6 did not see T2's append of 8 to 255
// (rw), T4 saw it (wr), and T6's append of 3 to 256 came after T4's append
// of 4 (ww): 3 is missing from T4's read [1 2 4]. One rw edge: G-single.
var paperCycle = []string{"T2-wr(255)->T4", "T4-ww(256)->T6", "T6-rw(255)->T2"}

func TestPaperExample(t *testing.T) {
	h, err := elle.Read(shared.Path(t, "elle", "paper-example.edn"), elle.Options{})
	require.NoError(t, err)
	for _, level := range []history.Level{history.SER, history.SI} {
		v := hintDecide(t, h, level, false)
		require.True(t, v.decided)
		require.False(t, v.ok, "%v", level)
		require.Equal(t, paperCycle, rotate(h, v.cycle), "%v", level)
	}
	// The three transactions between them touch keys 253, 255 and 256.
	keys := map[string]bool{}
	for _, id := range []int64{2, 4, 6} {
		for tx := range h.Txns {
			if h.Txns[tx].ID == id && tx != int(history.InitTxn) {
				for _, op := range h.Txns[tx].Ops {
					keys[h.KeyString(op.Key)] = true
				}
			}
		}
	}
	for _, k := range []string{"253", "255", "256"} {
		require.True(t, keys[k], k)
	}
	// Without the version hints the register projection is serializable:
	// the hints are what exposes the anomaly.
	g, viol := hyperpolygraph.Build(listViewH(t, h), history.SER, nil)
	require.Nil(t, viol)
	ww := len(g.WW)
	require.Nil(t, g.ApplyVersionHints(g.H.VersionHints))
	require.Less(t, len(g.WW), ww)

	// T4's append precedes T6's at SER and SI, where writers of one key
	// see each other (T4 installed its block right after what it read).
	require.Equal(t, check.Violated, checkVerdict(t, h, history.SI).Verdict)
	res := checkVerdict(t, h, history.SER)
	require.Equal(t, check.Violated, res.Verdict)
	require.Len(t, res.Anomalies, 1)
	a := res.Anomalies[0]
	require.Equal(t, "G-single", a.Type)
	var got []string
	for _, e := range a.Edges {
		got = append(got, fmt.Sprintf("T%d-%s(%d)->T%d", e.From, e.Relation, *e.Key, e.To))
	}
	for len(got) > 0 && got[0] != paperCycle[0] {
		got = append(got[1:], got[0])
	}
	require.Equal(t, paperCycle, got)
	var ids []int64
	for _, r := range a.Txns {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	require.Equal(t, []int64{2, 4, 6}, ids)
}

// A stale read: serializable, but not strictly serializable.
func TestRealTimeViolation(t *testing.T) {
	h := readTestdata(t, "realtime-stale-read.edn")
	for _, level := range []history.Level{history.SER, history.SI} {
		require.Equal(t, check.Satisfied, checkVerdict(t, h, level).Verdict, "%v", level)
		require.True(t, hintDecide(t, h, level, false).ok)
	}
	g, viol := hyperpolygraph.Build(listViewH(t, h), history.SER, nil)
	require.Nil(t, viol)
	g.ApplyVersionHints(g.H.VersionHints)
	rt := g.AddRealTime()
	var got []string
	for _, e := range rt {
		got = append(got, edgeString(h, e))
	}
	require.Equal(t, []string{"T0-rt->T2"}, got)
	v := hintDecide(t, h, history.SER, true)
	require.True(t, v.decided)
	require.False(t, v.ok)
	require.Equal(t, []string{"T0-rt->T2", "T2-rw(1)->T0"}, rotate(h, v.cycle))
	// :time gives the same order as :index.
	g, _ = hyperpolygraph.Build(listViewH(t, h), history.SER, nil)
	require.Len(t, g.AddRealTime(), 1)
}

// Verdicts on the hand-written histories, SER and SI alike.
func TestTestdataVerdicts(t *testing.T) {
	for _, tc := range []struct {
		file string
		ok   bool
	}{
		{"info-fail.edn", true},
		{"crashed-process.edn", true},
		{"duplicate-appends.edn", true},
		{"incompatible-order.edn", false},
		{"realtime-stale-read.edn", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h := readTestdata(t, tc.file)
			for _, level := range []history.Level{history.SER, history.SI} {
				v := hintDecide(t, h, level, false)
				require.True(t, v.decided)
				require.Equal(t, tc.ok, v.ok, "%v", level)
				res := checkVerdict(t, h, level)
				if checkUsesHints(t) || tc.ok {
					require.Equal(t, tc.ok, res.Verdict == check.Satisfied, "%v %+v", level, res.Anomalies)
				}
			}
		})
	}
	// The incompatible order is a finding of the lists alone.
	h := readTestdata(t, "incompatible-order.edn")
	_, fs := listView(t, h)
	require.Len(t, fs, 1)
	require.Equal(t, history.IncompatibleOrder, fs[0].Kind)
	// The crashed process's append was observed: its transaction committed.
	h = readTestdata(t, "crashed-process.edn")
	require.Equal(t, history.Unknown, h.Txns[2].Status)
	require.Equal(t, int64(1), h.SessionOf(2))
	require.Equal(t, int64(3), h.SessionOf(3))
}
