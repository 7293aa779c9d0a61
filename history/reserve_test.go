package history

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReserveWindow: room is reserved from the second megabyte of an
// input, not its first, and the history built is the same as without.
func TestReserveWindow(t *testing.T) {
	build := func(window bool) (*History, int) {
		b := NewBuilder("x", "test")
		b.SetParallel(ParallelBatch)
		const size = 10 << 20
		var read int64
		// The first megabyte: one write of each of many keys in one
		// transaction, 8 bytes a line; then transactions of 4
		// operations, 100 bytes a line.
		t0 := b.Begin(b.Session(1), 1, Committed, Pos{})
		for k := range int64(1 << 17) {
			b.AddRaw(t0, []RawOp{{Kind: OpWrite, Key: k, Value: 0}})
			read += 8
		}
		reserved := 0
		for i := int64(0); read < size; i++ {
			tx := b.Begin(b.Session(2+i%5), 2+i, Committed, Pos{})
			b.AddRaw(tx, []RawOp{{OpRead, i % 1000, 0}, {OpWrite, i % 1000, i + 1}, {OpRead, 7, 0}, {OpWrite, 1 << 40, i}})
			read += 100
			if window {
				b.ReserveWindow(read, size)
				if b.restReserved && reserved == 0 {
					reserved = cap(b.arena)
				}
			}
		}
		return b.Finish(), reserved
	}
	want, _ := build(false)
	got, reserved := build(true)
	require.Equal(t, want, got)
	ops := 0
	for _, tx := range got.Txns {
		ops += len(tx.Ops)
	}
	// The rest holds 4 operations per 100 bytes, and so about all the
	// history's operations; judged from the start, 8 times as many.
	require.InDelta(t, float64(ops), float64(reserved), 0.15*float64(ops))
}
