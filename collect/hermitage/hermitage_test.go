package hermitage_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect/hermitage"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/history"
)

func TestScenariosAreWellFormed(t *testing.T) {
	names := map[string]bool{}
	for _, sc := range hermitage.Scenarios {
		require.False(t, names[sc.Name], "two scenarios named %s", sc.Name)
		names[sc.Name] = true
		require.Contains(t, []int{2, 3}, sc.Txns, sc.Name)
		ended := make([]bool, sc.Txns+1)
		written := map[[2]int64]bool{}
		initial := map[int64]int64{}
		if sc.Rows {
			for _, r := range hermitage.InitialRows {
				initial[r.Key] = r.Val
			}
		}
		for _, s := range sc.Steps {
			require.True(t, s.T >= 1 && s.T <= sc.Txns, "%s: %s", sc.Name, s)
			require.False(t, ended[s.T], "%s: %s after its transaction ended", sc.Name, s)
			switch s.Action {
			case hermitage.Write, hermitage.Insert:
				v := [2]int64{s.Key, s.Value}
				require.False(t, written[v] || s.Value == initial[s.Key], "%s: %s does not write a unique value", sc.Name, s)
				written[v] = true
				if sc.Rows {
					require.True(t, s.Key >= hermitage.RowKeys[0] && s.Key <= hermitage.RowKeys[1], "%s: %s outside the rows the observer reads", sc.Name, s)
				} else {
					require.Contains(t, hermitage.Keys, s.Key, "%s: %s", sc.Name, s)
				}
			case hermitage.Select, hermitage.DeleteRange:
				require.True(t, sc.Rows, "%s: %s in an item-level scenario", sc.Name, s)
				require.LessOrEqual(t, s.Key, s.Value, "%s: %s", sc.Name, s)
			case hermitage.Commit, hermitage.Rollback:
				ended[s.T] = true
			}
		}
		for i := 1; i <= sc.Txns; i++ {
			require.True(t, ended[i], "%s: T%d never ends", sc.Name, i)
		}
		got, ok := hermitage.Lookup(strings.ToLower(sc.Name))
		require.True(t, ok)
		require.Equal(t, sc.Name, got.Name)
	}
	for _, name := range []string{"PMP", "PMP-write", "G2", "G2-two-edges"} {
		sc, ok := hermitage.Lookup(name)
		require.True(t, ok, name)
		require.True(t, sc.Rows, "%s is a predicate scenario", name)
	}
	for kind, rows := range hermitage.Expected {
		for level := range rows {
			require.Len(t, hermitage.ExpectedRow(kind, level), len(hermitage.Scenarios), "%s %s", kind, level)
		}
	}
}

// TestDocShowsTheCommittedMatrix keeps docs/hermitage.md and the table the
// tests assert in step.
func TestDocShowsTheCommittedMatrix(t *testing.T) {
	doc, err := os.ReadFile("../../docs/hermitage.md")
	require.NoError(t, err)
	for _, kind := range hermitage.Kinds {
		require.Contains(t, string(doc), hermitage.Markdown(kind), "docs/hermitage.md must show the committed %s matrix", kind)
	}
	for key := range hermitage.Differences {
		require.Contains(t, string(doc), "`"+key+"`", "docs/hermitage.md must explain the difference %s", key)
	}
}

func TestPostgreSQL(t *testing.T) {
	t.Parallel()
	url, schema, probe := dbtest.PostgresScratch(t)
	matrix(t, url)
	require.Empty(t, dbtest.PostgresTables(t, probe, schema), "tables left behind")
}

func TestMariaDB(t *testing.T) {
	t.Parallel()
	url, db, probe := dbtest.MariaDBScratch(t)
	matrix(t, url)
	require.Empty(t, dbtest.MariaDBTables(t, probe, db), "tables left behind")
}

