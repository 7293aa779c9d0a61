package strong_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong"
	"github.com/hyperiso/hyperiso/verdict"
)

// unknownBench names the bench histories (under datasets/bench) that the
// unknown-status benchmarks mark: every tenth committed transaction of
// each becomes one of unknown status, 1,000 of the 10,000.
var unknownBench = []string{"BL-10k/hist-00000", "HD-10k/hist-00000", "RH-10k/hist-00000", "WH-10k/hist-00000", "twitter-10k", "tpcc-10k", "rubis-10k"}

// benchName is the data set's directory: BL-10k for BL-10k/hist-00000.
func benchName(name string) string {
	for filepath.Dir(name) != "." {
		name = filepath.Dir(name)
	}
	return name
}

// markUnknown reads a bench history and gives every tenth committed
// transaction unknown status (as a reader would: no end in real time).
func markUnknown(tb testing.TB, name string) *history.History {
	tb.Helper()
	root := os.Getenv("HYPERISO_SHARED")
	if root == "" {
		root = filepath.Join("..", "..", "shared")
	}
	path := filepath.Join(root, "datasets", "bench", name)
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("no bench history %s (set HYPERISO_SHARED)", path)
	}
	h, err := formats.Read(path, formats.Options{})
	require.NoError(tb, err)
	n := 0
	for t := 1; t < len(h.Txns); t++ {
		if tx := &h.Txns[t]; tx.Status == history.Committed {
			if n%10 == 9 {
				tx.Status = history.Unknown
				if tx.Timed {
					tx.End = math.MaxInt64
				}
			}
			n++
		}
	}
	return h
}

// BenchmarkUnknown10k decides the marked bench histories at SER and SI.
func BenchmarkUnknown10k(b *testing.B) {
	for _, name := range unknownBench {
		for _, level := range []history.Level{history.SER, history.SI} {
			b.Run(benchName(name)+"/"+level.String(), func(b *testing.B) {
				h := markUnknown(b, name)
				for b.Loop() {
					out, err := strong.Decide(context.Background(), h, level, strong.Options{})
					require.NoError(b, err)
					require.NotEqual(b, verdict.Unknown, out.Verdict)
					b.ReportMetric(float64(out.Counters["unknown_optional"]), "optional")
				}
			})
		}
	}
}

// TestWriteUnknownBench writes the marked bench histories as JSONL into
// the directory HYPERISO_UNKNOWN_BENCH names, for timing the command line
// on them; without it the test does nothing.
func TestWriteUnknownBench(t *testing.T) {
	dir := os.Getenv("HYPERISO_UNKNOWN_BENCH")
	if dir == "" {
		t.Skip("HYPERISO_UNKNOWN_BENCH not set")
	}
	for _, name := range unknownBench {
		h := markUnknown(t, name)
		f, err := os.Create(filepath.Join(dir, benchName(name)+"-unknown.jsonl"))
		require.NoError(t, err)
		require.NoError(t, jsonl.Write(f, h))
		require.NoError(t, f.Close())
	}
}
