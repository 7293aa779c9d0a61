package jsonl

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestStreamIncompleteThenComplete: a streamed history says it is
// incomplete until its header is completed in place; the completed file
// reads back as what was streamed.
func TestStreamIncompleteThenComplete(t *testing.T) {
	var out bytes.Buffer
	s, err := NewStream(&out, map[string]string{"store": "memory", "z": "é\n"}, true)
	require.NoError(t, err)
	txns := []StreamTxn{
		{Session: 2, ID: 1, Status: history.Committed, Level: history.SI, Ops: []StreamOp{{Write: true, Key: 1, Val: 5}, {Key: 2, Val: 0}}},
		{Session: 1, ID: 2, Status: history.Aborted, Ops: []StreamOp{{Key: 1, Val: 5}}},
		{Session: 2, ID: 3, Status: history.Unknown, Timed: true, Start: 3, End: math.MaxInt64, Ops: []StreamOp{{Key: 3, Val: history.EmptyList}}},
	}
	for _, tx := range txns {
		require.NoError(t, s.Txn(tx))
	}
	require.NoError(t, s.Flush())
	require.Zero(t, s.Buffered())
	require.EqualValues(t, 3, s.Txns())
	first, _, _ := strings.Cut(out.String(), "\n")
	require.Contains(t, first, `"incomplete":true`)
	require.Contains(t, first, TrailerField)
	require.Len(t, first+"\n", s.HeaderLen())

	// Incomplete: refused, naming the file and line 1; --lenient reads
	// the transactions so far, warns and counts the rest as dropped.
	_, err = Parse(bytes.NewReader(out.Bytes()), "h.jsonl", Options{})
	require.EqualError(t, err, "h.jsonl:1: "+incompleteMsg+"; the transactions recorded so far can be read with --lenient")
	h, err := Parse(bytes.NewReader(out.Bytes()), "h.jsonl", Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, 3, h.Stats().Transactions)
	require.Equal(t, history.Dropped{Other: 1}, h.Dropped)
	require.Len(t, h.Warnings, 1)
	require.Contains(t, h.Warnings[0].String(), "history incomplete: its recording was cut short")

	require.NoError(t, s.Trailer())
	require.True(t, strings.HasSuffix(out.String(), `{"end":{"transactions":3,"operations":4,"lines":4}}`+"\n"), out.String())
	require.Error(t, s.Txn(txns[0]), "nothing after the end line")
	require.Error(t, s.Trailer(), "one end line")
	done := s.CompleteHeader()
	require.Len(t, done, s.HeaderLen())
	require.NotContains(t, string(done), IncompleteField)
	require.Contains(t, string(done), TrailerField)
	b := out.Bytes()
	copy(b, done)
	h, err = Parse(bytes.NewReader(b), "h.jsonl", Options{})
	require.NoError(t, err)
	require.Zero(t, h.Dropped)
	require.Empty(t, h.Warnings)
	require.Equal(t, "memory", h.Meta["store"])
	require.Equal(t, "é\n", h.Meta["z"])
	require.Equal(t, 3, h.Stats().Transactions)
	require.Len(t, h.Sessions, 2)
	tx := h.Txns[1]
	require.EqualValues(t, 1, tx.ID)
	require.Equal(t, history.SI, tx.Level)
	require.Equal(t, int64(2), h.Sessions[tx.Session].ID)
	require.Equal(t, history.Aborted, h.Txns[2].Status)
	u := h.Txns[3]
	require.Equal(t, history.Unknown, u.Status)
	require.True(t, u.Timed)
	require.Equal(t, int64(math.MaxInt64), u.End)
	require.Equal(t, history.EmptyList, h.Value(u.Ops[0].Key, u.Ops[0].Value))
	require.Equal(t, int64(0), h.Value(h.Txns[history.InitTxn].Ops[0].Key, h.Txns[history.InitTxn].Ops[0].Value))
}

// streamed is a history streamed to a file completed in place (complete)
// or left as a killed recorder leaves it (header incomplete, no end
// line).
func streamed(t *testing.T, complete bool) string {
	var out bytes.Buffer
	s, err := NewStream(&out, map[string]string{"store": "memory"}, true)
	require.NoError(t, err)
	for i := range int64(6) {
		require.NoError(t, s.Txn(StreamTxn{Session: i%2 + 1, ID: i + 1, Status: history.Committed,
			Ops: []StreamOp{{Write: true, Key: i, Val: i + 1}, {Key: i + 1, Val: 0}}}))
		if i%2 == 1 {
			require.NoError(t, s.Flush())
		}
	}
	if !complete {
		return out.String()
	}
	require.NoError(t, s.Trailer())
	b := out.Bytes()
	copy(b, s.CompleteHeader())
	return string(b)
}

