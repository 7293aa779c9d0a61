package elle_test

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// rowsOf lists the inserts, deletes and predicate reads of h.
func rowsOf(h *history.History) string {
	var sb strings.Builder
	for t := range h.Txns {
		for _, op := range h.Txns[t].Ops {
			if op.Src == history.SrcInsert || op.Src == history.SrcDelete {
				sb.WriteString(op.Src.String() + "(" + h.KeyString(op.Key) + ") ")
			}
		}
	}
	for _, s := range h.Selects {
		sb.WriteString("select " + h.TxnString(s.Txn) + "[")
		for i, op := range s.Ops(h) {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(h.KeyString(op.Key) + "=" + h.ValueString(op.Key, op.Value))
		}
		sb.WriteString("] ")
	}
	return sb.String()
}

// A closed-predicate history as Elle's generator writes it: an :init
// operation, inserts, deletes, writes, reads of nil and predicate reads.
const closedPredicate = `{:index 0, :type :invoke, :process 0, :f :init, :value {1 0, 2 1}}
{:index 1, :type :ok, :process 0, :f :init, :value {1 0, 2 1}}
{:index 2, :type :invoke, :process 0, :f :txn, :value [[:rp :true nil] [:insert 3 2] [:r 2 nil]]}
{:index 3, :type :ok, :process 0, :f :txn, :value [[:rp :true {2 1, 1 0}] [:insert 3 2] [:r 2 1]]}
{:index 4, :type :invoke, :process 1, :f :txn, :value [[:delete 1] [:w 2 3] [:rp :true nil] [:r 1 nil]]}
{:index 5, :type :ok, :process 1, :f :txn, :value [[:delete 1] [:w 2 3] [:rp :true {2 3, 3 2}] [:r 1 nil]]}
`

// TestClosedPredicateMapping: Elle's closed-predicate operations become
// the model's rows: :init a transaction of inserts, [:rp :true {…}] a
// predicate read of every integer key, a read of nil an absent row, and
// the :init's map the initial state (rows it does not name start absent).
func TestClosedPredicateMapping(t *testing.T) {
	h := parse(t, closedPredicate, elle.Options{})
	require.Equal(t, "S0: C2[R(1,0) R(2,1) R(3,E) W(3,2) R(2,1)]; S1: C4[W(1,E) W(2,3) R(1,E) R(2,3) R(3,2) R(1,E)]; init T0[W(1,0) W(2,1) W(3,E)]", describe(h))
	require.Equal(t, "insert(3) delete(1) select T2(s0#0)[1=0 2=1 3=nil] select T4(s1#0)[1=nil 2=3 3=2] ", rowsOf(h))
	require.Equal(t, "rw-register", h.Meta["workload"])
	roundTrip(t, h)

	// The same in elle-cli's JSON, whose object names are strings.
	js := `[{"index":0,"type":"invoke","process":0,"f":"init","value":{"1":0,"2":1}},
{"index":1,"type":"ok","process":0,"f":"init","value":{"1":0,"2":1}},
{"index":2,"type":"invoke","process":0,"f":"txn","value":[["rp","true",null],["insert",3,2],["r",2,null]]},
{"index":3,"type":"ok","process":0,"f":"txn","value":[["rp","true",{"2":1,"1":0}],["insert",3,2],["r",2,1]]},
{"index":4,"type":"invoke","process":1,"f":"txn","value":[["delete",1],["w",2,3],["rp","true",null],["r",1,null]]},
{"index":5,"type":"ok","process":1,"f":"txn","value":[["delete",1],["w",2,3],["rp","true",{"2":3,"3":2}],["r",1,null]]}]`
	hj := parse(t, js, elle.Options{})
	require.Equal(t, describe(h), describe(hj))
	require.Equal(t, rowsOf(h), rowsOf(hj))
}

