package elle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestLenientCountsWhatItDrops: a dropped micro-operation is a dropped
// operation; a skipped map, an ignored completion or :value and a form
// skipped for its syntax are other input items.
func TestLenientCountsWhatItDrops(t *testing.T) {
	const inv = "{:type :invoke, :f :txn, :value [[:append 1 1] [:r 2 nil]], :process 0, :index 0}\n"
	const ok = "{:type :ok, :f :txn, :value [[:append 1 1] [:r 2 [1]]], :process 0, :index 1}\n"
	for _, c := range []struct {
		name, data string
		want       history.Dropped
	}{
		{"clean", inv + ok, history.Dropped{}},
		{"bad micro-op", inv + "{:type :ok, :f :txn, :value [[:append 1 1] [:r 2 :x] [:frob 3 3]], :process 0, :index 1}\n", history.Dropped{Ops: 2}},
		{"no :type", inv + "{:process 0, :value [[:append 1 1]]}\n" + ok, history.Dropped{Other: 1}},
		{"orphan completion", inv + ok + ok, history.Dropped{Other: 1}},
		{":value not a vector", inv + "{:type :ok, :f :txn, :value 7, :process 0, :index 1}\n", history.Dropped{Other: 1}},
		{"syntax", inv + "{:type :ok, :f :txn, :value [[:append 1 1] [:r 2 [1]], :process 0, :index 1}\n" + "{:type :invoke, :f :txn, :value [[:append 3 1]], :process 1, :index 2}\n", history.Dropped{Other: 1}},
		{"not a map", inv + ok + "[1 2 3]\n", history.Dropped{Other: 1}},
	} {
		h, err := Parse(strings.NewReader(c.data), "mem.edn", Options{Lenient: true})
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, h.Dropped, c.name)
		// Strict reading and dropping nothing go together.
		_, err = Parse(strings.NewReader(c.data), "mem.edn", Options{})
		require.Equal(t, c.want.Any(), err != nil, "%s: %v", c.name, err)
	}
}
