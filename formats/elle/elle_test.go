package elle_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

func parse(t testing.TB, src string, opt elle.Options) *history.History {
	t.Helper()
	h, err := elle.Parse(strings.NewReader(src), "mem.edn", opt)
	require.NoError(t, err)
	require.NoError(t, h.CheckInvariants())
	return h
}

func parseErr(t *testing.T, src string, opt elle.Options) *history.InputError {
	t.Helper()
	_, err := elle.Parse(strings.NewReader(src), "mem.edn", opt)
	require.Error(t, err)
	var ie *history.InputError
	require.True(t, errors.As(err, &ie), "%T %v", err, err)
	return ie
}

// describe renders a history compactly: sessions with their transactions
// (status letter, id, operations), T⊥, and the version hints.
func describe(h *history.History) string {
	var sb strings.Builder
	val := func(k history.KeyID, v history.ValueID) string {
		if x := h.Value(k, v); x != history.EmptyList {
			return fmt.Sprint(x)
		}
		return "E"
	}
	ops := func(t history.TxnID) {
		for i, op := range h.Txns[t].Ops {
			if i > 0 {
				sb.WriteByte(' ')
			}
			k := h.KeyString(op.Key)
			switch op.Kind {
			case history.OpAppend:
				fmt.Fprintf(&sb, "A(%s,%s)", k, val(op.Key, op.Value))
			case history.OpWrite:
				fmt.Fprintf(&sb, "W(%s,%s)", k, val(op.Key, op.Value))
			case history.OpRead:
				fmt.Fprintf(&sb, "R(%s,%s)", k, val(op.Key, op.Value))
			case history.OpReadList:
				fmt.Fprintf(&sb, "R(%s,[", k)
				for j, v := range h.List(op) {
					if j > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(val(op.Key, v))
				}
				sb.WriteString("])")
			}
		}
	}
	for _, s := range h.Sessions {
		fmt.Fprintf(&sb, "S%d:", s.ID)
		for _, t := range s.Txns {
			fmt.Fprintf(&sb, " %c%d[", "CAU"[h.Txns[t].Status], h.Txns[t].ID)
			ops(t)
			sb.WriteByte(']')
		}
		sb.WriteString("; ")
	}
	fmt.Fprintf(&sb, "init T%d[", h.Txns[0].ID)
	ops(0)
	sb.WriteString("]")
	if len(h.VersionHints) > 0 {
		sb.WriteString("; hints")
		for _, vh := range h.VersionHints {
			fmt.Fprintf(&sb, " %s:%s<%s", h.KeyString(vh.Key), val(vh.Key, vh.Before), val(vh.Key, vh.After))
		}
	}
	return sb.String()
}

func warnings(h *history.History) string {
	var sb strings.Builder
	for _, w := range h.Warnings {
		sb.WriteString(w.String())
		sb.WriteByte('\n')
	}
	return sb.String()
}

// roundTrip checks that the native JSONL format keeps the operations,
// lists and names of an Elle history.
func roundTrip(t testing.TB, h *history.History) {
	t.Helper()
	var a bytes.Buffer
	require.NoError(t, jsonl.Write(&a, h))
	h2, err := jsonl.Parse(bytes.NewReader(a.Bytes()), "rt.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, describe(h), describe(h2))
}

// The three shared Elle histories (docs/formats.md, datasets/elle).
func TestSharedHistories(t *testing.T) {
	for _, tc := range []struct {
		file                                  string
		sessions, committed, aborted, unknown int
		reads, writes, keys, hints            int
		workload                              string
		describe                              string
	}{
		{"list-append-gh-30.edn", 3, 5, 0, 0, 3, 8, 4, 0, "list-append",
			"S2: C1[A(4,2) A(5,5)] C5[A(2,8)]; S0: C2[R(2,[]) R(3,[]) A(4,0)]; S1: C3[A(3,1) A(2,4) R(4,[])] C7[A(3,7) A(4,10)]; init T0[W(2,E) W(3,E) W(4,E) W(5,E)]"},
		{"paper-example.edn", 4, 4, 0, 0, 6, 13, 4, 3, "list-append",
			"S0: C0[A(253,1) A(253,3) A(253,4) A(255,2) A(255,3) A(255,4) A(255,5) A(256,1) A(256,2)]; " +
				"S2: C2[A(255,8) R(253,[1 3 4])]; S4: C4[A(256,4) R(255,[2 3 4 5 8]) R(256,[1 2 4]) R(253,[1 3 4])]; " +
				"S6: C6[A(250,10) R(253,[1 3 4]) R(255,[2 3 4 5]) A(256,3)]; init T-1[W(250,E) W(253,E) W(255,E) W(256,E)]"},
		{"rw-register.edn", 1, 3, 0, 0, 2, 1, 1, 0, "rw-register",
			"S0: C1[W(:x,2)] C3[R(:x,3)] C5[R(:x,2)]; init T0[W(:x,E)]"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := shared.Path(t, "elle", tc.file)
			h, err := elle.Read(path, elle.Options{})
			require.NoError(t, err)
			require.NoError(t, h.CheckInvariants())
			st := h.Stats()
			require.Equal(t, []int{tc.sessions, tc.committed, tc.aborted, tc.unknown, tc.reads, tc.writes, tc.keys},
				[]int{st.Sessions, st.Committed, st.Aborted, st.Unknown, st.Reads, st.Writes, st.Keys})
			require.Len(t, listViewH(t, h).VersionHints, tc.hints)
			require.Equal(t, tc.workload, h.Meta["workload"])
			require.Equal(t, "index", h.Meta["clock"])
			require.Equal(t, tc.describe, describe(h))
			require.Equal(t, history.InitImplicit, h.InitKind)
			require.Equal(t, elle.Format, h.Format)
			for _, tx := range h.Txns[1:] {
				require.True(t, tx.Timed)
				require.Less(t, tx.Start, tx.End)
			}
			roundTrip(t, h)
		})
	}
}