// Elle's value-test predicates, as its generator writes them (about two of
// three predicate reads): [:= v] is the test "value in {v}", [:mod m r]
// "value mod m = r"; the rows a read did not return read stand-ins for
// their absent and rejected versions. Read from EDN and elle-cli's JSON
// alike, written back to EDN and to JSONL as read.
func TestClosedPredicateValueTests(t *testing.T) {
	src := `{:index 0, :type :invoke, :process 0, :f :init, :value {1 0, 2 1}}
{:index 1, :type :ok, :process 0, :f :init, :value {1 0, 2 1}}
{:index 2, :type :invoke, :process 0, :f :txn, :value [[:rp [:= 1] nil] [:insert 3 2] [:rp [:mod 2 0] nil]]}
{:index 3, :type :ok, :process 0, :f :txn, :value [[:rp [:= 1] {2 1}] [:insert 3 2] [:rp [:mod 2 0] {1 0, 3 2}]]}
{:index 4, :type :invoke, :process 1, :f :txn, :value [[:delete 1] [:rp [:mod -2 -1] nil] [:rp :true nil]]}
{:index 5, :type :ok, :process 1, :f :txn, :value [[:delete 1] [:rp [:mod -2 -1] {2 1}] [:rp :true {2 1}]]}
`
	h := parse(t, src, elle.Options{})
	require.NoError(t, h.CheckInvariants())
	require.Len(t, h.Selects, 4)
	require.Equal(t, &history.ValueTest{In: []int64{1}, HasIn: true}, h.Selects[0].Test)
	require.Equal(t, &history.ValueTest{Mod: 2, Rem: 0, HasMod: true}, h.Selects[1].Test)
	require.Equal(t, &history.ValueTest{Mod: -2, Rem: -1, HasMod: true}, h.Selects[2].Test)
	require.Nil(t, h.Selects[3].Test)
	// T2's first read did not return row 1: it saw it at 0 (T⊥'s) or
	// absent (T4's delete), a stand-in for both.
	ops := h.Selects[0].Ops(h)
	require.True(t, h.Unreturned(ops[0]) && h.IsOneOf(ops[0].Key, ops[0].Value))
	require.Len(t, h.Members(ops[0].Key, ops[0].Value), 2)
	roundTrip(t, h)
	var out bytes.Buffer
	require.NoError(t, elle.Write(&out, h))
	require.Contains(t, out.String(), "[:rp [:= 1] {2 1}] [:insert 3 2] [:rp [:mod 2 0] {1 0, 3 2}]")
	require.Contains(t, out.String(), "[:rp [:mod -2 -1] {2 1}] [:rp :true {2 1}]")
	h2 := parse(t, out.String(), elle.Options{})
	noIDs := regexp.MustCompile(`C\d+`) // the writer leaves out :index
	require.Equal(t, noIDs.ReplaceAllString(describe(h), "C"), noIDs.ReplaceAllString(describe(h2), "C"))
	for i := range h.Selects {
		require.True(t, h.Selects[i].SamePredicate(h2.Selects[i]))
	}

	js := `[{"index":0,"type":"invoke","process":0,"f":"init","value":{"1":0,"2":1}},
{"index":1,"type":"ok","process":0,"f":"init","value":{"1":0,"2":1}},
{"index":2,"type":"invoke","process":0,"f":"txn","value":[["rp",["=",1],null],["insert",3,2],["rp",["mod",2,0],null]]},
{"index":3,"type":"ok","process":0,"f":"txn","value":[["rp",["=",1],{"2":1}],["insert",3,2],["rp",["mod",2,0],{"1":0,"3":2}]]},
{"index":4,"type":"invoke","process":1,"f":"txn","value":[["delete",1],["rp",["mod",-2,-1],null],["rp","true",null]]},
{"index":5,"type":"ok","process":1,"f":"txn","value":[["delete",1],["rp",["mod",-2,-1],{"2":1}],["rp","true",{"2":1}]]}]`
	hj := parse(t, js, elle.Options{})
	require.Equal(t, describe(h), describe(hj))
	require.Equal(t, rowsOf(h), rowsOf(hj))
	for i := range h.Selects {
		require.True(t, h.Selects[i].SamePredicate(hj.Selects[i]))
	}
}

