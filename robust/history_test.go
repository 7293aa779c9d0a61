package robust

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

func TestRobustFromHistory(t *testing.T) {
	in := `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"level":"si","ops":[["r",1,0],["w",1,5],["r",1,5],["w",2,6]]}
{"session":1,"id":2,"status":"aborted","ops":[["w",3,1]]}
{"session":1,"id":3,"ops":[]}
{"session":1,"id":4,"level":"pc","ops":[["r",2,6],["r","name",0]]}
{"session":2,"id":5,"status":"unknown","ops":[["w",1,7]]}
`
	h, err := jsonl.Parse(strings.NewReader(in), "h.jsonl", jsonl.Options{})
	require.NoError(t, err)
	w := FromHistory(h)
	require.Len(t, w.Instances, 3) // aborted and empty left out
	names := func(ks []KeyID) []string {
		var out []string
		for _, k := range ks {
			out = append(out, w.Keys[k])
		}
		return out
	}
	t1, t4, t5 := w.Instances[0], w.Instances[1], w.Instances[2]
	require.Equal(t, "T1", t1.Name)
	require.Equal(t, []string{"key 1"}, names(t1.Reads)) // the read after its write is internal
	require.ElementsMatch(t, []string{"key 1", "key 2"}, names(t1.Writes))
	require.Equal(t, history.SI, t1.Level)
	require.ElementsMatch(t, []string{"key 2", "name"}, names(t4.Reads))
	require.Equal(t, history.PC, t4.Level)
	require.Equal(t, history.LevelNone, t5.Level)
	require.Equal(t, [][]int32{{0, 1}, {2}}, w.Sessions)
	require.True(t, w.soBefore(0, 1))
	require.Equal(t, "h.jsonl:2", t1.Pos.String())
}
