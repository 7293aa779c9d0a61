package formats

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDetectRefusesFIFO: Detect names no format for a FIFO, and does not
// open it (which would block: no one writes to it).
func TestDetectRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "h.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err := Detect(fifo)
	require.ErrorContains(t, err, "not a regular file")
	require.ErrorContains(t, err, fifo)
}

// TestReadFIFO: a FIFO is opened once and read once, its head included.
func TestReadFIFO(t *testing.T) {
	data, err := os.ReadFile("../testdata/strong/write-skew.jsonl")
	require.NoError(t, err)
	fifo := filepath.Join(t.TempDir(), "h")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, _ = f.Write(data)
			f.Close()
		}
	}()
	h, err := Read(fifo, Options{})
	require.NoError(t, err)
	want, err := Read("../testdata/strong/write-skew.jsonl", Options{})
	require.NoError(t, err)
	want.Source = fifo
	sameReading(t, want, nil, h, nil, fifo)
}
