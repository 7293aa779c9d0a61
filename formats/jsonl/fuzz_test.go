package jsonl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input panics; a history that reads is consistent, reads
// the same in lenient mode, and Write→Read gives it back exactly (and
// writing that again gives the same bytes).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"hyperiso":1,"init":"zero","meta":{"db":"pg"}}
{"session":1,"id":1,"ops":[["w",1,10],["r",2,0]]}
{"session":2,"id":2,"level":"si","ops":[["r",1,10],["w",2,20]]}
{"session":1,"id":3,"status":"aborted","ops":[["w",1,11]]}
{"session":3,"ops":[["append",7,1],["r",7,[1]],["r",8,null]]}
{"aborted_writes":[[2,99]]}`,
		"{\"hyperiso\":1,\"init\":\"explicit\",\"sessions\":[4,3],\"key_names\":[[1,\"a\\u00e9\\ud83d\\ude42\"]]}\n{\"init\":true,\"id\":0,\"ops\":[[\"w\",1,0]]}\n{\"session\":3,\"id\":-9223372036854775808,\"ops\":[]}\n",
		"{\"hyperiso\":1,\"init\":\"none\"}\n{\"init\":true,\"id\":5,\"ops\":[]}\n\n{\"session\":1,\"id\":5,\"status\":\"unknown\",\"ops\":[[\"r\",9223372036854775807,-1]]}\r\n",
		"{\"hyperiso\":1,\"init\":\"implicit\"}\n{\"init\":true,\"ops\":[[\"w\",1,9221111406453585911]]}\n{\"session\":0,\"ops\":[[\"r\",1,[]]],\"x\":[1.5e3,{\"y\":null}]}",
		`{"session":1,"ops":[["w",1,1e3]]}`,
		"\ufeff{\"session\":1,\"ops\":[]}",
		// Rows and predicate reads (docs/predicates.md), and some of what
		// the reader refuses of them.
		rowsExample,
		`{"session":1,"ops":[["w",1,1],["select",{"keys":[5,7]},[]],["select",{"keys":[100,200]},[]],["r",1,1]]}
{"session":2,"ops":[["w",6,1],["w",-3,"x"],["select",{"keys":[-5,0]},[[-3,"x"]]],["delete","k"],["insert","k",2]]}`,
		`{"session":1,"ops":[["select",{"keys":[0,10],"in":[1]},[]],["select",{"keys":[0,10],"values":[0,3]},[]]]}`,
		`{"session":1,"ops":[["insert",1,-3],["select",{"keys":[0,10],"mod":[2,1]},[[1,-3]]],["select",{"keys":[0,10],"mod":[0,1],"in":[2]},[]]]}`,
		`{"session":1,"ops":[["insert",1,1],["insert",2,"v"],["w",3,5]]}
{"session":2,"ops":[["select",{"keys":[0,10],"in":[1,5],"values":[0,3]},[[1,1]]],["r",2,"v"],["select",{"keys":[0,4],"in":[]},[]],["r",1,1]]}`,
		`{"session":1,"ops":[["select",{"keys":[0,10],"in":[7]},[[1,8]]],["select",{"keys":[0,10],"values":[1,1]},[]]]}`,
		`{"session":1,"ops":[["select",{"keys":[0,10]},[[1,1],[1,2]]],["select",{"keys":[3,2]},[]],["delete",1,2]]}`,
		`{"hyperiso":1,"init":"explicit"}
{"init":true,"ops":[["w",1,0]]}
{"session":1,"ops":[["select",{"keys":[-9223372036854775808,9223372036854775807]},[[1,0]]],["append",1,2]]}`,
		"{\"session\":1,\"time\":[3,9223372036854775807],\"status\":\"unknown\",\"ops\":[[\"append\",1,2]]}\n{\"version_order\":[[1,2,3],[1,3,2]]}\n{\"session\":2,\"time\":[-5,-5],\"ops\":[[\"r\",1,[2,3]]]}\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, lenient bool) {
		h, err := Parse(bytes.NewReader(data), "fuzz.jsonl", Options{Lenient: lenient})
		if err != nil {
			if lenient {
				// Only a transaction id equal to T⊥'s is fatal in lenient mode.
				require.Contains(t, err.Error(), "also the initial transaction's id")
			}
			return
		}
		require.NoError(t, h.CheckInvariants())
		if !lenient {
			hl, err := Parse(bytes.NewReader(data), "fuzz.jsonl", Options{Lenient: true})
			require.NoError(t, err)
			require.Empty(t, diff(h, hl))
			require.Equal(t, h.Warnings, hl.Warnings)
		}
		h2, out, err := roundTrip(h)
		require.NoError(t, err)
		require.NotNil(t, h2)
		require.True(t, strings.HasPrefix(out, `{"hyperiso":1,`))
	})
}
