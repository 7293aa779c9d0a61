package elle_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
)

// Keyword and string :process values name client processes as integers
// do: each becomes a session, paired like any other, distinct from the
// integer ones; a nemesis's operations are skipped for their :f.
func TestKeywordProcesses(t *testing.T) {
	src := `{:type :invoke, :f :txn, :value [[:append 1 1]], :process :a, :index 0}
{:type :invoke, :f :start-partition, :value nil, :process :nemesis, :index 1}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process "b", :index 2}
{:type :ok, :f :txn, :value [[:append 1 1]], :process :a, :index 3}
{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0, :index 4}
{:type :ok, :f :txn, :value [[:r 1 [1]]], :process "b", :index 5}
{:type :ok, :f :txn, :value [[:append 1 2]], :process 0, :index 6}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process :a, :index 7}
{:type :ok, :f :txn, :value [[:r 1 [2 1]]], :process :a, :index 8}
`
	h, err := elle.Parse(strings.NewReader(src), "kw.edn", elle.Options{})
	require.NoError(t, err)
	require.Len(t, h.Sessions, 3, "processes :a, \"b\" and 0")
	require.Equal(t, 4, h.Stats().Committed)
	// :a's two transactions are one session, in order.
	var a *history.Session
	for i := range h.Sessions {
		if len(h.Sessions[i].Txns) == 2 {
			a = &h.Sessions[i]
		}
	}
	require.NotNil(t, a)
	require.Contains(t, warnings(h), ":f :start-partition")
	// The lists say 2 came before 1 and 1 was there alone: incompatible.
	_, fs := listView(t, h)
	require.NotEmpty(t, fs)
}

// A history of completions only (no :invoke, as Elle's tests write them)
// reads each completion as a whole transaction, without real time, and
// means what the full history means.
func TestCompletionsOnly(t *testing.T) {
	full := `{:type :invoke, :f :txn, :value [[:append 2 5] [:append 1 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append 2 5] [:append 1 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:append 1 2] [:r 2 nil]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:append 1 2] [:r 2 []]], :process 1, :index 3}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 2, :index 4}
{:type :ok, :f :txn, :value [[:r 1 [1 2]]], :process 2, :index 5}
{:type :invoke, :f :txn, :value [[:append 1 3]], :process 3, :index 6}
{:type :fail, :f :txn, :value [[:append 1 3]], :process 3, :index 7}
`
	var completions []string
	for _, l := range strings.Split(strings.TrimSpace(full), "\n") {
		if !strings.Contains(l, ":invoke") {
			completions = append(completions, l)
		}
	}
	hf, err := elle.Parse(strings.NewReader(full), "full.edn", elle.Options{})
	require.NoError(t, err)
	hc, err := elle.Parse(strings.NewReader(strings.Join(completions, "\n")), "completions.edn", elle.Options{})
	require.NoError(t, err)
	require.Equal(t, hf.Stats().Committed, hc.Stats().Committed)
	require.Equal(t, hf.Stats().Aborted, hc.Stats().Aborted)
	require.Contains(t, warnings(hc), "no :invoke in the history")
	for tx := 1; tx < len(hc.Txns); tx++ {
		require.False(t, hc.Txns[tx].Timed, "a completion alone gives no interval")
	}
	for _, l := range []history.Level{history.SER, history.SI, history.RC} {
		require.Equal(t, verdictOf(t, hf, l).Verdict, verdictOf(t, hc, l).Verdict, "%v", l)
	}
	require.Equal(t, "violated", verdictOf(t, hc, history.SER).Verdict.String())
}
