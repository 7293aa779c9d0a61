package awdit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestLenientCountsWhatItDrops: a skipped line that starts like an
// operation is a dropped operation; a bad separator, an unknown verb or
// ignored extra fields are other input items.
func TestLenientCountsWhatItDrops(t *testing.T) {
	for _, c := range []struct {
		data string
		want history.Dropped
	}{
		{"w 1 1\n", history.Dropped{}},
		{"w 1 1\nr 1\n", history.Dropped{Ops: 1}},
		{"w 1 1\nr 1 x\n", history.Dropped{Ops: 1}},
		{"w 1 1\nr -1 1\n", history.Dropped{Ops: 1}},
		{"w 1 1\n=-=\nr 1 1\n", history.Dropped{Other: 1}},
		{"w 1 1\nx 1 1\n", history.Dropped{Other: 1}},
		{"w 1 1\nr 1 1 extra\n", history.Dropped{Other: 1}},
		{"w 1 1\n\xff\n", history.Dropped{Other: 1}},
	} {
		h, err := Parse(strings.NewReader(c.data), "mem.awdit", Options{Lenient: true})
		require.NoError(t, err, c.data)
		require.Equal(t, c.want, h.Dropped, "%q", c.data)
	}
}
