package jsonl

import (
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/stretchr/testify/require"
)

// String keys and values are kept by name, interned like integers, and
// never confused with an integer (the string "1" is not the integer 1).
func TestStringKeysAndValues(t *testing.T) {
	src := `{"session":1,"ops":[["w","x","a"],["w",1,"1"],["append","l","p"]]}
{"session":2,"ops":[["r","x","a"],["r",1,1],["r","l",["p","q"]],["r","y",null]]}
{"session":2,"status":"aborted","ops":[["append","l","q"]]}
{"aborted_writes":[["x","gone"]]}
{"version_order":[["x","a","b"]]}`
	h := parse(t, src, Options{})
	require.Equal(t, `S1: T1[w("x","a") w(1,"1") append("l","p")]; S2: T2[r("x","a") r(1,1) r-list("l","q",["p" "q"]) r("y",9221111406453585911)] T3/aborted[append("l","q")]; init implicit T-1[w(1,0) w("l",9221111406453585911) w("x",0) w("y",9221111406453585911)]; aborted ("x","gone")`, describe(h))
	x := findKey(t, h, "x")
	require.Equal(t, "x", h.KeyString(x))
	w := h.Txns[1].Ops[0]
	require.Equal(t, "a", h.ValueString(w.Key, w.Value))
	// "1" written and 1 read are two values of key 1.
	one := h.Txns[1].Ops[1]
	require.NotEqual(t, one.Value, h.Txns[2].Ops[1].Value)
	require.Equal(t, "1", h.ValueName(one.Key, one.Value))
	require.Equal(t, "", h.ValueName(one.Key, h.Txns[2].Ops[1].Value))
	require.True(t, h.HasNames())
	require.NoError(t, h.CheckInvariants())

	// Written back as strings, and read back the same.
	back, out, err := roundTrip(h)
	require.NoError(t, err, out)
	require.Contains(t, out, `["w","x","a"]`)
	require.Contains(t, out, `["r","l",["p","q"]]`)
	require.Contains(t, out, `{"aborted_writes":[["x","gone"]]}`)
	require.Equal(t, describe(h), describe(back))
}

func TestStringNamesStandIns(t *testing.T) {
	// A string key's stand-in avoids every integer key, whatever the order.
	h := parse(t, `{"session":1,"ops":[["w","k",1],["w",0,1],["w",1,"v"],["w",1,2]]}`, Options{})
	k := findKey(t, h, "k")
	require.NotContains(t, []int64{0, 1}, h.Key(k))
	for v := range h.Values[1] {
		require.NotEqual(t, history.EmptyList, h.Values[1][v])
	}
	require.NoError(t, h.CheckInvariants())
}

func findKey(t *testing.T, h *history.History, name string) history.KeyID {
	t.Helper()
	for k := range h.Keys {
		if h.KeyName(history.KeyID(k)) == name {
			return history.KeyID(k)
		}
	}
	t.Fatalf("no key named %q", name)
	return 0
}

func TestStringErrors(t *testing.T) {
	for _, src := range []string{
		`{"session":1,"ops":[["w","",1]]}`,
		`{"aborted_writes":[["k",""]]}`,
	} {
		_, err := Parse(strings.NewReader(src), "m", Options{})
		require.ErrorContains(t, err, "the empty string is not a key or value", src)
	}
}
