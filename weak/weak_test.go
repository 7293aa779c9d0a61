package weak

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

// parse reads a history in the native JSONL format.
func parse(t *testing.T, lines ...string) *history.History {
	t.Helper()
	h, err := jsonl.Parse(strings.NewReader(strings.Join(lines, "\n")), "test", jsonl.Options{})
	require.NoError(t, err)
	return h
}

func check(t *testing.T, h *history.History, level history.Level, opt Options) *Result {
	t.Helper()
	res, err := Check(context.Background(), h, level, opt)
	require.NoError(t, err)
	checkResult(t, h, res)
	return res
}

func TestLevels(t *testing.T) {
	h := parse(t, `{"session":1,"ops":[["w",1,1]]}`)
	_, err := Check(context.Background(), h, history.SI, Options{})
	require.Error(t, err)
	for _, level := range weakLevels {
		require.Equal(t, verdict.Satisfied, check(t, h, level, Options{}).Verdict)
	}
}

func TestDuplicateValues(t *testing.T) {
	h := parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1]]}`,
		`{"session":2,"id":2,"ops":[["w",1,1]]}`,
		`{"session":3,"id":3,"ops":[["r",1,1],["r",2,5]]}`,
		`{"session":3,"id":4,"ops":[["r",1,1]]}`,
	)
	for _, level := range weakLevels {
		res := check(t, h, level, Options{})
		// The thin-air read of key 2 decides the verdict all the same.
		require.Equal(t, verdict.Violated, res.Verdict)
		require.Len(t, res.Findings, 1)
		require.NotNil(t, res.Duplicates)
		require.Equal(t, 2, res.Duplicates.Reads)
		require.Equal(t, []history.TxnID{1, 2}, res.Duplicates.Writers)
		require.Equal(t, "duplicate values: 2 reads have several candidate writers, e.g. T3(s3#0) op 0 read key 1 = 1, written by T1(s1#0) and T2(s2#0); the weak checkers need a unique writer per read; use --level ser/si",
			res.Duplicates.Reason(h))
	}
	h = parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1]]}`,
		`{"session":2,"id":2,"ops":[["w",1,1]]}`,
		`{"session":3,"id":3,"ops":[["r",1,1]]}`,
	)
	for _, level := range weakLevels {
		res := check(t, h, level, Options{})
		require.Equal(t, verdict.Satisfied, res.Verdict)
		require.Equal(t, 1, res.Duplicates.Reads)
		require.Contains(t, res.Duplicates.Reason(h), "1 read has several")
		require.Len(t, res.Chosen, 1)
		require.Equal(t, history.TxnID(3), res.Chosen[0].Txn)
		require.Contains(t, []history.TxnID{1, 2}, res.Chosen[0].Writer)
	}
	// T3 reads x = 1 from T1 or T2, each of which read y = 5 from T3:
	// a cycle whichever it read from.
	h = parse(t,
		`{"session":1,"id":1,"ops":[["r",2,5],["w",1,1]]}`,
		`{"session":2,"id":2,"ops":[["r",2,5],["w",1,1]]}`,
		`{"session":3,"id":3,"ops":[["r",1,1],["w",2,5]]}`,
	)
	for _, level := range weakLevels {
		res := check(t, h, level, Options{})
		require.Equal(t, verdict.Violated, res.Verdict, level)
		require.NotEmpty(t, res.Violations)
		v := res.Violations[0]
		require.Equal(t, G1c, v.Kind)
		require.Len(t, v.Choices, 1)
		require.Equal(t, history.TxnID(3), v.Choices[0].Txn)
		require.Equal(t, v.Choices[0].Writer, v.Cycle[0].From+v.Cycle[1].From-3, "the choice is the cycle's other transaction")
		require.Nil(t, res.Chosen)
	}
}

func TestUnknownStatus(t *testing.T) {
	h := parse(t,
		`{"session":1,"id":1,"status":"unknown","ops":[["w",1,1]]}`,
		`{"session":1,"id":2,"status":"unknown","ops":[["r",1,1],["w",2,2]]}`,
		`{"session":2,"id":3,"ops":[["r",2,2]]}`,
		`{"session":2,"id":4,"status":"unknown","ops":[["r",7,7]]}`,
		`{"session":3,"id":5,"status":"aborted","ops":[["r",8,8]]}`,
	)
	for _, level := range weakLevels {
		res := check(t, h, level, Options{})
		require.Equal(t, verdict.Satisfied, res.Verdict, level)
		// T3 needs T2, which needs T1; T4 reads a value nobody wrote but
		// nobody needs it.
		require.Equal(t, []history.TxnID{1, 2}, res.Included)
	}
	// A needed unknown transaction must be read consistent itself.
	h = parse(t,
		`{"session":1,"id":1,"status":"unknown","ops":[["r",7,7],["w",1,1]]}`,
		`{"session":2,"id":2,"ops":[["r",1,1]]}`,
	)
	for _, level := range weakLevels {
		res := check(t, h, level, Options{})
		require.Equal(t, verdict.Violated, res.Verdict)
		require.Len(t, res.Findings, 1)
		require.Equal(t, history.ThinAirRead, res.Findings[0].Kind)
		require.Equal(t, history.TxnID(1), res.Findings[0].Txn)
	}
}

