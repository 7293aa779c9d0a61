package collect_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// smallDisk is a file on a disk with room for limit bytes: a write beyond
// writes what fits and fails with ENOSPC, as a full disk does.
type smallDisk struct {
	*os.File
	mu    sync.Mutex
	limit int64
	size  int64
}

func (d *smallDisk) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	room := max(d.limit-d.size, 0)
	if int64(len(p)) <= room {
		n, err := d.File.Write(p)
		d.size += int64(n)
		return n, err
	}
	n, _ := d.File.Write(p[:room])
	d.size += int64(n)
	return n, &os.PathError{Op: "write", Path: d.Name(), Err: syscall.ENOSPC}
}

func (d *smallDisk) Truncate(n int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.size = n
	return d.File.Truncate(n)
}

// TestRecorderStopsOnFullDisk: a full disk stops the run at once with a
// *WriteError; the destination is not created; the temporary file holds
// whole lines only, marked incomplete, and reads (leniently) as the
// transactions recorded so far.
func TestRecorderStopsOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	dest, tmp := filepath.Join(dir, "h.jsonl"), filepath.Join(dir, "h.jsonl.incomplete-1")
	f, err := os.Create(tmp)
	require.NoError(t, err)
	rec := collect.NewFileRecorderForTest(dest, tmp, &smallDisk{File: f, limit: 400 << 10})
	// Four million transactions: without the stop the run would take minutes.
	w := general(t, func(c *workload.Config) { c.Sessions, c.Txns = 4, 1000000 })
	start := time.Now()
	_, sum, err := collect.Run(context.Background(), memstore.New(memstore.Options{}), w, collect.Options{Sink: rec})
	var we *collect.WriteError
	require.ErrorAs(t, err, &we)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorIs(t, err, collect.ErrStopped)
	require.Less(t, time.Since(start), 5*time.Second, "stopped as soon as it could not write")
	require.Less(t, sum.Transactions, sum.Planned)
	cerr := rec.Close()
	require.ErrorAs(t, cerr, &we)
	require.ErrorContains(t, cerr, tmp+", marked incomplete")
	require.NoFileExists(t, dest)

	data, err := os.ReadFile(tmp)
	require.NoError(t, err)
	require.LessOrEqual(t, len(data), 400<<10)
	require.True(t, strings.HasSuffix(string(data), "}\n"), "whole lines only")
	require.Contains(t, strings.SplitN(string(data), "\n", 2)[0], `"incomplete":true`)
	_, err = jsonl.Read(tmp, jsonl.Options{})
	require.ErrorContains(t, err, "incomplete", "an incomplete history is refused")
	h, err := jsonl.Read(tmp, jsonl.Options{Lenient: true})
	require.NoError(t, err)
	require.Positive(t, h.Stats().Transactions)
	require.Equal(t, strings.Count(string(data), "\n")-1, h.Stats().Transactions)
}

// TestRecorderStreamsTheHistory: a run through a Recorder writes the file
// only at the end, complete, with what the summary counts; it checks as
// the in-memory history does.
func TestRecorderStreamsTheHistory(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "h.jsonl")
	rec, err := collect.CreateFile(dest)
	require.NoError(t, err)
	require.Equal(t, collect.TempName(dest, os.Getpid()), rec.Temp())
	_, err = collect.CreateFile(dest)
	require.Error(t, err, "one recorder per destination and process")
	w := general(t, func(c *workload.Config) { c.RollbackRate = 0.1 })
	h0, sum, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 2}), w,
		collect.Options{Isolation: collect.Snapshot, Sink: rec, Times: true})
	require.NoError(t, err)
	require.Nil(t, h0, "the sink has the history")
	require.NoFileExists(t, dest, "renamed only once whole")
	require.NoError(t, rec.Close())
	require.NoFileExists(t, rec.Temp())
	h, err := jsonl.Read(dest, jsonl.Options{})
	require.NoError(t, err)
	st := h.Stats()
	require.Equal(t, sum.Transactions, st.Transactions)
	require.Equal(t, sum.Committed, st.Committed)
	require.Equal(t, sum.Sessions, len(h.Sessions))
	require.Equal(t, "snapshot", h.Meta["isolation"])
	require.EqualValues(t, rec.Bytes(), fileSize(t, dest))
	for i := 1; i < len(h.Txns); i++ {
		require.EqualValues(t, i, h.Txns[i].ID, "ids in completion order")
		require.True(t, h.Txns[i].Timed)
	}
	res, err := check.Check(context.Background(), h, history.SI, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Satisfied, res.Verdict)
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}