// docs/formats.md, list-append: the recommended result, with the list
// reads kept whole.
func TestSpecListAppendExample(t *testing.T) {
	src := `{:type :invoke, :f :txn, :value [[:append 1 10] [:r 2 nil]], :process 0, :time 100, :index 0}
{:type :invoke, :f :txn, :value [[:append 2 20]], :process 1, :time 110, :index 1}
{:type :ok, :f :txn, :value [[:append 1 10] [:r 2 []]], :process 0, :time 150, :index 2}
{:type :invoke, :f :txn, :value [[:r 1 nil] [:r 2 nil] [:append 1 12]], :process 0, :time 160, :index 3}
{:type :ok, :f :txn, :value [[:r 1 [10]] [:r 2 [20]] [:append 1 12]], :process 0, :time 190, :index 4}
{:type :info, :f :txn, :value [[:append 2 20]], :process 1, :time 900, :index 5, :error :timeout}
{:type :invoke, :f :txn, :value [[:r 1 nil] [:append 1 11]], :process 6, :time 950, :index 6}
{:type :fail, :f :txn, :value [[:r 1 nil] [:append 1 11]], :process 6, :time 990, :index 7, :error [:abort :conflict]}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 2, :time 995, :index 8}
{:type :ok, :f :txn, :value [[:r 1 [10 12]]], :process 2, :time 999, :index 9}
`
	h := parse(t, src, elle.Options{})
	// Hints: 10 < 12 from the list, and 10 < 11? No: 11 was appended only by
	// an aborted transaction, so it says nothing about the order.
	require.Equal(t, "S0: C0[A(1,10) R(2,[])] C3[R(1,[10]) R(2,[20]) A(1,12)]; S1: U1[A(2,20)]; S6: A6[A(1,11)]; S2: C8[R(1,[10 12])]; "+
		"init T-1[W(1,E) W(2,E)]", describe(h))
	require.Equal(t, "index", h.Meta["clock"])
	tx := h.Txns[2] // T1, the :info one
	require.Equal(t, history.Unknown, tx.Status)
	require.Equal(t, [3]any{int64(1), int64(math.MaxInt64), true}, [3]any{tx.Start, tx.End, tx.Timed})
	require.Equal(t, [2]int64{0, 2}, [2]int64{h.Txns[1].Start, h.Txns[1].End})
	require.Empty(t, h.Warnings)
	// The same with time as the clock when :index is missing.
	h = parse(t, strings.ReplaceAll(src, ", :index", ", :foo"), elle.Options{})
	require.Equal(t, "time", h.Meta["clock"])
	require.Equal(t, [2]int64{100, 150}, [2]int64{h.Txns[1].Start, h.Txns[1].End})
	// Without :index the ids are the positions of the invocations.
	require.Equal(t, int64(3), h.Txns[3].ID)
}

// docs/formats.md, rw-register.
func TestSpecRWRegisterExample(t *testing.T) {
	h := parse(t, `{:type :invoke, :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :index 0}
{:type :ok,     :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:r 1 nil] [:w 2 5]], :process 1, :index 2}
{:type :ok,     :f :txn, :value [[:r 1 1] [:w 2 5]],   :process 1, :index 3}
`, elle.Options{})
	require.Equal(t, "S0: C0[W(1,1) R(2,E)]; S1: C2[R(1,1) W(2,5)]; init T-1[W(1,E) W(2,E)]", describe(h))
	require.Equal(t, "rw-register", h.Meta["workload"])
	require.Empty(t, h.Warnings)
}

