package jsonl_test

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/stretchr/testify/require"
)

// sharedHistories are the shared datasets' histories (a deterministic
// sample of the many dbcop ones, every Cobra log, text and EDN file).
func sharedHistories(t *testing.T) []string {
	root := shared.Datasets(t)
	var paths []string
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if logs, _ := filepath.Glob(filepath.Join(p, "*.log")); len(logs) > 0 {
				paths = append(paths, p)
				return filepath.SkipDir
			}
		case strings.HasSuffix(p, ".bincode"):
			if n++; n%7 == 0 {
				paths = append(paths, p)
			}
		case strings.HasSuffix(p, ".txt") || strings.HasSuffix(p, ".edn"):
			paths = append(paths, p)
		}
		return nil
	})
	require.NoError(t, err)
	return paths
}

// readJSONL reads data sequentially, or in parallel in chunks of chunk
// bytes.
func readJSONL(data []byte, seq bool, chunk int, lenient ...bool) (*history.History, error) {
	defer jsonl.SetReading(seq, chunk)()
	return jsonl.Parse(bytes.NewReader(data), "h.jsonl", jsonl.Options{Lenient: len(lenient) > 0 && lenient[0]})
}

// TestSharedParallelMatchesSequential: each shared dataset, written as
// JSONL, reads in parallel (in chunks of several sizes) as sequentially,
// and as the history it was written from; and so do cut and corrupted
// copies, strict and lenient, with the same error (message and
// position) or warnings.
func TestSharedParallelMatchesSequential(t *testing.T) {
	paths := sharedHistories(t)
	require.NotEmpty(t, paths)
	rng := rand.New(rand.NewPCG(1, 2))
	read := 0
	for _, p := range paths {
		h, err := formats.Read(p, formats.Options{})
		if err != nil {
			continue // a history the datasets keep for its reading error
		}
		read++
		var buf bytes.Buffer
		require.NoError(t, jsonl.Write(&buf, h), p)
		data := buf.Bytes()
		want, err := readJSONL(data, true, 0)
		require.NoError(t, err, p)
		require.Equal(t, len(h.Txns), len(want.Txns), p)
		for _, chunk := range []int{1 + rng.IntN(4096), 1 << 19} {
			got, err := readJSONL(data, false, chunk)
			require.NoError(t, err, p)
			require.Equal(t, want, got, "%s chunk %d", p, chunk)
		}
		// Cut anywhere, a byte changed: the same history or error.
		bad := bytes.Clone(data)
		if len(bad) > 0 {
			bad[rng.IntN(len(bad))] = "0-,]}\"x\n"[rng.IntN(8)]
		}
		for i, d := range [][]byte{data[:rng.IntN(len(data)+1)], bad, bad} {
			lenient := i == 2
			wantH, wantErr := readJSONL(d, true, 0, lenient)
			gotH, gotErr := readJSONL(d, false, 1+rng.IntN(8192), lenient)
			if wantErr != nil {
				require.Error(t, gotErr, p)
				require.Equal(t, wantErr.Error(), gotErr.Error(), p)
				continue
			}
			require.NoError(t, gotErr, p)
			require.Equal(t, wantH, gotH, p)
		}
	}
	require.Greater(t, read, 50)
	if testing.Verbose() {
		t.Logf("%d histories", read)
	}
}