// TestStreamCutAtLineBoundary: a streamed history, completed or not, cut
// at any line boundary is refused, naming the file, and read with
// --lenient with a warning and the loss counted as dropped; whole and
// completed, it reads strictly with nothing dropped.
func TestStreamCutAtLineBoundary(t *testing.T) {
	for _, seq := range []bool{false, true} {
		forceSequential = seq
		whole := streamed(t, true)
		h, err := Parse(struct{ io.Reader }{strings.NewReader(whole)}, "h.jsonl", Options{})
		require.NoError(t, err)
		require.Equal(t, 6, h.Stats().Transactions)
		require.Zero(t, h.Dropped)
		for _, complete := range []bool{true, false} {
			src := streamed(t, complete)
			lines := strings.SplitAfter(src, "\n")
			lines = lines[:len(lines)-1] // after the last newline
			n := len(lines)
			if complete {
				n-- // the whole file reads
			}
			for cut := 1; cut <= n; cut++ {
				part := strings.Join(lines[:cut], "")
				_, err := Parse(struct{ io.Reader }{strings.NewReader(part)}, "h.jsonl", Options{})
				if complete {
					require.ErrorContains(t, err, "h.jsonl:", "cut after line %d", cut)
					require.ErrorContains(t, err, "truncated", "cut after line %d", cut)
				} else {
					require.EqualError(t, err, "h.jsonl:1: "+incompleteMsg+"; the transactions recorded so far can be read with --lenient", "cut after line %d", cut)
				}
				h, err := Parse(struct{ io.Reader }{strings.NewReader(part)}, "h.jsonl", Options{Lenient: true})
				require.NoError(t, err, "cut after line %d", cut)
				require.Equal(t, cut-1, h.Stats().Transactions)
				require.Equal(t, history.Dropped{Other: 1}, h.Dropped, "cut after line %d", cut)
				require.Len(t, h.Warnings, 1, "cut after line %d", cut)
			}
		}
	}
	forceSequential = false
}

// TestIncompleteField: "incomplete" is a header field, a boolean; false
// says nothing; an incomplete history that kept its end line (killed
// between the end line and the completed header) is still refused, and
// reads leniently with its end line checked.
func TestIncompleteField(t *testing.T) {
	for _, ok := range []string{
		`{"hyperiso":1,"incomplete":false}` + "\n" + `{"session":1,"ops":[]}`,
		`{"hyperiso":1,"incomplete":false,"trailer":true}` + "\n" + `{"end":{"transactions":0,"operations":0,"lines":1}}`,
	} {
		h, err := Parse(strings.NewReader(ok+"\n"), "h.jsonl", Options{})
		require.NoError(t, err, ok)
		require.Zero(t, h.Dropped)
	}
	for _, bad := range []string{
		`{"hyperiso":1,"incomplete":1}`,
		`{"hyperiso":1,"incomplete":"true"}`,
		`{"hyperiso":1,"incomplete":true,"incomplete":true}`,
		`{"session":1,"incomplete":false,"ops":[]}`,
	} {
		_, err := Parse(strings.NewReader(bad+"\n"), "h.jsonl", Options{})
		require.Error(t, err, bad)
	}
	ended := `{"hyperiso":1,"incomplete":true,"trailer":true}` + "\n" + `{"session":1,"ops":[["w",1,1]]}` + "\n"
	_, err := Parse(strings.NewReader(ended+`{"end":{"transactions":1,"operations":1,"lines":2}}`+"\n"), "h.jsonl", Options{})
	require.ErrorContains(t, err, "h.jsonl:1: history incomplete")
	h, err := Parse(strings.NewReader(ended+`{"end":{"transactions":1,"operations":1,"lines":2}}`+"\n"), "h.jsonl", Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, history.Dropped{Other: 1}, h.Dropped)
	h, err = Parse(strings.NewReader(ended+`{"end":{"transactions":2,"operations":1,"lines":2}}`+"\n"), "h.jsonl", Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, history.Dropped{Other: 2}, h.Dropped, "incomplete, and the end line does not match")
}

