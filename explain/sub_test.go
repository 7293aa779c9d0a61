package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// TestSubKeepsInsertsAndDeletes: a sub-history writes inserts and deletes
// back as such; a delete is no plain write of the empty value, which a
// reader would take for a write of a value nobody wrote.
func TestSubKeepsInsertsAndDeletes(t *testing.T) {
	h := readHistory(t, "../testdata/predicates/phantom.jsonl")
	keep := make([]bool, len(h.Txns))
	for i := range keep {
		keep[i] = true
	}
	sub := NewSub(h, keep, nil)
	var b bytes.Buffer
	require.NoError(t, jsonl.Write(&b, sub.H))
	out := b.String()
	require.Contains(t, out, `["insert",3,30]`)
	require.Contains(t, out, `["delete",1]`)
	back, err := jsonl.Parse(strings.NewReader(out), "sub", jsonl.Options{})
	require.NoError(t, err)
	require.Empty(t, back.Warnings, "the sub-history reads back cleanly")
	n := 0
	for _, op := range back.Txns[len(back.Txns)-1].Ops {
		if op.Src == history.SrcDelete || op.Src == history.SrcInsert {
			n++
		}
	}
	require.Equal(t, 2, n)
}

// TestSubKeepsSelectsWhole: a predicate read stays a predicate read when
// every row's writer is kept, and goes whole when one is not: its rows as
// point reads would bind more at rc and rr than the predicate read does.
func TestSubKeepsSelectsWhole(t *testing.T) {
	src := `{"session":1,"ops":[["insert",5,1]]}
{"session":2,"ops":[["insert",6,1]]}
{"session":3,"ops":[["r",6,1],["select",{"keys":[0,10]},[[5,1]]],["r",7,null]]}
`
	h, err := jsonl.Parse(strings.NewReader(src), "s", jsonl.Options{})
	require.NoError(t, err)
	all := []bool{true, true, true, true}
	sub := NewSub(h, all, nil)
	var b bytes.Buffer
	require.NoError(t, jsonl.Write(&b, sub.H))
	require.Contains(t, b.String(), `["select",{"keys":[0,10]},[[5,1]]]`)
	require.Empty(t, sub.Dropped)

	// Without T1, the writer of row 5, the select goes, every row of it.
	sub = NewSub(h, []bool{true, false, true, true}, nil)
	b.Reset()
	require.NoError(t, jsonl.Write(&b, sub.H))
	require.NotContains(t, b.String(), "select")
	require.Contains(t, b.String(), `["r",6,1]`)
	require.Len(t, sub.Dropped, int(h.Selects[0].N))
}
