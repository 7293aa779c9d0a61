package jsonl

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestTruncatedAtLineBoundary: a history written by Write, cut at any line
// boundary, is refused as truncated (issue 26: a cut at a line boundary
// was invisible); a line lost in the middle, one added, or a file
// appended after the end line is refused too. --lenient reads what is
// there, warns and counts the loss as dropped. A file without the
// header's promise still reads.
func TestTruncatedAtLineBoundary(t *testing.T) {
	src := `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["w",1,10],["r",2,0]]}
{"session":2,"id":2,"ops":[["r",1,10],["w",2,20]]}
{"session":1,"id":3,"status":"aborted","ops":[["w",1,11]]}
{"aborted_writes":[[2,99]]}
{"version_order":[[1,10,11]]}`
	h := parse(t, src, Options{})
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, h))
	whole := buf.String()
	require.True(t, strings.HasSuffix(whole, `{"end":{"transactions":3,"operations":5,"lines":6}}`+"\n"), whole)
	// Both readers: the pipelined one reads a stream of unknown size.
	for _, seq := range []bool{false, true} {
		forceSequential = seq
		Parse := func(r *strings.Reader, name string, opt Options) (*history.History, error) {
			return Parse(struct{ io.Reader }{r}, name, opt)
		}
		_, err := Parse(strings.NewReader(whole), "h.jsonl", Options{})
		require.NoError(t, err)
		lines := strings.SplitAfter(whole, "\n")
		for n := 1; n < len(lines)-1; n++ {
			cut := strings.Join(lines[:n], "")
			_, err := Parse(strings.NewReader(cut), "h.jsonl", Options{})
			require.ErrorContains(t, err, "truncated", "cut after line %d", n)
			require.ErrorContains(t, err, "h.jsonl:", "cut after line %d", n)
			h, err := Parse(strings.NewReader(cut), "h.jsonl", Options{Lenient: true})
			require.NoError(t, err)
			require.Equal(t, 1, h.Dropped.Other)
			if n+1 >= len(lines)-2 {
				continue // the end line itself: truncated, above
			}
			// A line lost in the middle.
			lost := strings.Join(lines[:n], "") + strings.Join(lines[n+1:], "")
			_, err = Parse(strings.NewReader(lost), "h.jsonl", Options{})
			require.ErrorContains(t, err, "the end line states", "line %d lost", n+1)
		}
		_, err = Parse(strings.NewReader(whole+whole), "h.jsonl", Options{})
		require.ErrorContains(t, err, "after the end line")
		added := strings.Replace(whole, "\n", "\n"+`{"session":9,"id":99,"ops":[]}`+"\n", 1)
		_, err = Parse(strings.NewReader(added), "h.jsonl", Options{})
		require.ErrorContains(t, err, "the end line states")
		// Old files, without the promise, still read.
		_, err = Parse(strings.NewReader(strings.Join(lines[:3], "")[len(`{"hyperiso":1,"init":"zero","trailer":true}`)+1:]), "h.jsonl", Options{})
		require.NoError(t, err)
	}
	forceSequential = false
	for _, bad := range []string{
		`{"end":{"transactions":0,"operations":0}}`,
		`{"end":{"transactions":0,"operations":0,"lines":0,"lines":0}}`,
		`{"end":{"transactions":-1,"operations":0,"lines":0}}`,
		`{"end":{"transactions":0,"operations":0,"line":0}}`,
		`{"end":true}`,
		`{"end":{"transactions":0,"operations":0,"lines":0},"session":1}`,
		`{"hyperiso":1,"trailer":1}`,
	} {
		_, err := Parse(strings.NewReader(bad+"\n"), "h.jsonl", Options{})
		require.Error(t, err, bad)
	}
}