// The EDN syntax a real tokenizer must take: spacing inside brackets, commas,
// comments, discards, negative numbers, N suffixes, multi-line maps, unknown
// keys, tagged operation maps, one top-level vector or list of maps.
func TestEDNSyntax(t *testing.T) {
	want := "S0: C0[A(1,-2) R(1,[-2]) R(2,[])]; init T-1[W(1,E) W(2,E)]"
	for _, src := range []string{
		`{:type :invoke, :process 0, :value [[ :append 1 -2] [ :r 1 nil ] [:r 2 nil]], :index 0}` + "\n" +
			`{:type :ok, :process 0, :value [[ :append 1 -2 ] [ :r 1 [ -2 ] ] [:r 2 [ ]]], :index 1}`,
		"; a comment\n{:type :invoke :process 0 :value [[:append 1 -2N] [:r 1 nil] [:r 2 nil]] :index 0 :extra {:a #{1 2}}}\n" +
			"#_ {:type :bogus}\n{:type :ok\n :process 0\n :value [[:append 1 -2] [:r 1 [-2]] [:r 2 nil]]\n :index 1} ; trailing\n",
		"[{:type :invoke, :process 0, :value [[:append 1 -2] [:r 1 nil] [:r 2 nil]], :index 0}\n {:type :ok, :process 0, :value [[:append 1 -2] [:r 1 [-2]] [:r 2 []]], :index 1}]\n",
		"(#jepsen.history.Op{:type :invoke, :process 0, :value [[:append 1 -2] [:r 1 nil] [:r 2 nil]], :index 0}\n #jepsen.history.Op{:type :ok, :process 0, :value [[:append 1 -2] [:r 1 [-2]] [:r 2 []]], :index 1})",
	} {
		h := parse(t, src, elle.Options{})
		require.Equal(t, want, describe(h), src)
		require.Empty(t, h.Warnings, src)
	}
}

// elle-cli's JSON rendering reads as the EDN it renders (§5.9).
func TestJSON(t *testing.T) {
	edn := parse(t, `{:index 0 :type :invoke :process 3 :value [[:append 255 8] [:r 253 nil]]}
{:index 1 :type :ok :process 3 :value [[:append 255 8] [:r 253 [1 3 4]]]}
{:index 2 :type :invoke :process 4 :value [[:w x 1]]}
{:index 3 :type :fail :process 4 :value [[:w x 1]]}
`, elle.Options{Workload: elle.ListAppend, Lenient: true})
	for _, src := range []string{
		`[{"index":0,"type":"invoke","process":3,"value":[["append",255,8],["r",253,null]]},
 {"index":1,"type":"ok","process":3,"value":[["append",255,8],["r",253,[1,3,4]]]},
 {"index":2,"type":"invoke","process":4,"value":[["w","x",1]]},
 {"index":3,"type":"fail","process":4,"value":[["w","x",1]]}]`,
		`{"index":0,"type":"invoke","process":3,"value":[["append",255,8],["r",253,null]]}
{"index":1,"type":"ok","process":3,"value":[["append",255,8],["r",253,[1,3,4]]]}
{"index":2,"type":"invoke","process":4,"value":[["w","x",1]]}
{"index":3,"type":"fail","process":4,"value":[["w","x",1]]}`,
	} {
		require.Equal(t, elle.JSON, elle.DetectSyntax([]byte(src)))
		h := parse(t, src, elle.Options{Workload: elle.ListAppend, Lenient: true})
		require.Equal(t, describe(edn), describe(h))
		require.Equal(t, "json", h.Meta["syntax"])
		require.Equal(t, warnings(edn), warnings(h))
		require.Contains(t, warnings(h), "mem.edn:4: micro-operation 1: :w in a list-append history")
	}
	ie := parseErr(t, "{\"index\":0,\"type\":\"invoke\",\"process\":3,\"value\":[]}\n{\"index\":1,\n\"type\":\"ok\",\"process\":3,\"value\":[]]}\n", elle.Options{})
	require.Equal(t, 3, ie.Pos.Line, ie.Error())
	ie = parseErr(t, "[{\"index\":0,\"type\":\"invoke\",\"process\":3,\"value\":[]},\n{\"index\":1,\"type\":\"ok\",\"process\":3,\"value\":[]}\n", elle.Options{})
	require.Contains(t, ie.Error(), "mem.edn:1: JSON syntax error: the array opened here is not closed")
}

