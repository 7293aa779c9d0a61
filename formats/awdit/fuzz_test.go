package awdit

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input panics; a history that reads is consistent, reads
// the same in lenient mode, and survives the JSONL round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"w 0 0\nw 1 0\n=====\nw 0 1\n-----\nr 1 0\n=====\nr 0 1\nr 1 0\n",
		"r 1 1\n-----\nw 0 0\n=====\nr 0 0\n-----\nw 1 1",
		"=\n-\n\n w\t3 0 \r\n",
		"w 18446744073709551615 1\nw 1 18446744073709551616\n",
		"w 1 1 1\nx\n=-=\n",
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
