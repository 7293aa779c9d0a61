package elle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// The input variants of Jepsen histories Elle accepts, each checked for the
// verdict Elle's definitions give. A G1c (a cycle of write-read
// dependencies) is forbidden from read committed up; a G-single (read
// skew: one anti-dependency in the cycle) is allowed at read committed
// and forbidden at snapshot isolation and serializability.

// verdicts checks h at the levels given and returns the verdicts.
func verdicts(t *testing.T, h *history.History, levels ...history.Level) map[history.Level]check.Verdict {
	t.Helper()
	out := map[history.Level]check.Verdict{}
	for _, l := range levels {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := check.Check(ctx, h, l, check.Options{})
		cancel()
		require.NoError(t, err, "%v", l)
		out[l] = res.Verdict
	}
	return out
}

// anomalyAt returns the anomaly classes of the check of h at l.
func anomalyAt(t *testing.T, h *history.History, l history.Level) []string {
	t.Helper()
	res, err := check.Check(context.Background(), h, l, check.Options{})
	require.NoError(t, err)
	var out []string
	for _, a := range res.Anomalies {
		out = append(out, a.Class)
	}
	return out
}

var all = []history.Level{history.RC, history.RA, history.CC, history.SI, history.SER}

func requireG1c(t *testing.T, h *history.History) {
	t.Helper()
	for l, v := range verdicts(t, h, all...) {
		require.Equal(t, check.Violated, v, "G1c at %v", l)
	}
	require.Contains(t, anomalyAt(t, h, history.RC), "G1c")
}

func requireGSingle(t *testing.T, h *history.History) {
	t.Helper()
	v := verdicts(t, h, history.RC, history.SI, history.SER)
	require.Equal(t, check.Satisfied, v[history.RC], "G-single is allowed at RC")
	require.Equal(t, check.Violated, v[history.SI], "G-single at SI")
	require.Equal(t, check.Violated, v[history.SER], "G-single at SER")
}

// G1c written as completions only, as Elle's own tests write histories.
const g1cCompletions = `{:type :ok, :f :txn, :process 0, :value [[:w :x 1] [:r :y 1]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:w :y 1] [:r :x 1]], :index 1}
`

func TestInputCompletionOnlyG1c(t *testing.T) {
	h := parse(t, g1cCompletions, elle.Options{})
	require.Contains(t, warnings(h), "no :invoke in the history")
	require.Equal(t, 2, len(h.Txns)-1)
	requireG1c(t, h)
}

// G-single, completions only, list-append.
const gSingleCompletions = `{:type :ok, :f :txn, :process 0, :value [[:append :x 1] [:append :y 1]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:r :x nil] [:r :y [1]]], :index 1}
`

func TestInputCompletionOnlyGSingle(t *testing.T) {
	requireGSingle(t, parse(t, gSingleCompletions, elle.Options{}))
}

// String, keyword and vector keys and values: interned by name, printed as
// read, and the verdicts of the integer histories.
func TestInputNamedValues(t *testing.T) {
	g1c := `{:type :ok, :f :txn, :process 0, :value [[:w "x" "one"] [:r [:k 2] :b]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:w [:k 2] :b] [:r "x" "one"]], :index 1}
`
	h := parse(t, g1c, elle.Options{})
	requireG1c(t, h)
	w := h.Txns[1].Ops[0]
	require.Equal(t, `"x"`, h.KeyString(w.Key))
	require.Equal(t, `"one"`, h.ValueString(w.Key, w.Value))
	r := h.Txns[1].Ops[1]
	require.Equal(t, "[:k 2]", h.KeyString(r.Key))
	require.Equal(t, ":b", h.ValueString(r.Key, r.Value))
	// Reports name keys as read.
	res, err := check.Check(context.Background(), h, history.SER, check.Options{})
	require.NoError(t, err)
	js, err := json.Marshal(res)
	require.NoError(t, err)
	require.Contains(t, string(js), `read key \"x\" = \"one\"`)
	require.Contains(t, string(js), `"key_name":"[:k 2]"`)

	gSingle := `{:type :ok, :f :txn, :process 0, :value [[:append "x" [:anti 3]] [:append "y" :v]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:r "x" nil] [:r "y" [:v]]], :index 1}
`
	requireGSingle(t, parse(t, gSingle, elle.Options{}))

	// A read of a value nobody wrote is not confused with an integer: the
	// string "1" is not the integer 1.
	thin := `{:type :ok, :f :txn, :process 0, :value [[:w :x "1"]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:r :x 1]], :index 1}
`
	h = parse(t, thin, elle.Options{})
	require.Equal(t, check.Violated, verdicts(t, h, history.RC)[history.RC])
	// Floats, booleans and characters are values too; a map is not.
	h = parse(t, `{:type :ok, :f :txn, :process 0, :value [[:w :x 1.5] [:w :y true] [:w :z \c]], :index 0}`+"\n", elle.Options{})
	require.Equal(t, "1.5 true \\c", h.ValueString(h.Txns[1].Ops[0].Key, h.Txns[1].Ops[0].Value)+" "+
		h.ValueString(h.Txns[1].Ops[1].Key, h.Txns[1].Ops[1].Value)+" "+h.ValueString(h.Txns[1].Ops[2].Key, h.Txns[1].Ops[2].Value))
	ie := parseErr(t, `{:type :ok, :f :txn, :process 0, :value [[:w :x {:a 1}]], :index 0}`+"\n", elle.Options{})
	require.Contains(t, ie.Error(), "mem.edn:1: micro-operation 1: the value written must be an integer or an EDN scalar or vector, found a map")
}