// A value test Elle has no predicate for is refused by the EDN writer.
func TestClosedPredicateWriteRefusesOtherTests(t *testing.T) {
	h, err := jsonl.Parse(strings.NewReader(`{"hyperiso":1,"init":"zero"}
{"session":1,"ops":[["insert",1,1],["select",{"keys":[-9223372036854775808,9223372036854775807],"in":[1,2]},[[1,1]]]]}
`), "x.jsonl", jsonl.Options{})
	require.NoError(t, err)
	err = elle.Write(io.Discard, h)
	require.ErrorContains(t, err, "1 predicate reads with a value test that is not one of Elle's (first: T1(s1#0)'s keys")
}

// TestClosedPredicateErrors: what the model cannot hold, and malformed row
// operations, are errors naming the line and the problem; lenient reading
// drops them with a warning.
func TestClosedPredicateErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{:type :ok, :process 0, :value [[:rp [:= 1] {1 2}]]}`, `micro-operation 1: the predicate read returns key 1 = 2, which its predicate [:= 1] rejects`},
		{`{:type :ok, :process 0, :value [[:rp [:mod 2 0] {1 3}]]}`, `returns key 1 = 3, which its predicate [:mod 2 0] rejects`},
		{`{:type :ok, :process 0, :value [[:rp [:= 1] {1 :x}]]}`, `returns key 1 = :x, which its predicate [:= 1] rejects`},
		{`{:type :ok, :process 0, :value [[:rp [:mod 0 0] {}]]}`, `micro-operation 1: the predicate [:mod 0 0] takes a value modulo 0`},
		{`{:type :ok, :process 0, :value [[:rp [:mod 2] {}]]}`, `the predicate [:mod 2] is not [:mod m r] with integers m and r`},
		{`{:type :ok, :process 0, :value [[:rp [:= :x] {}]]}`, `the predicate [:= :x] is not [:= v] with an integer v`},
		{`{:type :ok, :process 0, :value [[:rp ["=" 1] {}]]}`, `the predicate ["=" 1] is unknown`},
		{`{:type :ok, :process 0, :value [[:rp [:< 1] {}]]}`, `the predicate [:< 1] is unknown (Elle's predicates are :true, [:= v] and [:mod m r])`},
		{`{:type :ok, :process 0, :value [[:rp :false {}]]}`, `the predicate :false is unknown`},
		{`{:type :ok, :process 0, :value [[:rp "true" {}]]}`, `the predicate "true" is unknown`},
		{`{:type :ok, :process 0, :value [[:rp :true [1 2]]]}`, `a predicate read returns a map of keys to values, found [1 2]`},
		{`{:type :ok, :process 0, :value [[:rp :true {:x 1}]]}`, `returns key :x: hyperiso's predicate reads cover integer keys only`},
		{`{:type :ok, :process 0, :value [[:rp :true {1 nil}]]}`, `returns key 1 as nil`},
		{`{:type :ok, :process 0, :value [[:rp :true {9223372036854775807 1}]]}`, `key 9223372036854775807 cannot be in a predicate read`},
		{`{:type :ok, :process 0, :value [[:delete 1 2]]}`, `micro-operation 1 is [:delete 1 2], not a vector [:delete key]`},
		{`{:type :ok, :process 0, :value [[:insert 1]]}`, `micro-operation 1 is [:insert 1], not a vector [f key value]`},
		{`{:type :ok, :process 0, :value [[:append 1 2] [:insert 1 3]]}`, `micro-operation 2: :insert in a list-append history`},
		{`{:type :ok, :process 0, :f :init, :value [1 2]}`, `the :value of an :f :init operation must be a map of keys to values, found [1 2]`},
		{"{:type :ok, :process 0, :f :init, :value {1 2}}\n{:type :ok, :process 0, :f :init, :value {1 3}}", `2: a second :init operation completed :ok (the first at line 1)`},
		{"{:type :invoke, :process 0, :f :init, :value {1 2}}\n{:type :info, :process 0, :f :init, :value {1 2}}", `2: an :init operation of unknown outcome`},
		{"{:type :invoke, :process 0, :f :init, :value {1 2}}\n{:type :ok, :process 0, :value [[:r 1 2]]}", `1: an :init operation never completed`},
		{`{:type :ok, :process 0, :f :init, :value {1 nil}}`, `the :init gives key 1 the value nil`},
		{"{:type :ok, :process 0, :value [[:w :x 1]]}\n{:type :ok, :process 1, :value [[:rp :true {}]]}", `2: a predicate read ([:rp …]) in a history with keys that are not integers (:x, line 1)`},
	} {
		ie := parseErr(t, c.src, elle.Options{})
		require.Contains(t, ie.Error(), c.want, c.src)
		h, err := elle.Parse(strings.NewReader(c.src), "mem.edn", elle.Options{Lenient: true})
		require.NoError(t, err, c.src)
		require.NotEmpty(t, h.Warnings, c.src)
		require.True(t, h.Dropped.Any(), c.src)
		require.NoError(t, h.CheckInvariants())
	}
}