// The format as docs/formats.md (elle) describes it.
func TestVeriStrong(t *testing.T) {
	src := "5\n1 1 A 1 10\n1 1 R 2 0\n2 2 R 1 1 10\n2 2 A 1 12\n3 3 R 1 2 10 12\n"
	require.Equal(t, elle.VeriStrong, elle.DetectSyntax([]byte(src)))
	h := parse(t, src, elle.Options{})
	require.Equal(t, "S1: C1[A(1,10) R(2,[])]; S2: C2[R(1,[10]) A(1,12)]; S3: C3[R(1,[10 12])]; init T0[W(1,E) W(2,E)]", describe(h))
	require.Equal(t, "veristrong", h.Meta["syntax"])
	for _, tc := range []struct{ src, msg string }{
		{"2\n1 1 A 1 10\n", "mem.edn:2: the file announces 2 records but holds 1"},
		{"1\n1 1 A 1 10\n7\n", "mem.edn:3: trailing input after the 1 announced records: \"7\""},
		{"1\n1 1 W 1 10\n", "mem.edn:2: expected the record type R or A, found \"W\""},
		{"1\n1 1 R 1 9999 1\n", "mem.edn:2: list length 9999 is impossible here"},
		{"1\n1 x A 1 10\n", "mem.edn:2: expected a transaction id (a 64-bit integer), found \"x\""},
		{"1\n1 1 A 1 9223372036854775808\n", "mem.edn:2: expected the appended value (a 64-bit integer)"},
	} {
		ie := parseErr(t, tc.src, elle.Options{Syntax: elle.VeriStrong})
		require.Contains(t, ie.Error(), tc.msg)
		h := parse(t, tc.src, elle.Options{Syntax: elle.VeriStrong, Lenient: true})
		require.Contains(t, warnings(h), tc.msg)
	}
	// A transaction's records may be scattered; it stays in its first session.
	h = parse(t, "3\n1 7 A 1 1\n2 8 A 1 2\n3 7 R 1 2 1 2\n", elle.Options{})
	require.Equal(t, "S1: C7[A(1,1) R(1,[1 2])]; S2: C8[A(1,2)]; init T0[W(1,E)]", describe(h))
	require.Contains(t, warnings(h), "mem.edn:4: a record of transaction 7 names session 3, but its first record named session 1")
}

