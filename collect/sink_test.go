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
	require.NotContains(t, string(data), `{"end":`, "no end line")
	_, err = jsonl.Read(tmp, jsonl.Options{})
	require.EqualError(t, err, tmp+":1: history incomplete: its recording was cut short (killed or out of disk); the transactions recorded so far can be read with --lenient")
	h, err := jsonl.Read(tmp, jsonl.Options{Lenient: true})
	require.NoError(t, err)
	require.Positive(t, h.Stats().Transactions)
	require.Equal(t, strings.Count(string(data), "\n")-1, h.Stats().Transactions)
	require.Equal(t, history.Dropped{Other: 1}, h.Dropped, "a verdict says it was reached without the rest")
	require.Len(t, h.Warnings, 1)
	require.Contains(t, h.Warnings[0].String(), tmp+":1: history incomplete: its recording was cut short")
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
	data, err := os.ReadFile(dest)
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(data), "\n")
	require.Contains(t, header, jsonl.TrailerField)
	require.NotContains(t, header, jsonl.IncompleteField)
	h, err := jsonl.Read(dest, jsonl.Options{})
	require.NoError(t, err)
	require.Zero(t, h.Dropped)
	require.Empty(t, h.Warnings)
	st := h.Stats()
	require.True(t, strings.HasSuffix(string(data), string(jsonl.AppendEnd(nil, jsonl.End{
		Txns: int64(st.Transactions), Ops: int64(st.Operations), Lines: int64(st.Transactions) + 1}))), "the end line, last")
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

// tee records a run through a Recorder and keeps the transactions it
// gives the recorder, as a Builder history like the one Run builds
// without a Sink.
type tee struct {
	*collect.Recorder
	b *history.Builder
}

func (s *tee) Txn(t jsonl.StreamTxn) error {
	tx := s.b.Begin(s.b.Session(t.Session), t.ID, t.Status, history.Pos{})
	if t.Level != history.LevelNone {
		s.b.SetLevel(tx, t.Level)
	}
	if t.Timed {
		s.b.SetInterval(tx, t.Start, t.End)
	}
	for _, op := range t.Ops {
		if op.Write {
			s.b.Write(tx, op.Key, op.Val)
		} else {
			s.b.Read(tx, op.Key, op.Val)
		}
	}
	return s.Recorder.Txn(t)
}

// TestStreamedHistoryKeepsVerdicts: a streamed file reads back strictly
// and gets the verdict of the transactions the recorder was given, at
// every level; cut at any line boundary it is refused, and read with
// --lenient with a warning and the loss counted as dropped. The same
// through standard output, whose header cannot be completed: its end
// line alone shows a cut.
func TestStreamedHistoryKeepsVerdicts(t *testing.T) {
	for _, pipe := range []bool{false, true} {
		dest := filepath.Join(t.TempDir(), "h.jsonl")
		var out strings.Builder
		var rec *collect.Recorder
		if pipe {
			rec = collect.NewRecorder(&out)
		} else {
			var err error
			rec, err = collect.CreateFile(dest)
			require.NoError(t, err)
		}
		b := history.NewBuilder("tee", "collect")
		b.SetInit(history.InitImplicit, -1)
		b.InitAllKeys(0)
		sink := &tee{Recorder: rec, b: b}
		w := general(t, func(c *workload.Config) { c.Keys, c.Txns = 6, 40 })
		_, _, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 5}), w,
			collect.Options{Isolation: collect.ReadCommitted, Sink: sink})
		require.NoError(t, err)
		require.NoError(t, rec.Close())
		want := b.Finish()
		if pipe {
			require.NoError(t, os.WriteFile(dest, []byte(out.String()), 0o644))
		}
		got, err := jsonl.Read(dest, jsonl.Options{})
		require.NoError(t, err)
		require.Zero(t, got.Dropped)
		require.Equal(t, want.Stats().Transactions, got.Stats().Transactions)
		violated := 0
		for _, l := range []history.Level{history.SER, history.SI, history.PSI, history.PC, history.CC, history.RA, history.RC} {
			r1, err := check.Check(context.Background(), want, l, check.Options{})
			require.NoError(t, err)
			r2, err := check.Check(context.Background(), got, l, check.Options{})
			require.NoError(t, err)
			require.Equal(t, r1.Verdict, r2.Verdict, "%v", l)
			if r1.Verdict == check.Violated {
				violated++
			}
		}
		require.Positive(t, violated, "read committed: some level is violated")

		data, err := os.ReadFile(dest)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(data), "\n")
		lines = lines[:len(lines)-1]
		for cut := 1; cut < len(lines); cut++ {
			p := filepath.Join(t.TempDir(), "cut.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines[:cut], "")), 0o644))
			_, err := jsonl.Read(p, jsonl.Options{})
			require.ErrorContains(t, err, p+":", "cut after line %d", cut)
			require.ErrorContains(t, err, "truncated", "cut after line %d", cut)
			h, err := jsonl.Read(p, jsonl.Options{Lenient: true})
			require.NoError(t, err)
			require.Equal(t, cut-1, h.Stats().Transactions)
			require.Equal(t, history.Dropped{Other: 1}, h.Dropped)
			require.Len(t, h.Warnings, 1)
			require.Contains(t, h.Warnings[0].String(), "truncated")
		}
	}
}
