package history_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

func parseLines(t *testing.T, lines ...string) *history.History {
	t.Helper()
	h, err := jsonl.Parse(strings.NewReader(strings.Join(lines, "\n")+"\n"), "mem.jsonl", jsonl.Options{})
	require.NoError(t, err)
	return h
}

// explanations collects every explanation of h's lists.
func explanations(t *testing.T, h *history.History, opt history.ListOptions) []*history.ListExplanation {
	t.Helper()
	var out []*history.ListExplanation
	for x, err := range h.ListExplanations(opt) {
		require.NoError(t, err)
		if x.H != nil {
			require.NoError(t, x.H.CheckInvariants())
			require.False(t, x.H.HasLists(), "a register view has no list")
		}
		out = append(out, x)
	}
	return out
}

func describeAll(h *history.History, fs []history.ListFinding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Describe(h))
	}
	return out
}

// What the elements of a list show on their own.
func TestListElementFindings(t *testing.T) {
	h := parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1],["append",1,2]]}`,
		`{"session":1,"id":2,"status":"aborted","ops":[["append",1,3]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[1,1,2]]]}`,
		`{"session":3,"id":4,"ops":[["r",1,[1,3,2]]]}`,
		`{"session":4,"id":5,"ops":[["r",1,[9]]]}`,
		`{"session":5,"id":6,"ops":[["r",1,[1,2,5]],["append",1,5]]}`)
	xs := explanations(t, h, history.ListOptions{})
	require.Len(t, xs, 1)
	require.Nil(t, xs[0].H)
	require.Equal(t, []string{
		"duplicate-elements: T3(s2#0) read key 1 = [1 1 2], which holds 1 more often than it was appended",
		"aborted-read (G1a): T4(s3#0) read key 1 = [1 3 2], whose element 3 only aborted transactions appended (T2(s1#0))",
		"garbage-read: T5(s4#0) read key 1 = [9], whose element 9 no transaction appended",
		"future-read: T6(s5#0) read key 1 = [1 2 5], whose element 5 (position 2) only it appends, later",
	}, describeAll(h, xs[0].Findings))
	for _, f := range xs[0].Findings {
		require.True(t, f.ForbiddenAt(history.RC))
	}
	require.Equal(t, "G1a", history.AbortedElement.Class())
}

// Long lists are shortened around where they differ.
func TestListFindingShortensLongLists(t *testing.T) {
	var ops, a, b []string
	for i := 1; i <= 30; i++ {
		ops = append(ops, fmt.Sprintf(`["append",1,%d]`, i))
	}
	for i := 1; i <= 20; i++ {
		a = append(a, fmt.Sprint(i))
		if i != 19 {
			b = append(b, fmt.Sprint(i))
		}
	}
	h := parseLines(t,
		`{"session":0,"id":1,"ops":[`+strings.Join(ops, ",")+`]}`,
		`{"session":1,"id":2,"ops":[["r",1,[`+strings.Join(a, ",")+`]]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[`+strings.Join(b, ",")+`]]]}`)
	xs := explanations(t, h, history.ListOptions{})
	require.Len(t, xs, 1)
	require.Equal(t, []string{"incompatible-order on key 1: T2(s1#0) read [… 15 16 17 18 19 20] and T3(s2#0) read [… 15 16 17 18 20]; " +
		"neither is a prefix of the other (they differ at position 18), so no single order of the appends explains both"}, describeAll(h, xs[0].Findings))
}

// A history whose appended values are unique has one explanation; its
// register view reads the version of each view's last block, externally
// even after the reader's own appends, and states the blocks' order.
func TestListRegisterView(t *testing.T) {
	h := parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1],["append",1,2],["append",2,7]]}`,
		`{"session":1,"id":2,"ops":[["append",1,3],["r",1,[1,2,3]]]}`,
		`{"session":2,"id":3,"status":"unknown","ops":[["append",1,4]]}`,
		`{"session":3,"id":4,"status":"unknown","ops":[["append",1,5]]}`,
		`{"session":4,"id":5,"ops":[["r",1,[1,2,3,4]],["r",2,[]]]}`)
	xs := explanations(t, h, history.ListOptions{Visibility: history.VisibleAll})
	require.Len(t, xs, 1)
	x := xs[0]
	require.Empty(t, x.Findings)
	require.Equal(t, []history.TxnID{3}, x.Committed, "T3's append is seen")
	require.Equal(t, []history.TxnID{4}, x.Aborted, "nobody needs T4")
	g := x.H
	require.Equal(t, history.Committed, g.Txns[3].Status)
	require.Equal(t, history.Aborted, g.Txns[4].Status)
	ops := func(t history.TxnID) string {
		var s []string
		for _, op := range g.Txns[t].Ops {
			s = append(s, fmt.Sprintf("%v(%s,%s)", op.Kind, g.KeyString(op.Key), g.ValueString(op.Key, op.Value)))
		}
		return strings.Join(s, " ")
	}
	require.Equal(t, "w(1,2) w(2,7) w([a list holding T1(s0#0)'s appends],1)", ops(1))
	require.Equal(t, "r(1,2) w(1,3) w([a list holding T2(s1#0)'s appends],1)", ops(2), "the read is external; the append moves to the end")
	require.Equal(t, "r([a list holding T2(s1#0)'s appends],1) r([a list holding T1(s0#0)'s appends],1) r(1,4) r(2,nil)", ops(5))
	require.Equal(t, []int32{1, 0, -1}, x.OpOrigin[2])
	var hints []string
	for _, vh := range g.VersionHints {
		hints = append(hints, fmt.Sprintf("%s:%s<%s", g.KeyString(vh.Key), g.ValueString(vh.Key, vh.Before), g.ValueString(vh.Key, vh.After)))
	}
	require.Equal(t, []string{"1:2<3", "1:3<4"}, hints, "T4 left out follows nobody")
	// Without visibility (SER, SI) there are no stand-in keys.
	xs = explanations(t, h, history.ListOptions{})
	require.Equal(t, len(h.Keys), len(xs[0].H.Keys))
}