// TestClosedPredicateChecks: Elle's own closed-predicate examples
// (elle's closed_predicate_test.clj) with integer keys, checked: G2
// through predicates that miss each other's writes (violated at SER,
// satisfied at SI and RR; Elle's own version reads after the write and
// misses it, which the model calls not-own-write), and the G1c of two
// deletes each of which the other's predicate read saw (violated at every
// level).
func TestClosedPredicateChecks(t *testing.T) {
	g2 := `{:process 0, :type :invoke, :f :txn, :value [[:rp :true nil] [:w 1 1]]}
{:process 0, :type :ok, :f :txn, :value [[:rp :true {}] [:w 1 1]]}
{:process 1, :type :invoke, :f :txn, :value [[:rp :true nil] [:w 2 2]]}
{:process 1, :type :ok, :f :txn, :value [[:rp :true {}] [:w 2 2]]}
`
	g1c := `{:process 0, :type :invoke, :f :init, :value {1 0, 2 0}}
{:process 0, :type :ok, :f :init, :value {1 0, 2 0}}
{:process 0, :type :invoke, :f :txn, :value [[:delete 1] [:rp :true nil]]}
{:process 0, :type :ok, :f :txn, :value [[:delete 1] [:rp :true {}]]}
{:process 1, :type :invoke, :f :txn, :value [[:delete 2] [:rp :true nil]]}
{:process 1, :type :ok, :f :txn, :value [[:delete 2] [:rp :true {}]]}
`
	// Write skew through value predicates: each read misses the other's
	// even insert (G2 at SER); with odd predicates neither insert matches
	// the other's predicate, and the same shape is serializable.
	g2mod := `{:process 0, :type :ok, :f :txn, :value [[:rp [:mod 2 0] {}] [:insert 1 2]]}
{:process 1, :type :ok, :f :txn, :value [[:rp [:mod 2 0] {}] [:insert 2 4]]}
`
	odd := strings.ReplaceAll(g2mod, "[:mod 2 0]", "[:mod 2 1]")
	eq := strings.NewReplacer("[:mod 2 0]", "[:= 3]", "2]]", "3]]", "4]]", "3]]").Replace(g2mod)
	levels := []history.Level{history.RC, history.RA, history.CC, history.RR, history.PC, history.PSI, history.SI, history.SER}
	for _, c := range []struct {
		name, src string
		want      []string // per level: "" satisfied, "*" violated, else the first anomaly's type
	}{
		{"G2", g2, []string{"", "", "", "", "", "", "", history.G2}},
		{"G1c", g1c, []string{"*", "*", "*", "*", "*", "*", "*", "*"}},
		{"G2 mod", g2mod, []string{"", "", "", "", "", "", "", history.G2}},
		{"odd", odd, []string{"", "", "", "", "", "", "", ""}},
		{"G2 =", eq, []string{"", "", "", "", "", "", "", "*"}},
	} {
		h := parse(t, c.src, elle.Options{})
		for i, l := range levels {
			res, err := check.Check(context.Background(), h, l, check.Options{})
			require.NoError(t, err, "%s at %v", c.name, l)
			if c.want[i] == "" {
				require.Equal(t, check.Satisfied, res.Verdict, "%s at %v: %v", c.name, l, res.Anomalies)
				continue
			}
			require.Equal(t, check.Violated, res.Verdict, "%s at %v", c.name, l)
			if c.want[i] != "*" {
				require.Equal(t, c.want[i], res.Anomalies[0].Type, "%s at %v", c.name, l)
			}
		}
	}
}