// Strict errors E1–E6 of §5.7 carry file:line; lenient mode recovers.
func TestErrors(t *testing.T) {
	inv := `{:type :invoke, :process 0, :value [[:append 1 1]], :index 0}` + "\n"
	ok := `{:type :ok, :process 0, :value [[:append 1 1]], :index 1}` + "\n"
	for _, tc := range []struct {
		name, src, msg string
		lenientWarn    string
	}{
		{"E1 unbalanced", inv + "{:type :ok, :process 0, :value [[:append 1 1]], :index 1\n", "mem.edn:2: unexpected end of input inside a form (the form starts here)", ""},
		{"E1 bad token", inv + "{:type :ok, :process 0, :value [[:append 1 1]] :index 1}}\n", "mem.edn:2: EDN syntax error", ""},
		{"E1 string", inv + "{:type :ok, :process 0, :value \"abc}\n", "mem.edn:2: unexpected end of input", ""},
		{"E1 not a map", inv + "[:type :ok]\n", "mem.edn:2: expected an operation map", ""},
		{"E2 no type", inv + "{:process 0, :value [[:append 1 1]]}\n" + ok, "mem.edn:2: operation map without :type", "map skipped"},
		{"E2 no process", inv + "{:type :ok, :value [[:append 1 1]], :index 1}\n", "mem.edn:2: operation map without :process (other operations name theirs)", "map skipped"},
		{"E2 ok no value", inv + "{:type :ok, :process 0, :index 1}\n", "mem.edn:2: :ok completion without :value", "taken as :info"},
		{"E3", inv + "{:type :okay, :process 0, :value [[:append 1 1]], :index 1}\n", "mem.edn:2: unknown :type :okay (want :invoke, :ok, :fail or :info)", "map skipped"},
		{"E4 arity", inv + "{:type :ok, :process 0, :value [[:append 1]], :index 1}\n", "mem.edn:2: micro-operation 1 is [:append 1], not a vector [f key value]", "micro-operation dropped"},
		{"E4 function", inv + "{:type :ok, :process 0, :value [[:cas 1 1]], :index 1}\n", "mem.edn:2: micro-operation 1: unknown function :cas", "micro-operation dropped"},
		{"E4 nil append", inv + "{:type :ok, :process 0, :value [[:append 1 nil]], :index 1}\n", "mem.edn:2: micro-operation 1: the value written must be an integer or an EDN scalar or vector, found nil", "micro-operation dropped"},
		{"E4 list of maps", inv + "{:type :ok, :process 0, :value [[:r 1 [{}]]], :index 1}\n", "mem.edn:2: micro-operation 1: a list element must be an integer or an EDN scalar or vector, found a map", "micro-operation dropped"},
		{"E4 read not a list", inv + "{:type :ok, :process 0, :value [[:append 1 1] [:r 1 :x]], :index 1}\n", "mem.edn:2: micro-operation 2: a list read must return nil or a vector of values, found :x", "micro-operation dropped"},
		{"E4 register read", inv + "{:type :ok, :process 0, :value [[:append 1 1] [:r 1 1]], :index 1}\n", "mem.edn:2: micro-operation 2: an integer read in a list-append history (recognised from line 1", "micro-operation dropped"},
		{"E4 mixed", inv + ok + "{:type :invoke, :process 0, :value [[:w 1 1]], :index 2}\n{:type :ok, :process 0, :value [[:w 1 1]], :index 3}\n", "mem.edn:4: micro-operation 1: :w in a list-append history (recognised from line 1", "micro-operation dropped"},
		{"E4 value not a vector", inv + "{:type :ok, :process 0, :value 7, :index 1}\n", "mem.edn:2: :value must be a vector of micro-operations, found 7", "value ignored"},
		{"E4 key", inv + "{:type :ok, :process 0, :value [[:append {1 2} 1]], :index 1}\n", "mem.edn:2: micro-operation 1: the key must be an integer or an EDN scalar or vector (a keyword, string, …), found a map", "micro-operation dropped"},
		{"E4 reserved", `{:type :invoke, :process 0, :value [[:append 1 9221111406453585911]], :index 0}` + "\n", "mem.edn:1: micro-operation 1: the value written 9221111406453585911 is reserved for the empty list (nil)", "micro-operation dropped"},
		{"E5 orphan", ok + inv, "mem.edn:1: :ok completion on process 0 with no pending :invoke", "completion ignored"},
		{"E6 plain", inv + "{:type :ok, :process 0, :value [[:append 1 99999999999999999999]], :index 1}\n", "mem.edn:2: integer 99999999999999999999 does not fit in 64 bits", ""},
		{"E6 N", inv + "{:type :ok, :process 0, :value [[:append 1 99999999999999999999N]], :index 1}\n", "mem.edn:2: micro-operation 1: the value written 99999999999999999999 does not fit in 64 bits", "micro-operation dropped"},
		{"E6 key", inv + "{:type :ok, :process 0, :value [[:append 99999999999999999999N 1]], :index 1}\n", "mem.edn:2: micro-operation 1: key 99999999999999999999 does not fit in 64 bits", "micro-operation dropped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ie := parseErr(t, tc.src, elle.Options{})
			require.Contains(t, ie.Error(), tc.msg)
			require.Equal(t, "mem.edn", ie.Pos.File)
			h := parse(t, tc.src, elle.Options{Lenient: true})
			w := warnings(h)
			require.Contains(t, w, tc.msg)
			require.Contains(t, w, tc.lenientWarn)
		})
	}
}

// Lenient recovery from a syntax error resumes on the next line.
func TestLenientSkipsBadLines(t *testing.T) {
	h := parse(t, `{:type :invoke, :process 0, :value [[:append 1 1]], :index 0}
{:type :ok, :process 0, :value [[:append 1 1]], :index 1}}
{:type :invoke, :process 0, :value [[:r 1 nil]], :index 2}
{:type :ok, :process 0, :value [[:r 1 [1]]], :index 3}
`, elle.Options{Lenient: true})
	require.Equal(t, "S0: C0[A(1,1)] C2[R(1,[1])]; init T-1[W(1,E)]", describe(h))
	require.Contains(t, warnings(h), "mem.edn:2: EDN syntax error")
	// A map that never closes is skipped alone: decoding resumes on the
	// line after its start.
	h = parse(t, `{:type :invoke, :process 0, :value [[:append 1 1]], :index 0}
{:type :ok, :process 0, :value [[:append 1 1]], :index 1
{:type :invoke, :process 1, :value [[:r 1 nil]], :index 2}
{:type :ok, :process 1, :value [[:r 1 [1]]], :index 3}
`, elle.Options{Lenient: true})
	require.Equal(t, "S0: U0[A(1,1)]; S1: C2[R(1,[1])]; init T-1[W(1,E)]", describe(h))
	require.Contains(t, warnings(h), "mem.edn:2: unexpected end of input inside a form (the form starts here); skipped to the next line")
	// An empty file is an error, or an empty history.
	ie := parseErr(t, " ; nothing\n", elle.Options{})
	require.Contains(t, ie.Error(), "mem.edn:1: no operation maps in the file")
	h = parse(t, "", elle.Options{Lenient: true})
	require.Len(t, h.Txns, 1)
}

