package text

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input panics; a history that reads is consistent, reads
// the same in lenient mode and with values interned in parallel, and
// survives the JSONL round trip.
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
		sameInParallel(t, data, lenient)
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

// sameInParallel requires that data reads the same — history, warnings
// or error — with values interned on one goroutine and in parallel in
// small batches (history.Builder.SetParallel).
func sameInParallel(t *testing.T, data []byte, lenient bool) {
	t.Helper()
	defer func(n int) { parallelBatch = n }(parallelBatch)
	parallelBatch = 0
	want, wantErr := Parse(bytes.NewReader(data), "x.txt", Options{Lenient: lenient})
	for _, n := range []int{1, 5, 64} {
		parallelBatch = n
		got, err := Parse(bytes.NewReader(data), "x.txt", Options{Lenient: lenient})
		if wantErr != nil {
			require.Error(t, err)
			require.Equal(t, wantErr.Error(), err.Error())
			continue
		}
		require.NoError(t, err)
		require.Equal(t, want, got, "batch %d", n)
	}
}

// TestParallelMatchesSequential: random text histories — transactions
// split across lines of others, initial writes of 0, aborted operations,
// bad lines — read the same with values interned in parallel, strict and
// lenient, whole and cut at every byte of small ones.
func TestParallelMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 400 {
		var b bytes.Buffer
		n := 1 + rng.IntN(12)
		if round%20 == 0 {
			n = 3000
		}
		for range n {
			switch rng.IntN(30) {
			case 0:
				b.WriteString("w(1,x,1,1)\n")
				continue
			case 1:
				fmt.Fprintf(&b, "w(%d,%d,1,-1)\n", rng.IntN(9), rng.IntN(9))
				continue
			}
			op := "rw"[rng.IntN(2)]
			txn := rng.IntN(1 + n/4)
			fmt.Fprintf(&b, "%c(%d,%d,%d,%d)\n", op, rng.IntN(1+n/10), rng.IntN(1+n/3), txn%3, txn)
		}
		data := b.Bytes()
		for _, lenient := range []bool{false, true} {
			sameInParallel(t, data, lenient)
			if n <= 12 && round < 100 {
				for cut := range len(data) {
					sameInParallel(t, data[:cut], lenient)
				}
			}
		}
	}
}