// Values appended by several transactions give one explanation per
// arrangement of whole blocks; each renames the repeated versions.
func TestListDuplicateExplanations(t *testing.T) {
	h := parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1]]}`,
		`{"session":1,"id":2,"ops":[["append",1,1]]}`,
		`{"session":2,"id":3,"ops":[["append",1,2]]}`,
		`{"session":3,"id":4,"ops":[["r",1,[1,2,1]]]}`)
	xs := explanations(t, h, history.ListOptions{})
	require.Len(t, xs, 2, "T1 then T3 then T2, or T2 then T3 then T1")
	for _, x := range xs {
		require.Empty(t, x.Findings)
		// The two appends of 1 are two versions.
		require.Len(t, x.H.Values[0], len(h.Values[0])+1)
	}
	// A list that no arrangement spells.
	h = parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1],["append",1,2]]}`,
		`{"session":1,"id":2,"ops":[["append",1,1]]}`,
		`{"session":3,"id":4,"ops":[["r",1,[1,1,1]]]}`)
	xs = explanations(t, h, history.ListOptions{})
	require.Len(t, xs, 1)
	require.Equal(t, history.DuplicateElements, xs[0].Findings[0].Kind)
	h = parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1],["append",1,2]]}`,
		`{"session":1,"id":2,"ops":[["append",1,2]]}`,
		`{"session":3,"id":4,"ops":[["r",1,[2,2,1]]]}`)
	xs = explanations(t, h, history.ListOptions{})
	require.Len(t, xs, 1)
	require.Equal(t, history.UnexplainedList, xs[0].Findings[0].Kind)
	require.True(t, strings.HasPrefix(xs[0].Findings[0].Describe(h), "incompatible-order on key 1: T4(s3#0) read [2 2 1], and no arrangement"))
}

// Unknown outcomes the lists leave open are tried both ways; the bound
// on explanations is an error, not a guess.
func TestListUnknownFatesAndBound(t *testing.T) {
	h := parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1]]}`,
		`{"session":1,"id":2,"status":"unknown","ops":[["append",1,1]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[1]]]}`)
	xs := explanations(t, h, history.ListOptions{})
	require.Len(t, xs, 2)
	require.Equal(t, []history.TxnID{2}, xs[0].Committed)
	require.Equal(t, []history.TxnID{2}, xs[1].Aborted)
	n := 0
	var last error
	for _, err := range h.ListExplanations(history.ListOptions{MaxExplanations: 1}) {
		n++
		last = err
	}
	require.GreaterOrEqual(t, n, 1)
	require.True(t, errors.Is(last, history.ErrTooManyExplanations), "%v", last)
}

// A key is a list or a register, not both.
func TestListKeyUsedAsRegister(t *testing.T) {
	h := parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1]]}`,
		`{"session":1,"id":2,"ops":[["w",1,5]]}`)
	for _, err := range h.ListExplanations(history.ListOptions{}) {
		require.ErrorContains(t, err, "writes key 1 as a register, but the key is a list")
	}
	// Reading the empty value of a list key is reading the empty list.
	h = parseLines(t,
		`{"session":0,"id":1,"ops":[["append",1,1],["r",1,null]]}`)
	xs := explanations(t, h, history.ListOptions{})
	require.Len(t, xs, 1)
	require.Equal(t, history.InternalList, xs[0].Findings[0].Kind)
}