// TestStreamLists: a recorder's appends and whole-list reads stream as
// ["append",k,v] and ["r",k,[…]], and read back as list operations, the
// keys appended to starting as the empty list.
func TestStreamLists(t *testing.T) {
	var out bytes.Buffer
	s, err := NewStream(&out, nil, false)
	require.NoError(t, err)
	require.NoError(t, s.Txn(StreamTxn{Session: 1, ID: 1, Status: history.Committed,
		Ops: []StreamOp{{ReadList: true, Key: 1, List: []int64{}}, {Append: true, Key: 1, Val: 7}, {Append: true, Key: 1, Val: 8}}}))
	require.NoError(t, s.Txn(StreamTxn{Session: 2, ID: 2, Status: history.Committed,
		Ops: []StreamOp{{ReadList: true, Key: 1, List: []int64{7, 8}}}}))
	require.NoError(t, s.Trailer())
	require.Contains(t, out.String(), `"ops":[["r",1,[]],["append",1,7],["append",1,8]]`)
	require.Contains(t, out.String(), `"ops":[["r",1,[7,8]]]`)
	h, err := Parse(bytes.NewReader(out.Bytes()), "h.jsonl", Options{})
	require.NoError(t, err)
	require.True(t, h.HasLists())
	ops := h.Txns[1].Ops
	require.Equal(t, history.OpReadList, ops[0].Kind)
	require.Empty(t, h.List(ops[0]))
	require.Equal(t, history.OpAppend, ops[1].Kind)
	read := h.Txns[2].Ops[0]
	require.Equal(t, history.OpReadList, read.Kind)
	require.Len(t, h.List(read), 2)
	require.Equal(t, history.EmptyList, h.Value(h.Txns[history.InitTxn].Ops[0].Key, h.Txns[history.InitTxn].Ops[0].Value))
}

// TestStreamRows: inserts, deletes and predicate reads stream in the
// native syntax and read back as rows: every key starts absent, and a
// predicate read covers the keys of its range.
func TestStreamRows(t *testing.T) {
	var out bytes.Buffer
	s, err := NewStream(&out, nil, false)
	require.NoError(t, err)
	require.NoError(t, s.Txn(StreamTxn{Session: 1, ID: 1, Status: history.Committed,
		Ops: []StreamOp{{Insert: true, Key: 1, Val: 7}, {Insert: true, Key: 3, Val: 9}, {Delete: true, Key: 1}}}))
	require.NoError(t, s.Txn(StreamTxn{Session: 2, ID: 2, Status: history.Committed,
		Ops: []StreamOp{{Select: true, Key: 1, Hi: 4, Rows: [][2]int64{{3, 9}}}, {Select: true, Key: 5, Hi: 6, Rows: [][2]int64{}}}}))
	require.NoError(t, s.Trailer())
	require.Contains(t, out.String(), `"ops":[["insert",1,7],["insert",3,9],["delete",1]]`)
	require.Contains(t, out.String(), `"ops":[["select",{"keys":[1,4]},[[3,9]]],["select",{"keys":[5,6]},[]]]`)
	require.Equal(t, End{Txns: 2, Ops: 5, Lines: 3}, s.End())
	h, err := Parse(bytes.NewReader(out.Bytes()), "h.jsonl", Options{})
	require.NoError(t, err)
	ops := h.Txns[1].Ops
	require.Equal(t, []history.OpSrc{history.SrcInsert, history.SrcInsert, history.SrcDelete}, []history.OpSrc{ops[0].Src, ops[1].Src, ops[2].Src})
	require.Len(t, h.Selects, 2)
	// Keys 1 and 3 of the file are in [1,4): row 1 read absent, row 3 = 9.
	sel := h.Selects[0].Ops(h)
	require.Len(t, sel, 2)
	require.Equal(t, history.EmptyList, h.Value(sel[0].Key, sel[0].Value))
	require.Equal(t, int64(9), h.Value(sel[1].Key, sel[1].Value))
	require.Zero(t, h.Selects[1].N, "no key of the file in [5,6)")
	for _, op := range h.Txns[history.InitTxn].Ops {
		require.Equal(t, history.EmptyList, h.Value(op.Key, op.Value), "rows start absent")
	}
}
