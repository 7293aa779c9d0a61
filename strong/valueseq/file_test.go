package valueseq_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/strong/valueseq"
)

// TestFile runs the search on the history VALUESEQ_FILE names (a
// measurement, skipped without it).
func TestFile(t *testing.T) {
	path := os.Getenv("VALUESEQ_FILE")
	if path == "" {
		t.Skip("VALUESEQ_FILE not set")
	}
	h, err := formats.Read(path, formats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := valueseq.Decide(context.Background(), h, valueseq.Options{})
	t.Logf("%s: %v states %d dead %d in %v (%v)", path, res.Verdict, res.States, res.Dead, time.Since(start), err)
}