// matrix runs every scenario at every level of the server at url and
// asserts the committed matrix, the recorded histories and that every
// disagreement with Hermitage is one docs/hermitage.md explains.
func matrix(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg, err := hermitage.Open(ctx, url)
	require.NoError(t, err)
	defer tg.Close()
	m, err := hermitage.Collect(ctx, tg, hermitage.Scenarios, tg.Levels, 4, hermitage.Options{})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, m.Format(&out))
	t.Logf("\n%s", out.String())

	require.NotEmpty(t, hermitage.Expected[tg.Kind])
	for level, want := range hermitage.Expected[tg.Kind] {
		_, ok := tg.Level(level)
		require.True(t, ok, "%s offers no level %s", tg.Server, level)
		require.Equal(t, strings.Fields(want), m.Rows()[level], "%s at %s (scenarios %s)", tg.Kind, level, names())
	}
	disagree := map[string]bool{}
	for i, lv := range m.Levels {
		for j, sc := range m.Scenarios {
			c := m.Cells[i][j]
			checkRun(t, c.Run, sc, lv)
			occurs, documented := hermitage.DocumentedOccurs(tg.Kind, lv.Name, sc)
			if documented && occurs != c.Occurred(sc) {
				disagree[tg.Kind+"/"+lv.Name+"/"+sc.Name] = true
			}
		}
	}
	for key := range disagree {
		require.Contains(t, hermitage.Differences, key, "hyperiso and Hermitage disagree on %s, and nothing explains why", key)
	}
	for key := range hermitage.Differences {
		if strings.HasPrefix(key, tg.Kind+"/") {
			require.True(t, disagree[key], "the difference %s did not happen", key)
		}
	}
}

func names() string {
	var n []string
	for _, sc := range hermitage.Scenarios {
		n = append(n, sc.Name)
	}
	return strings.Join(n, " ")
}

// checkRun checks what a run recorded: one session per transaction and
// the observer, each transaction's outcome and declared level, the
// observer's reads of every key, a history that survives JSONL.
func checkRun(t *testing.T, r *hermitage.Run, sc hermitage.Scenario, lv hermitage.Level) {
	t.Helper()
	what := fmt.Sprintf("%s at %s", sc.Name, lv.Name)
	h := dbtest.RoundTrip(t, r.History)
	require.Len(t, h.Sessions, sc.Txns+1, what)
	require.Len(t, r.Outcomes, sc.Txns+1, what)
	for i, o := range r.Outcomes {
		tx := h.Txns[i+1]
		require.Equal(t, o.Status, tx.Status, "%s T%d", what, i+1)
		require.Equal(t, lv.Declared, tx.Level, "%s T%d", what, i+1)
		if o.Status == history.Aborted {
			require.NotEmpty(t, o.Reason, "%s T%d", what, i+1)
		}
	}
	observer := h.Txns[sc.Txns+1]
	require.Equal(t, history.Committed, observer.Status, what)
	if sc.Rows {
		// One predicate read of every row.
		var mine []history.Select
		for _, s := range h.Selects {
			if s.Txn == history.TxnID(sc.Txns+1) {
				mine = append(mine, s)
			}
		}
		require.Len(t, mine, 1, what)
		obs := mine[0]
		require.Equal(t, [2]int64{hermitage.RowKeys[0], hermitage.RowKeys[1] + 1}, [2]int64{obs.Lo, obs.Hi}, what)
		require.Len(t, observer.Ops, int(obs.N), what)
	} else {
		require.Len(t, observer.Ops, len(hermitage.Keys), what)
	}
	require.Equal(t, sc.Name, h.Meta["scenario"], what)
	require.Equal(t, lv.Name, h.Meta["isolation"], what)
	// The file says what the run recorded: the same verdicts.
	back, err := hermitage.Judge(context.Background(), &hermitage.Run{Scenario: r.Scenario, Level: r.Level, History: h})
	require.NoError(t, err, what)
	cell, err := hermitage.Judge(context.Background(), r)
	require.NoError(t, err, what)
	require.Equal(t, cell.Verdicts, back.Verdicts, what)
}
