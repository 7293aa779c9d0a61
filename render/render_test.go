package render

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/explain"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// testdata lists the hand-written histories of testdata/explain, the
// counterexamples package explain's tests check.
func testdata(t *testing.T) []string {
	files, err := filepath.Glob("../testdata/explain/*.jsonl")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 10)
	return files
}

func readHistory(t *testing.T, path string) *history.History {
	h, err := jsonl.Read(path, jsonl.Options{})
	require.NoError(t, err, path)
	return h
}

// TestRenderers renders every hand-written counterexample in each format.
func TestRenderers(t *testing.T) {
	for _, path := range testdata(t) {
		h := readHistory(t, path)
		level, _ := history.ParseLevel(h.Meta["explain.level"])
		rep, err := explain.Explain(context.Background(), h, level, explain.Options{})
		require.NoError(t, err)
		ce := rep.Explanation.Counterexamples[0]

		var text bytes.Buffer
		require.NoError(t, Text(&text, rep))
		require.Contains(t, text.String(), ce.Class)
		require.Contains(t, text.String(), "Minimality:")

		var js bytes.Buffer
		require.NoError(t, JSON(&js, rep))
		var m map[string]any
		require.NoError(t, json.Unmarshal(js.Bytes(), &m))
		// The check report's fields stay where they are.
		for _, k := range []string{"hyperiso_report", "source", "format", "level", "verdict", "history", "timings_ms", "counters", "anomalies", "explanation"} {
			require.Contains(t, m, k, path)
		}
		var back explain.Report
		require.NoError(t, json.Unmarshal(js.Bytes(), &back))
		require.Equal(t, rep.Verdict, back.Verdict)
		require.Equal(t, ce.Class, back.Explanation.Counterexamples[0].Class)

		var dot bytes.Buffer
		require.NoError(t, DOT(&dot, rep))
		require.True(t, strings.HasPrefix(dot.String(), "digraph"))
		if len(ce.Edges) > 0 {
			require.Contains(t, dot.String(), "->")
		}

		var page bytes.Buffer
		require.NoError(t, HTML(&page, rep))
		s := page.String()
		require.Contains(t, s, "<!DOCTYPE html>")
		require.Contains(t, s, ce.Class)
		if len(ce.Edges) > 0 {
			require.Contains(t, s, "<svg")
		}
		// Self-contained: nothing is fetched from elsewhere.
		for _, bad := range []string{"<script src", "<link", "@import", "url(http", "src=\"http"} {
			require.NotContains(t, s, bad)
		}
	}
}

// TestRenderSatisfied: a report with nothing to explain (a serializable
// history) still renders.
func TestRenderSatisfied(t *testing.T) {
	h := readHistory(t, "../testdata/bank.jsonl")
	rep, err := explain.Explain(context.Background(), h, history.SER, explain.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Satisfied, rep.Verdict)
	var text bytes.Buffer
	require.NoError(t, Text(&text, rep))
	var page bytes.Buffer
	require.NoError(t, HTML(&page, rep))
}
