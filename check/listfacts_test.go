package check

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

func parseJSONL(t *testing.T, lines ...string) *history.History {
	t.Helper()
	h, err := jsonl.Parse(strings.NewReader(strings.Join(lines, "\n")+"\n"), "mem.jsonl", jsonl.Options{})
	require.NoError(t, err)
	return h
}

func checkAt(t *testing.T, h *history.History, level history.Level) *Result {
	t.Helper()
	res, err := Check(context.Background(), h, level, Options{})
	require.NoError(t, err)
	return res
}

func classes(res *Result) []string {
	var out []string
	for _, a := range res.Anomalies {
		out = append(out, a.Class)
	}
	return out
}

// The list-append example of the Elle paper, written as JSONL: the lists
// mean what they mean in EDN (it used to be satisfied here).
func TestListMeaningInJSONL(t *testing.T) {
	h := parseJSONL(t,
		`{"session":0,"id":1,"ops":[["append",2,5],["append",1,1]]}`,
		`{"session":1,"id":2,"ops":[["append",1,2],["r",2,[]]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[1,2]]]}`)
	res := checkAt(t, h, history.SER)
	require.Equal(t, Violated, res.Verdict)
	require.Equal(t, []string{"G-single"}, classes(res))
	require.Equal(t, Violated, checkAt(t, h, history.SI).Verdict)
	// Read skew is allowed at CC and below.
	for _, l := range []history.Level{history.CC, history.RA, history.RC} {
		require.Equal(t, Satisfied, checkAt(t, h, l).Verdict, "%v", l)
	}
}

// Version orders that list reads reveal are known order at every level:
// lists [1 2] on x and [2 1] on y are a write cycle (G0) even at RC.
func TestListOrdersAtWeakLevels(t *testing.T) {
	h := parseJSONL(t,
		`{"session":0,"id":1,"ops":[["append",1,1],["append",2,1]]}`,
		`{"session":1,"id":2,"ops":[["append",1,2],["append",2,2]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[1,2]],["r",2,[2,1]]]}`)
	for _, l := range []history.Level{history.SER, history.SI, history.CC, history.RA, history.RC} {
		res := checkAt(t, h, l)
		require.Equal(t, Violated, res.Verdict, "%v", l)
		require.Equal(t, []string{"G0"}, classes(res), "%v", l)
	}
	// A list read after the reader's own append shows what it saw, then
	// its own appends, at every level: T2 saw [1], T3 saw [2] (T2's
	// block), and no order of the key gives both.
	h = parseJSONL(t,
		`{"session":0,"id":1,"ops":[["append",1,1]]}`,
		`{"session":1,"id":2,"ops":[["append",1,2],["r",1,[1,2]]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[2]]]}`)
	for _, l := range []history.Level{history.SER, history.PSI, history.CC, history.RC} {
		res := checkAt(t, h, l)
		require.Equal(t, Violated, res.Verdict, "%v", l)
		require.Equal(t, "incompatible-order", res.Anomalies[0].Type, "%v", l)
	}
}

// A list element that only its reader appends, later, is a future read
// wherever it stands in the list (it used to be missed unless last).
func TestFutureReadInsideList(t *testing.T) {
	h := parseJSONL(t, `{"session":0,"id":1,"ops":[["append",1,1],["r",1,[0,1]],["append",1,0]]}`)
	for _, l := range []history.Level{history.SER, history.SI, history.CC, history.RA, history.RC} {
		res := checkAt(t, h, l)
		require.Equal(t, Violated, res.Verdict, "%v", l)
		require.Equal(t, "future-read", res.Anomalies[0].Type, "%v", l)
	}
	// Its own earlier append is an internal read, not a future one.
	h = parseJSONL(t, `{"session":0,"id":1,"ops":[["append",1,0],["append",1,1],["r",1,[0,1]]]}`)
	require.Equal(t, Satisfied, checkAt(t, h, history.SER).Verdict)
}

// strict-ser and --realtime need timing; without it they are refused, not
// answered as plain SER.
func TestRealTimeNeedsTiming(t *testing.T) {
	h := parseJSONL(t, `{"session":0,"id":1,"ops":[["w",1,1]]}`)
	_, err := Check(context.Background(), h, history.StrictSER, Options{})
	require.ErrorIs(t, err, ErrInput)
	require.Contains(t, err.Error(), "strict-ser needs real-time order")
	_, err = Check(context.Background(), h, history.SER, Options{RealTime: true})
	require.ErrorIs(t, err, ErrInput)
	timed := parseJSONL(t,
		`{"session":0,"id":1,"time":[0,1],"ops":[["w",1,1]]}`,
		`{"session":1,"id":2,"time":[2,3],"ops":[["r",1,0]]}`)
	require.Equal(t, Satisfied, checkAt(t, timed, history.SER).Verdict)
	require.Equal(t, Violated, checkAt(t, timed, history.StrictSER).Verdict, "T2 began after T1 committed, yet missed its write")
}

// A history with nothing that may have committed is refused, never
// satisfied.
func TestNothingToCheck(t *testing.T) {
	h := parseJSONL(t, `{"session":0,"id":1,"status":"aborted","ops":[["w",1,1]]}`)
	for _, l := range []history.Level{history.SER, history.RC} {
		_, err := Check(context.Background(), h, l, Options{})
		require.True(t, errors.Is(err, ErrInput), "%v: %v", l, err)
		require.Contains(t, err.Error(), "nothing to check")
	}
}

// The history-order probe follows the version orders the lists state, not
// the order the transactions completed in: here T2's append precedes T1's
// in the list though T1 completed first, which is serializable (T2, T1, T3)
// but not strictly (real time puts T1 first). The Elle example above,
// timed, stays violated with the probe tried in vain.
func TestProbeFollowsListOrders(t *testing.T) {
	h := parseJSONL(t,
		`{"session":0,"id":1,"time":[0,1],"ops":[["append",1,1]]}`,
		`{"session":1,"id":2,"time":[2,3],"ops":[["append",1,2]]}`,
		`{"session":2,"id":3,"time":[4,5],"ops":[["r",1,[2,1]]]}`)
	for _, l := range []history.Level{history.SER, history.SI} {
		res := checkAt(t, h, l)
		require.Equal(t, Satisfied, res.Verdict, "%v", l)
		require.Equal(t, int64(1), res.Counters["order_probe"], "%v", l)
		var ids []int64
		for _, w := range res.Witness {
			ids = append(ids, w.ID)
		}
		require.Equal(t, []int64{2, 1, 3}, ids, "%v", l)
	}
	res := checkAt(t, h, history.StrictSER)
	require.Equal(t, Violated, res.Verdict)

	elle := parseJSONL(t,
		`{"session":0,"id":1,"time":[0,1],"ops":[["append",2,5],["append",1,1]]}`,
		`{"session":1,"id":2,"time":[2,3],"ops":[["append",1,2],["r",2,[]]]}`,
		`{"session":2,"id":3,"time":[4,5],"ops":[["r",1,[1,2]]]}`)
	for _, l := range []history.Level{history.SER, history.SI} {
		res := checkAt(t, elle, l)
		require.Equal(t, Violated, res.Verdict, "%v", l)
		require.Equal(t, int64(0), res.Counters["order_probe"], "%v", l)
	}
}
