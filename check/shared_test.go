package check

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

// Checks of one history at several levels given one Shared validate it
// once: the first keeps the findings, the others reuse them and reach the
// same verdicts as without it.
func TestSharedValidation(t *testing.T) {
	for _, file := range []string{"../testdata/validation/non-repeatable-read.jsonl", "../testdata/strong/write-skew.jsonl"} {
		h, err := formats.Read(file, formats.Options{})
		require.NoError(t, err)
		shared := &Shared{}
		for _, l := range []history.Level{history.SER, history.SI, history.RA, history.RC} {
			alone, err := Check(context.Background(), h, l, Options{})
			require.NoError(t, err)
			with, err := Check(context.Background(), h, l, Options{Shared: shared})
			require.NoError(t, err)
			require.Equal(t, alone.Verdict, with.Verdict, "%s %s", file, l)
			require.Equal(t, alone.Anomalies, with.Anomalies, "%s %s", file, l)
		}
		require.Len(t, shared.findings, 1, "one history, validated once")
		require.Equal(t, h.Validate(), shared.findings[h])
	}
}
