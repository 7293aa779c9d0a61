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