// Operations other than :txn, and the nemesis, are skipped with a warning.
func TestSkipsNonTransactions(t *testing.T) {
	h := parse(t, `{:type :invoke, :f :read, :process 0, :value nil, :index 0}
{:type :info, :f :start-partition, :process :nemesis, :value nil, :index 1}
{:type :ok, :f :read, :process 0, :value 3, :index 2}
{:type :invoke, :f :txn, :process 0, :value [[:w 1 1]], :index 3}
{:type :info, :f :stop-partition, :process :nemesis, :value nil, :index 4}
{:type :ok, :f :txn, :process 0, :value [[:w 1 1]], :index 5}
`, elle.Options{})
	require.Equal(t, "S0: C3[W(1,1)]; init T0[W(1,E)]", describe(h))
	require.Equal(t, "mem.edn:1: 2 operation map(s) with :f :read skipped, the first here: only :txn operations of client processes are transactions\n"+
		"mem.edn:2: 1 operation map(s) with :f :start-partition skipped, the first here: only :txn operations of client processes are transactions\n"+
		"mem.edn:5: 1 operation map(s) with :f :stop-partition skipped, the first here: only :txn operations of client processes are transactions\n", warnings(h))
	// A nemesis operation with :f :txn is skipped for its process.
	h = parse(t, "{:type :info, :f :txn, :process :nemesis, :value [[:w 1 1]], :index 0}\n{:type :invoke, :process 0, :value [[:w 1 2]], :index 1}", elle.Options{})
	require.Equal(t, "S0: U1[W(1,2)]; init T0[W(1,E)]", describe(h))
	require.Contains(t, warnings(h), "with :process :nemesis skipped")
	require.Contains(t, warnings(h), "mem.edn:2: 1 invocation(s) never completed, the first here")
}

// Symbolic keys get stand-ins above every integer key and keep their names.
func TestSymbolicKeys(t *testing.T) {
	h := parse(t, `{:type :invoke, :process 0, :value [[:w :x 1] [:w "y" 2] [:w 7 3] [:w x 4]]}
{:type :ok, :process 0, :value [[:w :x 1] [:w "y" 2] [:w 7 3] [:w x 4]]}
`, elle.Options{})
	require.Equal(t, []int64{9, 8, 7, 10}, h.Keys) // stand-ins in name order: "y" < :x < x
	require.Equal(t, []string{":x", `"y"`, "", "x"}, h.KeyNames)
	require.Contains(t, warnings(h), "mem.edn:2: 3 key(s) are not integers (:x, …): kept by name")
	require.Equal(t, "none", h.Meta["clock"])
	roundTrip(t, h)
}

// The hand-written histories of testdata/elle.
func TestTestdata(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "elle")
	for _, tc := range []struct {
		file, describe string
		warnings       []string
	}{
		{"info-fail.edn",
			"S0: C0[A(1,1)] A4[A(1,3)] C6[R(1,[1 2]) R(2,[1])]; S1: U1[A(1,2) A(2,1)]; S2: U8[A(2,2)]; init T-1[W(1,E) W(2,E)]",
			[]string{"info-fail.edn:13: 1 invocation(s) never completed, the first here: their outcome is unknown"}},
		{"crashed-process.edn",
			"S0: C0[A(5,1)] C8[R(5,[1 10]) R(6,[1])]; S1: U1[A(5,10)]; S3: C6[R(5,[1 10]) A(6,1)]; init T-1[W(5,E) W(6,E)]",
			[]string{"crashed-process.edn:7: 2 operation map(s) with :f :start-partition skipped"}},
		{"duplicate-appends.edn",
			"S0: C0[A(1,5)]; S1: C1[A(1,5) A(2,7)]; S2: C3[R(1,[5]) R(2,[])] C6[R(1,[5 5]) R(2,[7])]; init T-1[W(1,E) W(2,E)]",
			[]string{"duplicate-appends.edn:9: value 5 appended 2 times to key 1: which of them a read observed is uncertain"}},
		{"incompatible-order.edn",
			"S0: C0[A(1,1)]; S1: C2[A(1,2)]; S2: C4[R(1,[1 2])]; S3: C6[R(1,[2 1])]; init T-1[W(1,E)]",
			nil},
		{"realtime-stale-read.edn",
			"S0: C0[A(1,1)]; S1: C2[R(1,[])]; init T-1[W(1,E)]", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h, err := elle.Read(filepath.Join(dir, tc.file), elle.Options{})
			require.NoError(t, err)
			require.NoError(t, h.CheckInvariants())
			require.Equal(t, tc.describe, describe(h))
			w := warnings(h)
			for _, s := range tc.warnings {
				require.Contains(t, w, s)
			}
			if tc.warnings == nil {
				require.Empty(t, w)
			}
			roundTrip(t, h)
		})
	}
}

