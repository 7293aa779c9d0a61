package anomaly

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	hp "github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

func parse(t *testing.T, lines ...string) *history.History {
	h, err := jsonl.Parse(strings.NewReader(strings.Join(lines, "\n")), "test", jsonl.Options{})
	require.NoError(t, err)
	return h
}

// txn returns the TxnID of native id.
func txn(h *history.History, id int64) history.TxnID {
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].ID == id {
			return history.TxnID(t)
		}
	}
	panic("no such transaction")
}

func key(h *history.History, raw int64) history.KeyID {
	for k, r := range h.Keys {
		if r == raw {
			return history.KeyID(k)
		}
	}
	panic("no such key")
}

func TestClassify(t *testing.T) {
	// T1 w x=1 w y=1; T2 r x=1 w x=2; T3 r y=1 ... enough structure for
	// every class to be named on hand-made cycles.
	h := parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1],["w",2,1]]}`,
		`{"session":2,"id":2,"ops":[["r",1,1],["r",2,0],["w",1,2]]}`,
		`{"session":3,"id":3,"ops":[["r",1,0],["w",1,3]]}`,
		`{"session":4,"id":4,"ops":[["r",1,0],["w",1,4]]}`)
	t1, t2, t3, t4 := txn(h, 1), txn(h, 2), txn(h, 3), txn(h, 4)
	x, y := key(h, 1), key(h, 2)
	ww := func(a, b history.TxnID, k history.KeyID) hp.Edge {
		return hp.Edge{From: a, To: b, Rel: history.WW, Key: k}
	}
	wr := func(a, b history.TxnID, k history.KeyID) hp.Edge {
		return hp.Edge{From: a, To: b, Rel: history.WR, Key: k}
	}
	rw := func(a, b history.TxnID, k history.KeyID) hp.Edge {
		return hp.Edge{From: a, To: b, Rel: history.RW, Key: k}
	}
	so := func(a, b history.TxnID) hp.Edge { return hp.Edge{From: a, To: b, Rel: history.SO, Key: -1} }

	cases := []struct {
		name  string
		level history.Level
		cyc   []hp.Edge
		class string
		forb  bool
	}{
		// Orders the history does not state are deduced: such a cycle is
		// no G0 or G1c (the statedCases below are).
		{"deduced G0", history.SER, []hp.Edge{ww(t1, t2, x), ww(t2, t1, y)}, GSingle, true},
		{"deduced G1c", history.SER, []hp.Edge{wr(t1, t2, x), ww(t2, t1, x)}, GSingle, true},
		{"deduced G1c with two orders", history.SER, []hp.Edge{ww(t2, t3, x), ww(t3, t1, x), wr(t1, t2, x)}, G2Item, true},
		{"G-single", history.SER, []hp.Edge{rw(t2, t1, y), wr(t1, t2, x)}, GSingle, true},
		{"G2-item", history.SER, []hp.Edge{rw(t2, t1, y), rw(t1, t2, x)}, G2Item, true},
		{"write skew at SI", history.SI, []hp.Edge{rw(t2, t1, y), rw(t1, t2, x)}, G2Item, false},
		{"G-single at SI", history.SI, []hp.Edge{rw(t2, t1, y), wr(t1, t2, x)}, GSingle, true},
		{"lost update", history.SER, []hp.Edge{rw(t3, t4, x), rw(t4, t3, x)}, LostUpdate, true},
		{"lost update at SI", history.SI, []hp.Edge{ww(t3, t4, x), rw(t4, t3, x)}, LostUpdate, true},
	}
	for _, c := range cases {
		got := Classify(h, c.level, c.cyc)
		require.Equal(t, c.class, got.Class, c.name)
		require.Equal(t, c.forb, got.Forbidden, c.name)
		require.True(t, IsCycle(got.Edges), c.name)
		require.NotEmpty(t, got.Describe(h, c.level), c.name)
		require.NotEmpty(t, got.Story(h, c.level), c.name)
	}
	// Session order, reads and list reads state the orders of G0 and G1c:
	// T2, T4 and T1 in session 1, T3 reads x = [1 2] and y = [2 1], T4
	// reads x = [1].
	hl := parse(t,
		`{"session":1,"id":2,"ops":[["append",1,2],["append",2,2]]}`,
		`{"session":1,"id":4,"ops":[["r",1,[1]]]}`,
		`{"session":1,"id":1,"ops":[["append",1,1],["append",2,1]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[1,2]],["r",2,[2,1]]]}`)
	// Cycles are classified on the register view a check runs on, which
	// states the lists' orders.
	for x, err := range hl.ListExplanations(history.ListOptions{}) {
		require.NoError(t, err)
		require.NotNil(t, x.H)
		hl = x.H
		break
	}
	l1, l2, l4 := txn(hl, 1), txn(hl, 2), txn(hl, 4)
	lx, ly := key(hl, 1), key(hl, 2)
	for _, c := range []struct {
		name  string
		cyc   []hp.Edge
		class string
	}{
		{"G0", []hp.Edge{ww(l1, l2, lx), ww(l2, l1, ly)}, G0},
		{"G0 with session order", []hp.Edge{ww(l1, l2, lx), so(l2, l1)}, G0},
		{"G1c", []hp.Edge{wr(l1, l4, lx), so(l4, l1)}, G1c},
	} {
		got := Classify(hl, history.SER, c.cyc)
		require.Equal(t, c.class, got.Class, c.name)
		require.Zero(t, got.Deduced, c.name)
	}
	// The lost update keeps a given ww+rw orientation.
	got := Classify(h, history.SI, []hp.Edge{ww(t4, t3, x), rw(t3, t4, x)})
	require.Equal(t, []hp.Edge{ww(t4, t3, x), rw(t3, t4, x)}, got.Edges)
	require.Equal(t, "", Classify(h, history.SER, []hp.Edge{ww(t1, t2, x)}).Class, "not a cycle")
	require.Equal(t, 1, AdjacentRW([]hp.Edge{wr(t1, t2, x), rw(t2, t1, y), rw(t1, t2, x)}))
	require.Equal(t, -1, AdjacentRW([]hp.Edge{rw(t2, t1, y), wr(t1, t2, x)}))
	require.False(t, ForbiddenAt(history.SI, []hp.Edge{rw(t2, t1, y), rw(t1, t2, x)}))
	require.True(t, ForbiddenAt(history.SER, []hp.Edge{rw(t2, t1, y), rw(t1, t2, x)}))
}

func TestFindLostUpdateNeedsTheSameVersion(t *testing.T) {
	// T1 and T2 read x=1, but x=1 was written by T3 and T4 (duplicate
	// values): they may have read different versions.
	h := parse(t,
		`{"session":1,"id":3,"ops":[["w",1,1]]}`,
		`{"session":2,"id":4,"ops":[["w",1,1]]}`,
		`{"session":3,"id":1,"ops":[["r",1,1],["w",1,5]]}`,
		`{"session":4,"id":2,"ops":[["r",1,1],["w",1,6]]}`)
	_, ok := FindLostUpdate(h, []history.TxnID{txn(h, 1), txn(h, 2)})
	require.False(t, ok)
	h = parse(t,
		`{"session":1,"id":3,"ops":[["w",1,1]]}`,
		`{"session":3,"id":1,"ops":[["r",1,1],["w",1,5]]}`,
		`{"session":4,"id":2,"ops":[["r",1,1],["w",1,6]]}`)
	l, ok := FindLostUpdate(h, []history.TxnID{txn(h, 1), txn(h, 2)})
	require.True(t, ok)
	require.Equal(t, txn(h, 3), l.Writer)
}

func TestReasons(t *testing.T) {
	h := parse(t,
		`{"hyperiso":1,"key_names":[[1,"x"],[2,"y"]]}`,
		`{"session":1,"id":1,"ops":[["w",1,7],["w",2,1]]}`,
		`{"session":1,"id":2,"ops":[["w",1,8]]}`,
		`{"session":2,"id":3,"ops":[["r",1,7],["r",2,0]]}`,
		`{"session":3,"id":4,"ops":[["r",1,8],["w",1,9]]}`,
		`{"session":4,"id":5,"ops":[["w",1,7]]}`,
		`{"session":5,"id":6,"ops":[["r",1,7]]}`)
	t1, t2, t3, t4 := txn(h, 1), txn(h, 2), txn(h, 3), txn(h, 4)
	x, y := key(h, 1), key(h, 2)
	r := NewReasoner(h, history.SER)
	require.Equal(t, "T1 precedes T2 in session 1 (so)", r.Reason(hp.Edge{From: t1, To: t2, Rel: history.SO, Key: -1}))
	require.Equal(t, "T4 read key x = 8, which only T2 wrote (wr)", r.Reason(hp.Edge{From: t2, To: t4, Rel: history.WR, Key: x}))
	require.Contains(t, r.Reason(hp.Edge{From: t1, To: t3, Rel: history.WR, Key: x}), "which T1 and T5 all wrote")
	require.Equal(t, "T1 overwrote the initial value of key y (0) that T3 read (rw)", r.Reason(hp.Edge{From: t3, To: t1, Rel: history.RW, Key: y}))
	// Version orders, with their reason.
	require.Contains(t, r.Reason(hp.Edge{From: t1, To: t2, Rel: history.WW, Key: x}), "T2's version (key x = 8) is later because T1 precedes T2 in session 1 (ww)")
	require.Contains(t, r.Reason(hp.Edge{From: t2, To: t4, Rel: history.WW, Key: x}), "because T4 read key x = 8 from T2 before writing it")
	require.Contains(t, r.Reason(hp.Edge{From: t4, To: t2, Rel: history.RW, Key: x}), "T2 overwrote the value 8 of key x")
	require.Equal(t, "wr(x)", Label(h, hp.Edge{From: t2, To: t4, Rel: history.WR, Key: x}))
}

func TestBestCyclePrefersSpecificClasses(t *testing.T) {
	// Two cycles over T1, T2: a G1c one (wr both ways) and a G2-item one
	// (rw both ways); BestCycle picks G1c, then G-single before G2.
	e := []hp.Edge{
		{From: 1, To: 2, Rel: history.RW, Key: 0},
		{From: 2, To: 1, Rel: history.RW, Key: 1},
		{From: 1, To: 2, Rel: history.WR, Key: 2},
		{From: 2, To: 3, Rel: history.WR, Key: 3},
		{From: 3, To: 1, Rel: history.WW, Key: 4},
	}
	idx := BestCycle(4, e, history.SER)
	require.ElementsMatch(t, []int{2, 3, 4}, idx)
	idx = BestCycle(4, e[:2], history.SER)
	require.Len(t, idx, 2)
	// At SI two adjacent rw edges are no cycle.
	require.Nil(t, BestCycle(4, e[:2], history.SI))
	idx = BestCycle(4, []hp.Edge{e[0], e[1], {From: 2, To: 1, Rel: history.WR, Key: 5}}, history.SER)
	require.Len(t, idx, 2)
	require.Equal(t, history.RW, []hp.Edge{e[0], e[1], {From: 2, To: 1, Rel: history.WR, Key: 5}}[idx[0]].Rel, "G-single: one rw edge")
}

// TestPathWithinBudget: the certain graph behind Path asks the budget; a
// refusal leaves Path without chains rather than the caller without an
// answer, and at SI the path runs over the doubled graph's states.
func TestPathWithinBudget(t *testing.T) {
	h := parse(t,
		`{"hyperiso":1}`,
		`{"session":1,"id":1,"ops":[["w",1,1]]}`,
		`{"session":1,"id":2,"ops":[["w",2,1]]}`,
		`{"session":2,"id":3,"ops":[["r",2,1],["w",3,1]]}`)
	t1, t3 := txn(h, 1), txn(h, 3)
	for _, level := range []history.Level{history.SER, history.SI, history.StrictSER} {
		r := NewReasoner(h, level)
		path := r.Path(t1, t3)
		require.Len(t, path, 2, "%s: so then wr", level)
		require.Equal(t, history.SO, path[0].Rel)
		require.Equal(t, history.WR, path[1].Rel)

		refused := NewReasoner(h, level)
		asked := false
		refused.Fit = func(need int64, what string) error {
			asked = true
			return errNoRoom
		}
		require.Nil(t, refused.Path(t1, t3), "%s", level)
		require.True(t, asked, "%s: the budget was not asked", level)
	}
}

var errNoRoom = errors.New("no room")
