package formats

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// sameReading fails unless a and b (each a history or an error) are the same
// reading of one input: the same error, or histories that write the same
// JSONL with the same format and warnings.
func sameReading(t *testing.T, a *history.History, aErr error, b *history.History, bErr error, msg string) {
	t.Helper()
	if aErr != nil || bErr != nil {
		require.Error(t, aErr, "%s: only the stream failed: %v", msg, bErr)
		require.Error(t, bErr, "%s: only the file failed: %v", msg, aErr)
		require.Equal(t, aErr.Error(), bErr.Error(), msg)
		return
	}
	var wa, wb bytes.Buffer
	errA, errB := jsonl.Write(&wa, a), jsonl.Write(&wb, b)
	require.Equal(t, errA, errB, msg)
	require.Equal(t, wa.String(), wb.String(), msg)
	require.Equal(t, a.Format, b.Format, msg)
	require.Equal(t, a.Warnings, b.Warnings, msg)
	require.Equal(t, a.Source, b.Source, msg)
	require.Equal(t, a.Dropped, b.Dropped, msg)
}

// streamSamples are small histories of every format a stream can hold.
func streamSamples(t testing.TB) []string {
	paths, err := filepath.Glob("../testdata/*/*.*")
	require.NoError(t, err)
	if ds := shared.Dir(); ds != "" {
		for _, p := range []string{
			"datasets/samples/dbcop/roachdb-cut/history.bincode",
			"datasets/samples/text/galera.txt",
			"datasets/elle/paper-example.edn",
		} {
			paths = append(paths, filepath.Join(ds, p))
		}
		weak, _ := filepath.Glob(filepath.Join(ds, "datasets/weak-labelled/*/*"))
		if len(weak) > 0 {
			paths = append(paths, weak[0])
		}
	}
	return paths
}

// TestReadStreamMatchesFile: every sample read as a stream, a byte or a
// few at a time as from a pipe, reads as from its file.
func TestReadStreamMatchesFile(t *testing.T) {
	for _, p := range streamSamples(t) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, lenient := range []bool{false, true} {
			opt := Options{Lenient: lenient}
			h, err := Read(p, opt)
			if err == nil || !strings.Contains(err.Error(), "does not end with a newline") {
				// AWDIT's hand-written tests lack the final newline.
				require.NoError(t, err, p)
			}
			hs, errS := ReadStream(iotest.OneByteReader(bytes.NewReader(data)), p, opt)
			sameReading(t, h, err, hs, errS, p)
			hs, errS = ReadStream(iotest.HalfReader(bytes.NewReader(data)), p, opt)
			sameReading(t, h, err, hs, errS, p)
		}
	}
}

// TestReadStandardInput: "-" reads Options.Stdin and names it <stdin>.
func TestReadStandardInput(t *testing.T) {
	data, err := os.ReadFile("../testdata/bank.jsonl")
	require.NoError(t, err)
	h, err := Read(StdinPath, Options{Stdin: bytes.NewReader(data)})
	require.NoError(t, err)
	require.Equal(t, "<stdin>", h.Source)
	require.Equal(t, "jsonl", h.Format)
	require.Len(t, h.Txns, 7)
	_, err = Read(StdinPath, Options{Stdin: strings.NewReader("r(1,2,3,4)\nbogus\n")})
	require.ErrorContains(t, err, "<stdin>:2: ")
	_, err = Read(StdinPath, Options{Stdin: strings.NewReader("{}"), Format: "cobra"})
	require.ErrorContains(t, err, "<stdin>: a Cobra history is a directory")
	_, err = Read(StdinPath, Options{Stdin: iotest.ErrReader(io.ErrClosedPipe)})
	require.ErrorIs(t, err, io.ErrClosedPipe)
	require.ErrorContains(t, err, "<stdin>")
}

// FuzzReadStream: any bytes read through the stream path, a few bytes at a
// time, give the same history or the same error as through a file.
func FuzzReadStream(f *testing.F) {
	for _, p := range streamSamples(f) {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		if len(data) <= 4<<10 {
			f.Add(data, false)
		}
	}
	for _, s := range []string{"", "\n", "{", "r(1,2,3,4)\n", "w 1 2\n", "(:type"} {
		f.Add([]byte(s), true)
	}
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte, lenient bool) {
		// A new file each time: ext4 flushes a file truncated and written
		// again, which made fuzzing crawl.
		n++
		path := filepath.Join(dir, fmt.Sprint(n))
		require.NoError(t, os.WriteFile(path, data, 0o644))
		defer os.Remove(path)
		opt := Options{Lenient: lenient}
		h, err := Read(path, opt)
		hs, errS := ReadStream(iotest.HalfReader(bytes.NewReader(data)), path, opt)
		sameReading(t, h, err, hs, errS, "")
		if err == nil && !lenient {
			require.False(t, h.Dropped.Any(), "strict reading dropped %v", h.Dropped)
		}
	})
}

// TestReadLargeFileMatchesStream: a history of several megabytes, where
// the readers reserve room from the file's size, reads from its file as
// from a stream, whose size is unknown, in JSONL, text and dbcop.
func TestReadLargeFileMatchesStream(t *testing.T) {
	if testing.Short() {
		t.Skip("megabytes")
	}
	b := history.NewBuilder("gen", "test")
	b.SetInit(history.InitImplicit, 0)
	for i := range 30000 {
		tx := b.Begin(b.Session(int64(i%7+1)), int64(i+1), history.Committed, history.Pos{})
		for j := range 8 {
			key := int64((i*13 + j*7) % 5000)
			if j%2 == 0 {
				b.Write(tx, key, int64(i*8+j+1))
			} else {
				b.Read(tx, key, int64(i*8-40+j))
			}
		}
	}
	b.InitAllKeys(0)
	h := b.Finish()
	dir := t.TempDir()
	for name, write := range map[string]func(io.Writer) error{
		"h.jsonl":         func(w io.Writer) error { return jsonl.Write(w, h) },
		"h.txt":           func(w io.Writer) error { return text.Write(w, h) },
		"history.bincode": func(w io.Writer) error { return dbcop.Write(w, h) },
	} {
		var buf bytes.Buffer
		require.NoError(t, write(&buf))
		require.Greater(t, buf.Len(), 2<<20, name)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
		got, err := Read(p, Options{})
		require.NoError(t, err, name)
		want, err := ReadStream(iotest.HalfReader(bytes.NewReader(buf.Bytes())), p, Options{})
		require.NoError(t, err, name)
		// Not require.Equal: its diff of histories this large takes minutes.
		require.Equal(t, want.Warnings, got.Warnings, name)
		require.True(t, reflect.DeepEqual(want, got), "%s: the histories differ", name)
	}
}