// Keyword and string :process values are processes like integers.
func TestInputNamedProcesses(t *testing.T) {
	src := `{:type :invoke, :f :txn, :process :a, :value [[:w :x 1] [:r :y nil]], :index 0}
{:type :invoke, :f :txn, :process "b", :value [[:w :y 1] [:r :x nil]], :index 1}
{:type :ok, :f :txn, :process :a, :value [[:w :x 1] [:r :y 1]], :index 2}
{:type :ok, :f :txn, :process "b", :value [[:w :y 1] [:r :x 1]], :index 3}
`
	h := parse(t, src, elle.Options{})
	require.Len(t, h.Sessions, 2)
	requireG1c(t, h)
}

// Operations of other workloads are counted and skipped; a history with no
// transaction left is refused, never satisfied.
func TestInputOtherWorkloads(t *testing.T) {
	src := `{:type :invoke, :f :read, :process 0, :value nil, :index 0}
{:type :ok, :f :read, :process 0, :value 3, :index 1}
{:type :info, :f :start-partition, :process :nemesis, :value nil, :index 2}
` + g1cCompletions
	h := parse(t, src, elle.Options{})
	require.Contains(t, warnings(h), "mem.edn:1: 2 operation map(s) with :f :read skipped")
	requireG1c(t, h)

	only := `{:type :invoke, :f :read, :process 0, :value nil, :index 0}
{:type :ok, :f :read, :process 0, :value 3, :index 1}
`
	h = parse(t, only, elle.Options{})
	_, err := check.Check(context.Background(), h, history.SER, check.Options{})
	require.True(t, errors.Is(err, check.ErrInput), "%v", err)
	require.ErrorContains(t, err, "nothing to check")
}

// A process may have several invocations pending: Elle pairs nothing for
// its process order and its analyses, only for real time, where its pair
// index refuses the history. Completions pair in order; there is no real
// time, and strict-ser is refused naming why.
func TestInputSeveralPendingInvocations(t *testing.T) {
	src := `{:type :invoke, :f :txn, :process 0, :value [[:w :x 1] [:r :y nil]], :index 0, :time 10}
{:type :invoke, :f :txn, :process 0, :value [[:r :z nil]], :index 1, :time 11}
{:type :invoke, :f :txn, :process 1, :value [[:w :y 1] [:r :x nil]], :index 2, :time 12}
{:type :ok, :f :txn, :process 0, :value [[:w :x 1] [:r :y 1]], :index 3, :time 13}
{:type :ok, :f :txn, :process 1, :value [[:w :y 1] [:r :x 1]], :index 4, :time 14}
{:type :ok, :f :txn, :process 0, :value [[:r :z nil]], :index 5, :time 15}
`
	h := parse(t, src, elle.Options{})
	require.Contains(t, warnings(h), "mem.edn:2: :invoke on process 0 while its :invoke at line 1 is still pending")
	require.Equal(t, "none", h.Meta["clock"])
	// Process 0's session holds both, in invocation order, committed.
	s0 := h.Sessions[0]
	require.Len(t, s0.Txns, 2)
	require.Equal(t, history.Committed, h.Txns[s0.Txns[0]].Status)
	require.Equal(t, history.Committed, h.Txns[s0.Txns[1]].Status)
	require.Equal(t, "r", h.Txns[s0.Txns[1]].Ops[0].Kind.String())
	requireG1c(t, h)
	_, err := check.Check(context.Background(), h, history.StrictSER, check.Options{})
	require.True(t, errors.Is(err, check.ErrInput), "%v", err)
	require.ErrorContains(t, err, "strict-ser needs real-time order")

	// The second invocation never completes: it is of unknown outcome.
	h = parse(t, src[:bytes.LastIndexByte([]byte(src[:len(src)-1]), '\n')+1], elle.Options{})
	require.Equal(t, history.Unknown, h.Txns[h.Sessions[0].Txns[1]].Status)
	require.Contains(t, warnings(h), "1 invocation(s) never completed")
	requireG1c(t, h)
}

