package explain

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// testdata lists the hand-written histories; each names in its header's
// meta the level, class, minimal transaction set (and number of cases) the
// explanation must report.
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

// TestHandWrittenCounterexamples checks class and minimal transaction set
// on every history of testdata/explain (G0, G1a, G1b, G1c, G-single,
// G2-item, lost update, fractured read, causality violation, duplicate
// values), and that each counterexample alone, read back from its JSON
// Lines, is rejected at the same level.
func TestHandWrittenCounterexamples(t *testing.T) {
	seen := map[string]bool{}
	for _, path := range testdata(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			h := readHistory(t, path)
			level, ok := history.ParseLevel(h.Meta["explain.level"])
			require.True(t, ok, "explain.level in %s", path)
			rep, err := Explain(context.Background(), h, level, Options{})
			require.NoError(t, err)
			require.Equal(t, check.Violated, rep.Verdict)
			require.Len(t, rep.Explanation.Counterexamples, 1)
			ce := rep.Explanation.Counterexamples[0]
			require.Equal(t, h.Meta["explain.class"], ce.Class, ce.Summary)
			seen[ce.Class] = true
			var ids []int64
			for _, tx := range ce.Transactions {
				ids = append(ids, tx.ID)
			}
			slices.Sort(ids)
			var want []int64
			for _, f := range strings.Fields(h.Meta["explain.txns"]) {
				id, err := strconv.ParseInt(f, 10, 64)
				require.NoError(t, err)
				want = append(want, id)
			}
			require.Equal(t, want, ids, "minimal transaction set")
			require.Equal(t, len(want), ce.Size)
			require.True(t, ce.Minimal, ce.Minimality)
			require.Equal(t, check.Violated, ce.Recheck)
			if n := h.Meta["explain.cases"]; n != "" {
				require.Equal(t, n, strconv.Itoa(len(ce.Cases)))
				require.True(t, ce.CasesComplete)
				for _, c := range ce.Cases {
					require.NotEmpty(t, c.Choices)
					require.NotEmpty(t, c.Edges)
				}
			}
			if level == history.SI {
				require.Empty(t, siForbidden(ce))
			}
			if ce.Method != "read-consistency" {
				require.NotEmpty(t, ce.Edges)
				for _, e := range ce.Edges {
					require.NotEmpty(t, e.Reason)
				}
			}
			sub, err := jsonl.Parse(strings.NewReader(ce.History), "counterexample", jsonl.Options{})
			require.NoError(t, err)
			res, err := check.Check(context.Background(), sub, level, check.Options{})
			require.NoError(t, err)
			require.Equal(t, check.Violated, res.Verdict)
		})
	}
	for _, c := range []string{"G0", "G1a", "G1b", "G1c", "G-single", "G2-item", "lost-update", "fractured-read", "causality-violation"} {
		require.True(t, seen[c], "no hand-written history for %s", c)
	}
}

func TestParseBudget(t *testing.T) {
	b, err := ParseBudget("200")
	require.NoError(t, err)
	require.Equal(t, Budget{Checks: 200}, b)
	b, err = ParseBudget("30s")
	require.NoError(t, err)
	require.Equal(t, Budget{Time: 30 * time.Second}, b)
	b, err = ParseBudget("50, 2m")
	require.NoError(t, err)
	require.Equal(t, Budget{Checks: 50, Time: 2 * time.Minute}, b)
	for _, bad := range []string{"0", "-3", "fast", "10x"} {
		_, err := ParseBudget(bad)
		require.Error(t, err, bad)
	}
}

// TestBudgetExhausted: with too few re-checks the counterexample is still
// a violating sub-history, reported as not proven minimal.
func TestBudgetExhausted(t *testing.T) {
	h := readHistory(t, "../testdata/explain/g0.jsonl")
	rep, err := Explain(context.Background(), h, history.SER, Options{Budget: Budget{Checks: 2}})
	require.NoError(t, err)
	ce := rep.Explanation.Counterexamples[0]
	require.False(t, ce.Minimal)
	require.Contains(t, ce.Minimality, "not proven minimal")
	require.True(t, rep.Explanation.Budget.Exhausted)
	require.Equal(t, check.Violated, ce.Recheck)
}

// TestSatisfiedNothingToExplain: a serializable history has no
// counterexample.
func TestSatisfiedNothingToExplain(t *testing.T) {
	h := readHistory(t, "../testdata/bank.jsonl")
	rep, err := Explain(context.Background(), h, history.SER, Options{})
	require.NoError(t, err)
	require.Equal(t, check.Satisfied, rep.Verdict)
	require.Empty(t, rep.Explanation.Counterexamples)
	require.Contains(t, rep.Explanation.Note, "nothing to explain")
}

// TestSubHistoryDropsReadsOfMissingWriters: a read is kept only when every
// writer of its value is kept.
func TestSubHistoryDropsReadsOfMissingWriters(t *testing.T) {
	h := readHistory(t, "../testdata/explain/duplicate-values.jsonl")
	keep := make([]bool, len(h.Txns))
	keep[0] = true
	var t1, t3 history.TxnID
	for i := 1; i < len(h.Txns); i++ {
		switch h.Txns[i].ID {
		case 1:
			t1 = history.TxnID(i)
		case 3:
			t3 = history.TxnID(i)
		}
	}
	keep[t1], keep[t3] = true, true
	s := NewSub(h, keep, nil)
	require.Len(t, s.H.Txns, 3)
	// T3's read of x=1 could be from T2, which is not kept.
	require.Equal(t, []OpRef{{t3, 0}}, s.Dropped)
	require.Len(t, s.H.Txns[2].Ops, 2)
	require.NoError(t, s.H.CheckInvariants())
	keep[t1] = false
	for i := 1; i < len(h.Txns); i++ {
		keep[i] = true
	}
	s = NewSub(h, keep, nil)
	require.Empty(t, s.Dropped)
	require.Equal(t, len(h.Txns), len(s.H.Txns))
}
