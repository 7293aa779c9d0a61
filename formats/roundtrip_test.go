package formats_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/awdit"
	"github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
)

// randomHistory builds a small register history that exercises the
// writers' edges: empty sessions, aborted and unknown transactions,
// aborted writes (of the initial value too), repeated and zero values,
// negative keys, lists on some keys.
func randomHistory(rng *rand.Rand) *history.History {
	b := history.NewBuilder("mem", "test")
	lists := rng.IntN(4) == 0
	b.SetInit(history.InitImplicit, -1)
	id := int64(1)
	for s := range 1 + rng.IntN(3) {
		sess := b.Session(int64(s))
		for range rng.IntN(4) { // 0: an empty session
			status := history.Committed
			switch rng.IntN(8) {
			case 0:
				status = history.Aborted
			case 1:
				status = history.Unknown
			}
			t := b.Begin(sess, id, status, history.Pos{})
			id++
			for range rng.IntN(4) {
				k := int64(rng.IntN(3))
				if rng.IntN(10) == 0 {
					k = -k - 1
				}
				v := int64(rng.IntN(4))
				switch {
				case lists && rng.IntN(2) == 0:
					b.Append(t, k, v+1)
				case lists:
					b.ReadList(t, k, nil, history.EmptyList)
				case rng.IntN(2) == 0:
					b.Write(t, k, v)
				default:
					b.Read(t, k, v)
				}
			}
		}
	}
	if rng.IntN(3) == 0 {
		b.AbortedWrite(int64(rng.IntN(3)), int64(rng.IntN(3)))
	}
	if lists {
		b.InitAllKeys(history.EmptyList)
	} else {
		b.InitAllKeys(0)
	}
	return b.Finish()
}

type roundWriter struct {
	name string
	file string // "" for a directory
	w    func(path string, h *history.History) error
}

func streamTo(w func(io.Writer, *history.History) error) func(string, *history.History) error {
	return func(path string, h *history.History) error {
		var buf bytes.Buffer
		if err := w(&buf, h); err != nil {
			return err
		}
		return os.WriteFile(path, buf.Bytes(), 0o644)
	}
}

var roundWriters = []roundWriter{
	{"jsonl", "h.jsonl", streamTo(jsonl.Write)},
	{"dbcop", "history.bincode", streamTo(dbcop.Write)},
	{"text", "h.txt", streamTo(text.Write)},
	{"edn", "history.edn", streamTo(elle.Write)},
	{"awdit", "h.awdit", streamTo(awdit.Write)},
	{"cobra", "", func(dir string, h *history.History) error { return cobra.Write(dir, h, cobra.WriteOptions{}) }},
	{"cobra-universal", "", func(dir string, h *history.History) error {
		return cobra.Write(dir, h, cobra.WriteOptions{Flavour: cobra.Universal})
	}},
	{"viper", "", viper.Write},
}

// TestWritersRoundTrip: every writer, on random histories, either refuses
// with ErrCannotHold (writing nothing) or writes what formats.Read, with
// detection and without --lenient, reads back with the same verdicts at
// SER, SI, CC, RA and RC (issue 26: Viper with an empty session was read
// back as Cobra; EDN wrote a reserved value for an aborted write of 0).
func TestWritersRoundTrip(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	rng := rand.New(rand.NewPCG(26, 1))
	levels := []history.Level{history.SER, history.SI, history.CC, history.RA, history.RC}
	held := map[string]int{}
	for i := range n {
		h := randomHistory(rng)
		want := map[history.Level]check.Verdict{}
		for _, l := range levels {
			res, err := check.Check(context.Background(), h, l, check.Options{})
			if err != nil {
				break // nothing to check
			}
			want[l] = res.Verdict
		}
		if len(want) < len(levels) {
			continue
		}
		for _, w := range roundWriters {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			if w.file != "" {
				path = filepath.Join(dir, w.file)
			}
			if err := w.w(path, h); err != nil {
				require.True(t, errors.Is(err, formats.ErrCannotHold), "history %d, %s: %v", i, w.name, err)
				continue
			}
			held[w.name]++
			h2, err := formats.Read(path, formats.Options{})
			require.NoError(t, err, "history %d, %s", i, w.name)
			for _, l := range levels {
				res, err := check.Check(context.Background(), h2, l, check.Options{})
				require.NoError(t, err, "history %d written as %s, %v", i, w.name, l)
				require.Equal(t, want[l], res.Verdict, "history %d written as %s, %v", i, w.name, l)
			}
		}
	}
	t.Logf("histories held per writer (of %d): %v", n, held)
	for _, w := range roundWriters {
		require.NotZero(t, held[w.name], "%s held none: the generator misses it", w.name)
	}
}
