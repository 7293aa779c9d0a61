package text

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestLenientCountsWhatItDrops: a skipped line shaped like an operation is
// a dropped operation, another non-blank one another input item.
func TestLenientCountsWhatItDrops(t *testing.T) {
	for _, c := range []struct {
		data string
		want history.Dropped
	}{
		{"w(1,1,1,1)\n", history.Dropped{}},
		{"w(1,1,1,1)\n\n", history.Dropped{}},
		{"w(1,1,1,1)\nw(1,x,1,1)\n", history.Dropped{Ops: 1}},
		{"w(1,1,1,1)\nr(1,99999999999999999999,1,2)\n", history.Dropped{Ops: 1}},
		{"w(1,1,1,1)\nw(1,1,1,-5)\n", history.Dropped{Ops: 1}},
		{"# a comment\nw(1,1,1,1)\n", history.Dropped{Other: 1}},
	} {
		h, err := Parse(strings.NewReader(c.data), "mem.txt", Options{Lenient: true})
		require.NoError(t, err, c.data)
		require.Equal(t, c.want, h.Dropped, c.data)
	}
}