// A process that invokes again after :info stays one session, with a warning.
func TestReusedProcess(t *testing.T) {
	h := parse(t, `{:type :invoke, :process 0, :value [[:append 1 1]]}
{:type :info, :process 0, :value [[:append 1 1]]}
{:type :invoke, :process 0, :value [[:append 1 2]]}
{:type :ok, :process 0, :value [[:append 1 2]]}
`, elle.Options{})
	require.Equal(t, "S0: U0[A(1,1)] C2[A(1,2)]; init T-1[W(1,E)]", describe(h))
	require.Contains(t, warnings(h), "mem.edn:3: process 0 invokes again after its :info completion at line 2")
}

// Warnings of one kind are capped.
func TestWarningCap(t *testing.T) {
	var sb strings.Builder
	for i := range 25 {
		fmt.Fprintf(&sb, "{:type :invoke, :f :read, :process %d, :value nil}\n{:type :invoke, :process %d, :value [[:append 1 7] [:append %d 1]]}\n", i, i+100, i+2)
		fmt.Fprintf(&sb, "{:type :invoke, :process %d, :value [[:append %d 1]]}\n", i+200, i+2)
	}
	h := parse(t, sb.String(), elle.Options{})
	w := warnings(h)
	require.Contains(t, w, "value 7 appended 25 times to key 1")
	require.Contains(t, w, "25 operation map(s) with :f :read skipped")
	require.Contains(t, w, "50 invocation(s) never completed")
	require.Equal(t, 9, strings.Count(w, "appended 2 times"))
	require.Contains(t, w, "16 more warnings like the above (duplicate-value) not shown, from here on")
}

// A large history is decoded in parallel chunks; the result is the one of a
// sequential decode (GOMAXPROCS 1), also when the cuts fall inside
// multi-line maps or strings, or near errors.
func TestParallelDecode(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor: no parallel decode")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	src := generate(rng, genCfg{mode: simSerial, procs: 5, txns: 7000, keys: 20, maxOps: 4, failProb: 0.02, infoProb: 0.01, openProb: 0.5, rotate: 20})
	require.Greater(t, len(src), 1<<20)
	for i, s := range []string{
		src,
		strings.ReplaceAll(src, ", :process", "\n :process"),
		strings.ReplaceAll(src, ":time 10000,", ":time 10000,,,]"),
		strings.Replace(strings.Replace(src, ":time 20000,", ":time \"20000,", 1), ":time 50000,", ":time 50000\",", 1),
	} {
		for _, lenient := range []bool{i != 2, i >= 2} {
			opt := elle.Options{Lenient: lenient}
			h, err := elle.Parse(strings.NewReader(s), "big.edn", opt)
			procs := runtime.GOMAXPROCS(1)
			hs, errs := elle.Parse(strings.NewReader(s), "big.edn", opt)
			runtime.GOMAXPROCS(procs)
			if err != nil || errs != nil {
				require.Error(t, err)
				require.Error(t, errs)
				require.Equal(t, errs.Error(), err.Error())
				continue
			}
			require.True(t, describe(hs) == describe(h), "variant %d lenient %v", i, lenient)
			require.True(t, warnings(hs) == warnings(h), "variant %d lenient %v", i, lenient)
			for j := range h.Txns {
				require.Equal(t, hs.Txns[j].Pos, h.Txns[j].Pos)
			}
		}
	}
}