// Names survive convert: EDN to JSONL to EDN and back keeps every name and
// every verdict.
func TestInputNamesRoundTrip(t *testing.T) {
	src := `{:type :ok, :f :txn, :process 0, :value [[:append "x" [:anti 3]] [:append :y "v"] [:append 5 1.5]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:r "x" nil] [:r :y ["v"]] [:r 5 [1.5]]], :index 1}
`
	h := parse(t, src, elle.Options{})
	var j bytes.Buffer
	require.NoError(t, jsonl.Write(&j, h))
	require.Contains(t, j.String(), `["append","\"x\"","[:anti 3]"]`)
	hj, err := jsonl.Parse(bytes.NewReader(j.Bytes()), "rt.jsonl", jsonl.Options{})
	require.NoError(t, err)
	var e bytes.Buffer
	require.NoError(t, elle.Write(&e, hj))
	require.Contains(t, e.String(), `[:append "x" [:anti 3]]`)
	require.Contains(t, e.String(), `[:r :y ["v"]]`)
	he := parse(t, e.String(), elle.Options{})
	require.Equal(t, named(h), named(he))
	require.Equal(t, named(h), named(hj))
	require.Contains(t, named(h), `append("x",[:anti 3])`)
	for _, x := range []*history.History{hj, he} {
		require.Equal(t, verdicts(t, h, all...), verdicts(t, x, all...))
	}
	requireGSingle(t, he)

	// JSONL strings to EDN and back: a name that is not EDN text becomes an
	// EDN string.
	src2 := `{"session":1,"ops":[["w","acct","a b"],["r","k",null]]}
{"session":2,"ops":[["r","acct","a b"],["w","k",":kw"]]}`
	h2, err := jsonl.Parse(bytes.NewReader([]byte(src2)), "m.jsonl", jsonl.Options{})
	require.NoError(t, err)
	e.Reset()
	require.NoError(t, elle.Write(&e, h2))
	require.Contains(t, e.String(), `[:w acct "a b"]`)
	require.Contains(t, e.String(), `[:w k :kw]`)
	h3 := parse(t, e.String(), elle.Options{})
	require.Equal(t, verdicts(t, h2, all...), verdicts(t, h3, all...))
}

// named renders h's transactions by session with keys and values as read
// (names, not stand-ins), without ids.
func named(h *history.History) string {
	var b strings.Builder
	for _, s := range h.Sessions {
		fmt.Fprintf(&b, "S%d:", s.ID)
		for _, t := range s.Txns {
			tx := &h.Txns[t]
			fmt.Fprintf(&b, " %v[", tx.Status)
			for _, op := range tx.Ops {
				fmt.Fprintf(&b, " %v(%s,", op.Kind, h.KeyString(op.Key))
				if op.Kind == history.OpReadList {
					b.WriteString("[")
					for _, v := range h.List(op) {
						b.WriteString(h.ValueString(op.Key, v) + " ")
					}
					b.WriteString("]")
				} else {
					b.WriteString(h.ValueString(op.Key, op.Value))
				}
				b.WriteString(")")
			}
			b.WriteString("]")
		}
		b.WriteString("; ")
	}
	return b.String()
}
