package check

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/memlimit"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// TestMaxBytes: a budget below what a stage needs makes the verdict
// unknown with the figures; OnStage follows the stages entered.
func TestMaxBytes(t *testing.T) {
	h, err := dbcop.Read(shared.Path(t, "bench", "BL-1k", "hist-00000"), dbcop.Options{DropAborted: true})
	require.NoError(t, err)
	for _, level := range []history.Level{history.SI, history.CC} {
		var stages []string
		res, err := Check(context.Background(), h, level, Options{MaxBytes: 1, OnStage: func(s string) { stages = append(stages, s) }})
		require.NoError(t, err)
		require.Equal(t, Unknown, res.Verdict, level)
		require.Contains(t, res.Reason, "not enough memory: ")
		require.Contains(t, res.Reason, "(check.Options.MaxBytes)")
		require.Equal(t, stages[len(stages)-1], res.Stage)
		require.Equal(t, "validate", stages[0])
	}
	// The budget the stages see when MaxBytes is 0 is the process's.
	restore := memlimit.SetProcess(memlimit.Budget{Limit: 1, Source: "test"})
	res, err := Check(context.Background(), h, history.SER, Options{})
	restore()
	require.NoError(t, err)
	require.Equal(t, Unknown, res.Verdict)
	require.Contains(t, res.Reason, "(test)")
	// No bound at all, and enough.
	for _, max := range []int64{-1, 1 << 40} {
		var stages []string
		res, err = Check(context.Background(), h, history.SI, Options{MaxBytes: max, OnStage: func(s string) { stages = append(stages, s) }})
		require.NoError(t, err)
		require.Equal(t, Satisfied, res.Verdict)
		require.Equal(t, []string{"validate", "build", "prune", "encode", "solve"}, stages)
	}
}