// formats.Detect picks this reader for .edn files and for Elle histories
// in EDN, JSON and VeriStrong text under other names; formats.Read reads
// them.
func TestDetection(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, src string }{
		{"h.edn", "{:type :invoke, :process 0, :value [[:append 1 1]]}\n"},
		{"history.txt", "; Jepsen\n{:type :invoke, :process 0, :value [[:append 1 1]]}\n"},
		{"vec.txt", "[{:type :invoke, :process 0, :value [[:append 1 1]]}]\n"},
		{"tagged", "#jepsen.history.Op{:type :invoke, :process 0, :value [[:append 1 1]]}\n"},
		{"a.json", `[{"type":"invoke","process":0,"value":[["append",1,1]]}]`},
		{"lines.json", "{\"index\":0, \"type\": \"invoke\", \"process\":0,\"value\":[[\"append\",1,1]]}\n"},
		{"vs.txt", "1\n1 1 A 1 1\n"},
	} {
		p := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(p, []byte(tc.src), 0o644))
		f, err := formats.Detect(p)
		require.NoError(t, err, tc.name)
		require.Equal(t, "elle", f, tc.name)
		h, err := formats.Read(p, formats.Options{})
		require.NoError(t, err, tc.name)
		require.Equal(t, elle.Format, h.Format)
		require.Len(t, h.Txns, 2, tc.name)
	}
	// hyperiso's own JSON lines stay jsonl.
	p := filepath.Join(dir, "native")
	require.NoError(t, os.WriteFile(p, []byte(`{"hyperiso": 1, "meta": {"type": "ok"}}`+"\n"), 0o644))
	f, err := formats.Detect(p)
	require.NoError(t, err)
	require.Equal(t, "jsonl", f)
	for _, name := range []string{"list-append-gh-30.edn", "paper-example.edn", "rw-register.edn"} {
		p := shared.Path(t, "elle", name)
		f, err := formats.Detect(p)
		require.NoError(t, err)
		require.Equal(t, "elle", f)
		_, err = formats.Read(p, formats.Options{Format: "elle"})
		require.NoError(t, err)
	}
}

// TestWorkloadDetection: a write or append decides the workload wherever it
// stands; only a history without them falls back to its first telling read.
func TestWorkloadDetection(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{:type :ok, :process 0, :value [[:r :x [1 2]]]}
{:type :ok, :process 1, :value [[:w :x 3]]}`, elle.RWRegister.String()},
		{`{:type :ok, :process 0, :value [[:r :x 5]]}
{:type :ok, :process 1, :value [[:append :x 3]]}`, elle.ListAppend.String()},
		{`{:type :ok, :process 0, :value [[:r :x nil]]}
{:type :ok, :process 1, :value [[:r :x 4]] }
{:type :ok, :process 2, :value [[:r :x [4]]]}`, elle.RWRegister.String()},
		{`{:type :ok, :process 0, :value [[:r :x nil]]}
{:type :ok, :process 1, :value [[:r :x [4]]]}
{:type :ok, :process 2, :value [[:r :x 4]]}`, elle.ListAppend.String()},
	} {
		h, err := elle.Parse(strings.NewReader(c.src), "w.edn", elle.Options{Lenient: true})
		require.NoError(t, err, c.src)
		require.Equal(t, c.want, h.Meta["workload"], c.src)
	}
}

// TestJSONInvalidUTF8: elle-cli JSON with a byte that is not UTF-8 (in a
// field name here, which encoding/json would have read as U+FFFD and
// ignored) is an error naming the line (issue 26).
func TestJSONInvalidUTF8(t *testing.T) {
	in := `{"type": "invoke", "process": 0, "value": [["append", 1, 1]], "index": 0}` + "\n" +
		`{"type": "ok", "process": 0, "value": [["append", 1, 1]], "ind` + "\xff" + `x": 1}` + "\n"
	_, err := elle.Parse(strings.NewReader(in), "h.json", elle.Options{})
	require.ErrorContains(t, err, "h.json:2")
	require.ErrorContains(t, err, "not valid UTF-8")
	h, err := elle.Parse(strings.NewReader(in), "h.json", elle.Options{Lenient: true})
	require.NoError(t, err)
	require.NotEmpty(t, h.Warnings)
}

// TestVeriStrongFinalNewline: VeriStrong's text cut inside its last number
// ("... R 1 1 15" cut to "... R 1 1 1") is refused: the file must end with
// whitespace after the last record (issue 26).
func TestVeriStrongFinalNewline(t *testing.T) {
	whole := "2\n1 1 A 1 15\n2 2 R 1 1 15\n"
	_, err := elle.Parse(strings.NewReader(whole), "h.txt", elle.Options{})
	require.NoError(t, err)
	_, err = elle.Parse(strings.NewReader(whole[:len(whole)-2]), "h.txt", elle.Options{})
	require.ErrorContains(t, err, "does not end with a newline")
	_, err = elle.Parse(strings.NewReader(whole[:len(whole)-2]), "h.txt", elle.Options{Lenient: true})
	require.NoError(t, err)
}
