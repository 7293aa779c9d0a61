package viper

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input panics; a history that reads is consistent, reads
// the same in lenient mode, and survives the JSONL round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"value": [["w", 9696, 2046010677777358256, true], ["r", 3848, 1050689658935092220, false]]}` + "\n",
		`{"value": [["w", 1, 0, true]], "isInitial": true}`,
		`{"value": [["r", 1, null, false], ["r", 2, "nil", true], ["w", 3, -4, false]]}` + "\r\n",
		`{"value": [["i", 1, 2, 3, 4, true]]}` + "\n\n{}",
		`{"value": [["r", 1, 9223372036854775807, false]]}`,
		`{"value": [["i", 1, 10, null, false, true], ["d", 3, 77, 30, false, true], ["r", 3, 77, true]]}` + "\n",
		`{"value": [["i", 2, 20, 5, true, true, true, "i"], ["d", 4, 78, "nil", false, false, true]], "isFinal": true}`,
		`{"value": [["range", 0, 4, [{"id": 1, "sk": 1, "val": 10}], [{"id": 3, "sk": 3, "val": 77}]]]}` + "\n",
		`{"value": [["range", "nil", null, [], [], true], ["range", 5, 1, [], []]]}`,
		`{"value": [["range", -9223372036854775808, 9223372036854775807, [{"id": 9223372036854775807, "val": 1}], []]]}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, lenient bool) {
		h, err := Parse(bytes.NewReader(data), "J1.log", Options{Lenient: lenient})
		sameAsGeneral(t, data, lenient, h, err)
		if err != nil {
			require.False(t, lenient, "lenient mode failed: %v", err)
			return
		}
		require.NoError(t, h.CheckInvariants())
		if !lenient {
			hl, err := Parse(bytes.NewReader(data), "J1.log", Options{Lenient: true})
			require.NoError(t, err)
			require.Equal(t, describe(h), describe(hl))
			require.Equal(t, h.Warnings, hl.Warnings)
		}
		roundTrip(t, h)
	})
}
