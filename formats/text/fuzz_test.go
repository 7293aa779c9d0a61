package text

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input panics; a history that reads is consistent, reads
// the same in lenient mode, and survives the JSONL round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"w(1,1,1,1)\nr(2,0,1,1)\nw(2,5,2,-1)\nr(1,1,2,7)\nr(2,0,2,7)\n",
		"w(1,0,0,0)\nw(2,0,0,0)\nw(9,1,1,1)\nr(10,0,1,1)",
		"w(1,1,1,1)\r\nw(1,2,2,1)\r\n",
		"w(1,1,1,-2)\n",
		"w(9223372036854775807,0,0,9223372036854775807)\n",
		"r(1,1,1,1)\n\nw(1,\xff,1,1)\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, lenient bool) {
		h, err := Parse(bytes.NewReader(data), "fuzz.txt", Options{Lenient: lenient})
		if err != nil {
			require.False(t, lenient, "lenient mode failed: %v", err)
			return
		}
		require.NoError(t, h.CheckInvariants())
		if !lenient {
			hl, err := Parse(bytes.NewReader(data), "fuzz.txt", Options{Lenient: true})
			require.NoError(t, err)
			require.Equal(t, describe(h), describe(hl))
			require.Equal(t, h.Warnings, hl.Warnings)
		}
		roundTrip(t, h)
	})
}
