package dbcop

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// randomFile writes a dbcop file of about txns transactions over a few
// keys and values, so that values repeat: duplicate writes, writes and
// reads of 0, aborted transactions, failed events, reads of values
// nobody or only aborted writers wrote; sometimes boolean bytes other
// than 0 and 1, strings that are not UTF-8 or RFC 3339, trailing bytes
// and params that match nothing.
func randomFile(rng *rand.Rand, txns int) []byte {
	var b []byte
	badFlags := []int{0, 0, 40, 400}[rng.IntN(4)] // 1 in badFlags flags is bad
	u := func(x uint64) { b = binary.LittleEndian.AppendUint64(b, x) }
	flag := func(x bool) {
		switch {
		case badFlags > 0 && rng.IntN(badFlags) == 0:
			b = append(b, byte(2+rng.IntN(254))) // lenient: taken as true
		case x:
			b = append(b, 1)
		default:
			b = append(b, 0)
		}
	}
	keys, vals := 1+rng.IntN(8), 1+rng.IntN(12)
	if rng.IntN(4) == 0 {
		keys, vals = 200, 5000
	}
	okEvent, okTxn := []float64{1, 0.95, 0.7, 0}[rng.IntN(4)], []float64{1, 0.8, 0.3, 0}[rng.IntN(4)]
	sessions := 1 + rng.IntN(5)
	if rng.IntN(20) == 0 {
		sessions = 0
	}
	per := txns/max(sessions, 1) + 1
	params := [5]uint64{rng.Uint64N(3), uint64(sessions), uint64(keys), uint64(per), uint64(rng.IntN(6))}
	for _, p := range params {
		u(p)
	}
	for _, s := range []string{"info", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"} {
		switch rng.IntN(10) {
		case 0:
			s = "not a time"
		case 1:
			s = "bad \xff utf-8"
		}
		u(uint64(len(s)))
		b = append(b, s...)
	}
	value := func() uint64 {
		switch rng.IntN(20) {
		case 0:
			return 0
		case 1:
			return 1<<63 + uint64(rng.IntN(3)) // negative as int64
		}
		return uint64(1 + rng.IntN(vals))
	}
	u(uint64(sessions))
	for range sessions {
		n := rng.IntN(2 * per)
		u(uint64(n))
		for range n {
			ne := rng.IntN(7)
			if rng.IntN(60) == 0 {
				ne = 60 + rng.IntN(80) // longer than ownLimit
			}
			u(uint64(ne))
			for range ne {
				flag(rng.IntN(2) == 0)
				u(uint64(1 + rng.IntN(keys)))
				u(value())
				flag(rng.Float64() < okEvent)
			}
			flag(rng.Float64() < okTxn)
		}
	}
	if rng.IntN(8) == 0 {
		b = append(b, make([]byte, 1+rng.IntN(20))...)
	}
	return b
}

// sameAsReference parses data with both readers, sized and unsized, in
// every mode, and requires the same history or the same error.
func sameAsReference(t *testing.T, data []byte) {
	t.Helper()
	for mode := range uint8(4) {
		opt := fuzzOptions(mode)
		for _, size := range []int64{int64(len(data)), -1} {
			want, wantErr := refParse(bytes.NewReader(data), "mem", size, opt)
			got, err := Parse(bytes.NewReader(data), "mem", size, opt)
			if wantErr != nil {
				require.Error(t, err, "mode %d size %d", mode, size)
				require.Equal(t, wantErr.Error(), err.Error())
				require.IsType(t, wantErr, err)
				continue
			}
			require.NoError(t, err, "mode %d size %d", mode, size)
			sameHistory(t, want, got, "mode %d size %d", mode, size)
		}
	}
}

// TestSameAsReference: the reader, which finds the warnings about
// versions after reading and interns values on two cores, reads random
// files, and every prefix of small ones, as the reader it replaced did.
func TestSameAsReference(t *testing.T) {
	defer func(n, b, o int) {
		maxWarningsPerKind, parallelBatch, ownLimit = n, b, o
	}(maxWarningsPerKind, parallelBatch, ownLimit)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		maxWarningsPerKind = []int{0, 1, 3, 20}[i%4]
		parallelBatch = []int{0, 1, 7, 64, history.ParallelBatch}[i%5]
		ownLimit = []int{64, 0, 2}[i/8%3]
		data := randomFile(rng, 1+rng.IntN(40))
		sameAsReference(t, data)
		if i%10 == 0 && len(data) < 600 {
			for cut := range len(data) {
				sameAsReference(t, data[:cut])
			}
		}
	}
	// Large enough for the parallel interning and Builder.ReserveRest.
	for range 3 {
		sameAsReference(t, randomFile(rng, 80000))
	}
}

// sameHistory requires got to equal want, field by field first so that a
// difference is shown on its own.
func sameHistory(t *testing.T, want, got *history.History, msg ...any) {
	t.Helper()
	require.Equal(t, want.Warnings, got.Warnings, msg...)
	require.Equal(t, want.Keys, got.Keys, msg...)
	require.Equal(t, want.Values, got.Values, msg...)
	require.Equal(t, want.AbortedWrites, got.AbortedWrites, msg...)
	require.Equal(t, len(want.Txns), len(got.Txns), msg...)
	for i := range want.Txns {
		require.Equal(t, want.Txns[i], got.Txns[i], msg...)
	}
	require.Equal(t, want, got, msg...)
}
