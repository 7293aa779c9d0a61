package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// The nine list-append histories of the issue that found hyperiso
// answering "satisfied" where the lists say otherwise: each with the
// levels it violates and the anomaly it is reported as.
func TestListsMeanWhatTheySay(t *testing.T) {
	all := []history.Level{history.RC, history.RA, history.CC, history.PC, history.PSI, history.SI, history.SER}
	fromRA := all[1:]
	cases := []struct {
		name     string
		lines    []string
		violated []history.Level
		anomaly  string
	}{
		{"own appends end the list", []string{
			`{"session":1,"id":1,"ops":[["append",1,1],["append",1,2],["r",1,[2]]]}`,
		}, all, "internal"},
		{"appends are installed together", []string{
			`{"session":1,"id":1,"ops":[["append",1,1],["append",1,2]]}`,
			`{"session":2,"id":2,"ops":[["r",1,[2]]]}`,
		}, all, "incompatible-order"},
		{"own append on top of a causal view", []string{
			`{"session":2,"id":1,"ops":[["append",1,1]]}`,
			`{"session":1,"id":2,"ops":[["r",1,[1]]]}`,
			`{"session":1,"id":3,"ops":[["append",1,1],["r",1,[1]]]}`,
		}, all[2:], ""},
		{"a serial order must reproduce every list", []string{
			`{"session":1,"id":1,"ops":[["r",1,[]],["r",1,[]],["append",1,1]]}`,
			`{"session":1,"id":2,"ops":[["append",1,2]]}`,
			`{"session":1,"id":3,"ops":[["r",1,[1,2]],["append",1,2],["append",1,1]]}`,
			`{"session":1,"id":4,"ops":[["r",1,[1,2,1]]]}`,
		}, all, "incompatible-order"},
		{"an unknown transaction either way", []string{
			`{"session":1,"id":1,"ops":[["append",1,7]]}`,
			`{"session":2,"id":2,"ops":[["append",1,1]]}`,
			`{"session":2,"id":3,"status":"unknown","ops":[["r",1,[7,1]],["append",1,3]]}`,
			`{"session":3,"id":4,"ops":[["r",1,[1,3]]]}`,
		}, all, "incompatible-order"},
		{"a session sees its predecessor", []string{
			`{"session":1,"id":1,"ops":[["append",1,1]]}`,
			`{"session":1,"id":2,"ops":[["append",1,2],["r",1,[2]]]}`,
		}, fromRA, ""},
		{"a later read never shows less", []string{
			`{"session":1,"id":1,"ops":[["append",1,1]]}`,
			`{"session":2,"id":2,"ops":[["append",1,2],["r",1,[1,2]],["r",1,[2]]]}`,
		}, all, "internal"},
		{"one order per key", []string{
			`{"session":1,"id":1,"ops":[["append",1,1]]}`,
			`{"session":2,"id":2,"ops":[["append",1,2],["r",1,[1,2]]]}`,
			`{"session":3,"id":3,"ops":[["r",1,[2,1]]]}`,
		}, all, "incompatible-order"},
		{"fractured read of lists", []string{
			`{"session":1,"id":1,"ops":[["append","x",1],["append","y",1]]}`,
			`{"session":2,"id":2,"ops":[["append","x",2]]}`,
			`{"session":3,"id":3,"ops":[["r","x",[1,2]],["r","y",[]]]}`,
		}, all, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := parseJSONL(t, append([]string{`{"hyperiso":1,"init":"zero"}`}, tc.lines...)...)
			for _, l := range all {
				res := checkAt(t, h, l)
				want := Satisfied
				for _, v := range tc.violated {
					if v == l {
						want = Violated
					}
				}
				var got []string
				for _, a := range res.Anomalies {
					got = append(got, a.Type+": "+a.Description)
				}
				require.Equal(t, want, res.Verdict, "%v: %s", l, strings.Join(got, "\n"))
				if want == Violated && tc.anomaly != "" {
					require.Equal(t, tc.anomaly, res.Anomalies[0].Type, "%v: %s", l, strings.Join(got, "\n"))
				}
				if testing.Verbose() && want == Violated {
					fmt.Printf("%s at %v: %s\n", tc.name, l, strings.Join(got, "; "))
				}
			}
		})
	}
}

// A satisfied history with values appended twice says which appender each
// list read saw, beside the witness order.
func TestListViewsInWitness(t *testing.T) {
	h := parseJSONL(t, `{"hyperiso":1,"init":"zero"}`,
		`{"session":1,"id":1,"ops":[["append",1,1]]}`,
		`{"session":2,"id":2,"ops":[["append",1,1]]}`,
		`{"session":2,"id":3,"ops":[["r",1,[1,1]]]}`)
	for _, l := range []history.Level{history.SER, history.CC} {
		res := checkAt(t, h, l)
		require.Equal(t, Satisfied, res.Verdict)
		require.Len(t, res.ListViews, 1, "%v", l)
		v := res.ListViews[0]
		require.Equal(t, int64(3), v.Txn.ID)
		require.Len(t, v.Appenders, 2)
		require.Len(t, res.Witness, 3)
		require.Equal(t, int64(1), res.Counters["list_explanations"], "the first arrangement satisfies")
	}
}
