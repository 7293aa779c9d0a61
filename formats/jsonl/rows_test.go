package jsonl

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
	"github.com/stretchr/testify/require"
)

// rowsExample is the example of docs/predicates.md without its value test.
const rowsExample = `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["insert",1,10],["insert",2,20]]}
{"session":1,"id":2,"ops":[["select",{"keys":[0,10]},[]],["select",{"keys":[0,10]},[[1,10],[2,20],[3,30]]]]}
{"session":2,"id":3,"ops":[["insert",3,30],["delete",1],["r",1,null],["w",12,5]]}
`

// The row operations read as writes and reads marked with their source;
// a predicate read expands to one read per key of the history in its
// range, in key order, at its place; rows start absent under "zero".
func TestRowsRead(t *testing.T) {
	require.Equal(t, uintptr(16), unsafe.Sizeof(history.Op{}))
	h := parse(t, rowsExample, Options{})
	require.NoError(t, h.CheckInvariants())
	require.Len(t, h.Selects, 2)
	require.Equal(t, history.Select{Txn: 2, Lo: 0, Hi: 10, At: 0, N: 3}, h.Selects[0])
	require.Equal(t, history.Select{Txn: 2, Lo: 0, Hi: 10, At: 3, N: 3}, h.Selects[1])
	got := opsString(h, h.Txns[2].Ops)
	require.Equal(t, "r(1,9221111406453585911,select[0,10),select) r(2,9221111406453585911,select[0,10),select) r(3,9221111406453585911,select[0,10),select) "+
		"r(1,10,select[0,10),select) r(2,20,select[0,10),select) r(3,30,select[0,10),select) ", got)
	require.Equal(t, "w(3,30,insert) w(1,9221111406453585911,delete) r(1,9221111406453585911) w(12,5) ", opsString(h, h.Txns[3].Ops))
	// T⊥: rows 1, 2, 3 start absent; key 12, outside every range, at 0.
	require.Equal(t, "w(1,9221111406453585911) w(2,9221111406453585911) w(3,9221111406453585911) w(12,0) ", opsString(h, h.Txns[0].Ops))
	require.Empty(t, h.Warnings)
	require.True(t, h.HasRows())

	_, out, err := roundTrip(h)
	require.NoError(t, err)
	require.Contains(t, out, `["select",{"keys":[0,10]},[]],["select",{"keys":[0,10]},[[1,10],[2,20],[3,30]]]`)
	require.Contains(t, out, `["insert",3,30],["delete",1],["r",1,null],["w",12,5]`)
	require.Contains(t, out, `{"end":{"transactions":3,"operations":8,`)
}

// A key a later line names joins an earlier predicate read's universe; a
// range no key falls in keeps its place with no rows; a key inside a
// range but only written starts absent.
func TestRowsUniverse(t *testing.T) {
	h := parse(t, `{"session":1,"ops":[["w",1,1],["select",{"keys":[5,7]},[]],["select",{"keys":[100,200]},[]],["r",1,1]]}
{"session":2,"ops":[["w",6,1],["w",-3,2],["select",{"keys":[-5,0]},[[-3,2]]]]}
`, Options{})
	require.NoError(t, h.CheckInvariants())
	require.Equal(t, []history.Select{{Txn: 1, Lo: 5, Hi: 7, At: 1, N: 1}, {Txn: 1, Lo: 100, Hi: 200, At: 2, N: 0}, {Txn: 2, Lo: -5, Hi: 0, At: 2, N: 1}}, h.Selects)
	require.Equal(t, "w(-3,9221111406453585911) w(1,0) w(6,9221111406453585911) ", opsString(h, h.Txns[0].Ops))
	_, out, err := roundTrip(h)
	require.NoError(t, err)
	require.Contains(t, out, `[["w",1,1],["select",{"keys":[5,7]},[]],["select",{"keys":[100,200]},[]],["r",1,1]]`)
}

func TestRowsErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`["select",{"keys":[0,10],"in":[1]},[[2,2]]]`, `x.jsonl:1: column 57: ops[0] row 0: value 2 does not pass the predicate's value test (value in {1})`},
		{`["select",{"values":[0,3],"keys":[0,10]},[[2,3]]]`, `value 3 does not pass the predicate's value test (value in [0,3))`},
		{`["select",{"keys":[0,10],"in":[1],"values":[0,3]},[[2,"x"]]]`, `a value test matches integer values only`},
		{`["select",{"keys":[0,10],"in":["a"]},[]]`, `predicate field "in" value 0 (a value test takes integers): expected an integer`},
		{`["select",{"keys":[0,10],"in":1},[]]`, `predicate field "in": [values], integers: an array '['`},
		{`["select",{"keys":[0,10],"in":[],"in":[]},[]]`, `duplicate field "in"`},
		{`["select",{"keys":[0,10],"values":[3,1]},[]]`, `"values": [3, 1] is not a range`},
		{`["select",{"keys":[0,10],"values":[1,2],"values":[1,2]},[]]`, `duplicate field "values"`},
		{`["select",{"keys":[0,10],"values":[1]},[]]`, `predicate field "values": [lo, hi], two integers`},
		{`["select",{"keys":[0,10],"where":1},[]]`, `predicate: unknown field "where"`},
		{`["select",{"keys":[0,10],"mod":[2,0]},[[1,3]]]`, `value 3 does not pass the predicate's value test (value mod 2 = 0)`},
		{`["select",{"keys":[0,10],"mod":[0,1]},[]]`, `"mod": [0, 1] takes values modulo 0`},
		{`["select",{"keys":[0,10],"mod":[2,0],"mod":[2,0]},[]]`, `duplicate field "mod"`},
		{`["select",{"keys":[0,10],"mod":[2]},[]]`, `predicate field "mod": [m, r], two integers`},
		{`["select",{},[]]`, `predicate: missing field "keys"`},
		{`["select",{"keys":[0,10],"keys":[0,10]},[]]`, `duplicate field "keys"`},
		{`["select",{"keys":["a","b"]},[]]`, `"keys" lo: expected an integer`},
		{`["select",{"keys":[5,1]},[]]`, `is not a range`},
		{`["select",{"keys":[0,10]},[[10,1]]]`, `key 10 is outside the predicate's range [0, 10)`},
		{`["select",{"keys":[0,10]},[[1,1],[1,2]]]`, `key 1 is returned twice`},
		{`["select",{"keys":[0,10]},[["a",1]]]`, `row 0 key (a row of a key range has an integer key): expected an integer`},
		{`["select",{"keys":[0,10]},[[1,null]]]`, `row 0 value: expected an integer or a string`},
		{`["select",{"keys":[0,10]},[[1,9221111406453585911]]]`, `stands for an absent row`},
		{`["select",{"keys":[0,10]},[],1]`, `too many elements`},
		{`["select",{"keys":[0,10]}]`, `',' after the predicate`},
		{`["delete",1,2]`, `too many elements (a delete is ["delete", key])`},
		{`["delete"]`, `expected 2 elements ["delete", key]`},
		{`["insert",1]`, `expected 3 elements`},
		{`["insert",1,null]`, `expected an integer or a string`},
		{`["upsert",1,1]`, `unknown operation "upsert" (want "r", "w", "append", "insert", "delete" or "select")`},
	} {
		_, err := Parse(strings.NewReader(`{"session":1,"ops":[`+c.line+`]}`), "x.jsonl", Options{})
		require.Error(t, err, c.line)
		require.Contains(t, err.Error(), c.want, c.line)
		require.Contains(t, err.Error(), "x.jsonl:1: column ", c.line)
	}
	var many strings.Builder
	many.WriteString(`{"session":1,"ops":[["select",{"keys":[0,100]},[`)
	for i := range 40 {
		many.WriteString("[" + string(rune('0'+i%10)) + ",1],")
	}
	many.WriteString(`[1,1]]]]}`)
	_, err := Parse(strings.NewReader(many.String()), "x.jsonl", Options{})
	require.ErrorContains(t, err, "is returned twice")
}

