package awdit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input panics; a history that reads is consistent, reads
// the same in lenient mode and with values interned in parallel, and
// survives the JSONL round trip.
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

// TestParallelMatchesSequential: random AWDIT histories — an initial
// transaction or none, repeated values, bad lines — read the same with
// values interned in parallel, strict and lenient.
func TestParallelMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 300 {
		var sb strings.Builder
		if round%2 == 0 {
			for k := range 1 + rng.IntN(6) {
				fmt.Fprintf(&sb, "w %d 0\n", k)
			}
			sb.WriteString("=====\n")
		}
		n := 1 + rng.IntN(40)
		if round%25 == 0 {
			n = 4000
		}
		for range n {
			switch rng.IntN(12) {
			case 0:
				sb.WriteString("-----\n")
			case 1:
				sb.WriteString("=====\n")
			case 2:
				if rng.IntN(10) == 0 {
					sb.WriteString("r x 1\n")
					continue
				}
				fallthrough
			default:
				fmt.Fprintf(&sb, "%s %d %d\n", []string{"r", "w"}[rng.IntN(2)], rng.IntN(8), rng.IntN(5))
			}
		}
		sameInParallel(t, []byte(sb.String()), round%3 == 0)
	}
}
