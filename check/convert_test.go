package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// historyPaths lists the histories under root: each file or directory that
// format detection recognises, a recognised directory as one history.
func historyPaths(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.Contains(p, "fuzz") {
			return filepath.SkipDir
		}
		if _, err := formats.Detect(p); err != nil {
			return nil
		}
		out = append(out, p)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// outcome is what a check says: the verdict, and whether anomalies back a
// violation. Which anomaly a check names first may depend on the order in
// which a reader interned values (both are true of the history), so the
// types are not compared.
func outcome(t *testing.T, h *history.History, level history.Level) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Check(ctx, h, level, Options{})
	if errors.Is(err, ErrInput) {
		return "refused"
	}
	require.NoError(t, err, "%s at %v", h.Source, level)
	return fmt.Sprintf("%s (anomalies: %v)", res.Verdict, len(res.Anomalies) > 0)
}

// levelsOf are the levels h can be checked at: all of them, strict-ser
// only with timing.
func levelsOf(h *history.History) []history.Level {
	ls := []history.Level{history.SER, history.SI, history.CC, history.RA, history.RC}
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Timed {
			return append(ls, history.StrictSER)
		}
	}
	return ls
}

// TestConvertKeepsVerdicts: every shared history and every testdata
// history, converted to JSONL and read back, gets the same verdict and the
// same anomalies at every level it can be checked at (the 10k bench
// histories and those over 5,000 transactions only with -large).
func TestConvertKeepsVerdicts(t *testing.T) {
	paths := historyPaths(t, shared.Datasets(t))
	paths = append(paths, historyPaths(t, filepath.Join("..", "testdata"))...)
	checked, skipped := 0, 0
	for _, p := range paths {
		h, err := formats.Read(p, formats.Options{})
		if err != nil {
			skipped++ // deliberately malformed samples; the reader tests cover them
			continue
		}
		if !*large && (strings.Contains(p, "-10k") || len(h.Txns) > 5000) {
			skipped++
			continue
		}
		var buf bytes.Buffer
		require.NoError(t, jsonl.Write(&buf, h), p)
		h2, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), p+".jsonl", jsonl.Options{})
		require.NoError(t, err, p)
		require.Equal(t, levelsOf(h), levelsOf(h2), p)
		for _, l := range levelsOf(h) {
			require.Equal(t, outcome(t, h, l), outcome(t, h2, l), "%s at %v, before and after convert", p, l)
			checked++
		}
	}
	t.Logf("%d histories, %d checks compared, %d histories skipped", len(paths), checked, skipped)
	require.Greater(t, checked, 3000)
}

// TestConvertKeepsStatedHints: version orders stated outside any list (as
// explain's counterexamples carry them) survive JSONL.
func TestConvertKeepsStatedHints(t *testing.T) {
	b := history.NewBuilder("mem", "test")
	s := b.Session(1)
	t1 := b.Begin(s, 1, history.Committed, history.Pos{})
	b.Write(t1, 7, 1)
	t2 := b.Begin(b.Session(2), 2, history.Committed, history.Pos{})
	b.Write(t2, 7, 2)
	b.VersionHint(7, 2, 1)
	h := b.Finish()
	var buf bytes.Buffer
	require.NoError(t, jsonl.Write(&buf, h))
	require.Contains(t, buf.String(), `{"version_order":[[7,2,1]]}`)
	h2, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), "rt.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, h.HintsAt(history.RC), h2.HintsAt(history.RC))
}