// TestContinueAfterFindings: a read-consistency finding does not stop the
// search for cycles among the other reads.
func TestContinueAfterFindings(t *testing.T) {
	h := parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1],["w",2,1]]}`,
		`{"session":2,"id":2,"ops":[["r",2,0],["r",1,1],["r",3,9]]}`,
	)
	res := check(t, h, history.RA, Options{})
	require.Equal(t, verdict.Violated, res.Verdict)
	require.Len(t, res.Findings, 1)
	require.Len(t, res.Violations, 1)
	require.Equal(t, FracturedRead, res.Violations[0].Kind)
	require.Equal(t, verdict.Satisfied, check(t, parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1],["w",2,1]]}`,
		`{"session":2,"id":2,"ops":[["r",2,0],["r",1,1]]}`,
	), history.RC, Options{}).Verdict)
}

// TestOneCyclePerComponent: independent violations are reported one per
// component, up to MaxCycles; G1c cycles one per component of so ∪ wr.
func TestOneCyclePerComponent(t *testing.T) {
	var lines []string
	for i := range 3 {
		k := 10 * i
		lines = append(lines,
			`{"session":`+itoa(2*i+1)+`,"ops":[["w",`+itoa(k+1)+`,1],["w",`+itoa(k+2)+`,1]]}`,
			`{"session":`+itoa(2*i+1)+`,"ops":[["w",`+itoa(k+1)+`,2],["w",`+itoa(k+2)+`,2]]}`,
			`{"session":`+itoa(2*i+2)+`,"ops":[["r",`+itoa(k+2)+`,1],["r",`+itoa(k+1)+`,2]]}`)
	}
	// Three fractured reads, each in a component of its own, and two
	// causality cycles.
	lines = append(lines,
		`{"session":20,"ops":[["r",100,2],["w",101,1]]}`,
		`{"session":21,"ops":[["r",101,1],["w",100,2]]}`,
		`{"session":22,"ops":[["r",200,2],["w",201,1]]}`,
		`{"session":23,"ops":[["r",201,1],["w",200,2]]}`)
	h := parse(t, lines...)
	res := check(t, h, history.RA, Options{})
	kinds := map[Kind]int{}
	for _, v := range res.Violations {
		kinds[v.Kind]++
	}
	require.Equal(t, map[Kind]int{FracturedRead: 3, G1c: 2}, kinds)
	require.Equal(t, int64(5), res.Counters["co_sccs"])
	res = check(t, h, history.CC, Options{})
	require.Equal(t, map[Kind]int{G1c: 2}, map[Kind]int{G1c: len(res.Violations)})
	res = check(t, h, history.RA, Options{MaxCycles: 2})
	require.Len(t, res.Violations, 2)
	require.Equal(t, 3, res.CyclesOmitted)
	require.Equal(t, verdict.Violated, res.Verdict)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// TestFewestInferred: of the cycles through a component, one with the
// fewest inferred edges is reported, here the causality cycle of RC
// T1 → T2 → T1 with one inferred edge instead of a longer one with two.
func TestFewestInferred(t *testing.T) {
	h := parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1]]}`,
		`{"session":1,"id":2,"ops":[["w",1,2],["w",2,2]]}`,
		`{"session":2,"id":3,"ops":[["r",2,2],["r",1,1]]}`,
	)
	res := check(t, h, history.RC, Options{})
	require.Len(t, res.Violations, 1)
	v := res.Violations[0]
	require.Equal(t, CommitCycle, v.Kind)
	require.Equal(t, 1, v.Inferred())
	require.Len(t, v.Cycle, 2)
	require.Equal(t, "T3(s2#0) read key 2 from T2(s1#1) before it read key 1 from T1(s1#0); T2(s1#1) writes key 1 too, so it commits before T1(s1#0)", v.Cycle[0].Reason(h))
	require.Equal(t, "T1(s1#0) precedes T2(s1#1) in session 1", v.Cycle[1].Reason(h))
	require.Contains(t, v.Describe(h), "non-monotonic reads")
}

func TestCancel(t *testing.T) {
	h := benchHistory(1 << 14)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, level := range weakLevels {
		_, err := Check(ctx, h, level, Options{})
		require.True(t, errors.Is(err, context.Canceled), "%s: %v", level, err)
	}
}

func TestMemoryBudget(t *testing.T) {
	h := parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1]]}`,
		`{"session":2,"id":2,"ops":[["r",1,1]]}`,
	)
	refuse := errors.New("no room")
	var asked []int64
	fit := func(need int64, what string) error {
		require.Contains(t, what, "clocks (3 transactions × 2 sessions)")
		asked = append(asked, need)
		return refuse
	}
	_, err := Check(context.Background(), h, history.CC, Options{Fit: fit})
	require.ErrorIs(t, err, refuse)
	require.Equal(t, []int64{3 * 2 * 4}, asked)
	// RC and RA allocate nothing super-linear for so few inferred edges.
	for _, level := range []history.Level{history.RC, history.RA} {
		_, err := Check(context.Background(), h, level, Options{Fit: fit})
		require.NoError(t, err)
	}
}