// Value tests: read, kept on the Select, written back; a row not returned
// reads a stand-in for its absent and rejected versions.
func TestRowsValueTests(t *testing.T) {
	h := parse(t, `{"hyperiso":1,"init":"zero"}
{"session":1,"ops":[["insert",1,10],["insert",2,20],["insert",3,30]]}
{"session":2,"ops":[["select",{"keys":[0,10],"in":[30,10,10]},[[1,10],[3,30]]],["select",{"keys":[0,10],"values":[15,40],"in":[10,20]},[[2,20]]],["select",{"keys":[0,10]},[]]]}
`, Options{})
	require.NoError(t, h.CheckInvariants())
	require.Len(t, h.Selects, 3)
	require.Equal(t, &history.ValueTest{In: []int64{10, 30}, HasIn: true}, h.Selects[0].Test)
	require.Equal(t, &history.ValueTest{In: []int64{10, 20}, HasIn: true, VLo: 15, VHi: 40, HasRange: true}, h.Selects[1].Test)
	require.Nil(t, h.Selects[2].Test)
	ops := h.Txns[2].Ops
	// Row 2 of the first read: absent or 20; rows 1 and 3 of the second:
	// absent, 10 (rejected by the range) or 30 (not in the set).
	require.True(t, h.Unreturned(ops[1]))
	require.Len(t, h.Index().Writers(ops[1].Key, ops[1].Value), 2)
	require.True(t, h.Unreturned(ops[3]) && h.Unreturned(ops[5]))
	require.Len(t, h.Index().Writers(ops[3].Key, ops[3].Value), 2)
	// The third read has no value test: its rows read the empty value.
	require.False(t, h.IsOneOf(ops[6].Key, ops[6].Value))
	_, out, err := roundTrip(h)
	require.NoError(t, err)
	require.Contains(t, out, `["select",{"keys":[0,10],"in":[10,30]},[[1,10],[3,30]]],["select",{"keys":[0,10],"in":[10,20],"values":[15,40]},[[2,20]]],["select",{"keys":[0,10]},[]]`)
}

// A modulo test (Elle's [:mod m r]): the floored remainder, so -3 mod 2 is
// 1; the rows it rejects read stand-ins; written back as read.
func TestRowsModTest(t *testing.T) {
	h := parse(t, `{"hyperiso":1,"init":"zero"}
{"session":1,"ops":[["insert",1,-3],["insert",2,-4],["insert",3,5]]}
{"session":2,"ops":[["select",{"keys":[0,10],"mod":[2,1]},[[1,-3],[3,5]]],["select",{"mod":[-3,-1],"keys":[0,10]},[[2,-4],[3,5]]]]}
`, Options{})
	require.NoError(t, h.CheckInvariants())
	require.Equal(t, &history.ValueTest{Mod: 2, Rem: 1, HasMod: true}, h.Selects[0].Test)
	require.Equal(t, &history.ValueTest{Mod: -3, Rem: -1, HasMod: true}, h.Selects[1].Test)
	ops := h.Txns[2].Ops
	// Row 2 of the first read: absent or -4 (even); 5 mod -3 is -1.
	require.True(t, h.Unreturned(ops[1]))
	require.Len(t, h.Index().Writers(ops[1].Key, ops[1].Value), 2)
	_, out, err := roundTrip(h)
	require.NoError(t, err)
	require.Contains(t, out, `["select",{"keys":[0,10],"mod":[2,1]},[[1,-3],[3,5]]],["select",{"keys":[0,10],"mod":[-3,-1]},[[2,-4],[3,5]]]`)
}
