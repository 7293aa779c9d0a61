package collect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hyperiso/hyperiso/formats/jsonl"
)

// Sink receives a run's history as it is recorded (Options.Sink).
type Sink interface {
	// Start is called once, after the store is set up and before the
	// first transaction, with the history's metadata. fail stops the run
	// with an error found in the background (a failed batch write or
	// sync); it must not be called with the sink's own locks held.
	Start(meta map[string]string, fail func(error)) error
	// Txn records one transaction; an error stops the run. Calls are
	// serialised.
	Txn(t jsonl.StreamTxn) error
}

// WriteError is a failure to write the history: the run stops at once.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return "writing the history: " + e.Err.Error() }

func (e *WriteError) Unwrap() error { return e.Err }

// Batching of a Recorder: lines are written when this many bytes are
// buffered, or at each tick; a tick that wrote syncs the file.
const (
	flushBytes = 256 << 10
	flushEvery = 200 * time.Millisecond
)

// file is what a Recorder needs of an *os.File (a test injects failures).
type file interface {
	io.Writer
	io.WriterAt
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Recorder is a Sink that streams the history in the native JSONL format
// (jsonl.Stream), writing whole lines in batches (every flushEvery, or
// every flushBytes). To a file (CreateFile), it writes a temporary file
// beside the destination, named DEST.incomplete-PID, whose header says
// "incomplete":true; each batch is synced; Close completes the header in
// place, syncs and renames the file to DEST. If the recorder is killed or
// cannot write, the temporary file stays: the history recorded so far,
// whole lines only, marked incomplete, without the end line. To a pipe
// (NewRecorder), it writes the lines as they come, with a complete header;
// the end line comes last, so that a reader tells a cut pipe too.
type Recorder struct {
	path, tmp string // "" for a writer
	f         file   // nil for a writer
	w         io.Writer

	mu      sync.Mutex
	s       *jsonl.Stream
	good    int64 // bytes of whole lines written
	dirty   bool  // written since the last sync
	err     error
	fail    func(error)
	stopped chan struct{}
	done    sync.WaitGroup
	also    io.Writer // Tee
}

// NewRecorder returns a Recorder that writes to w.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: w} }

// TempName is the temporary file a recorder writes before renaming it to
// path.
func TempName(path string, pid int) string {
	return path + ".incomplete-" + strconv.Itoa(pid)
}

// CreateFile creates the temporary file beside path that Close renames to
// path. path itself is not touched until then.
func CreateFile(path string) (*Recorder, error) {
	tmp := TempName(path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	return newFileRecorder(path, tmp, f), nil
}

func newFileRecorder(path, tmp string, f file) *Recorder {
	return &Recorder{path: path, tmp: tmp, f: f, w: f}
}

// Tee makes the recorder copy every batch of whole lines it writes to w
// as well (collect --check hands them to a checker following the run);
// w must not fail. Call it before Start.
func (r *Recorder) Tee(w io.Writer) { r.also = w }

// Temp is the temporary file ("" for a writer).
func (r *Recorder) Temp() string { return r.tmp }

// Started reports whether Start was called: the run recorded (or began to
// record) a history.
func (r *Recorder) Started() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s != nil
}

// write is the stream's writer: whole lines, counted only
// once written; after a failed write, the file is cut back to its last
// whole line (a full disk frees what truncation frees).
func (r *Recorder) write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if r.f != nil {
			_ = r.f.Truncate(r.good)
		}
		return n, err
	}
	r.good += int64(n)
	r.dirty = true
	if r.also != nil {
		_, _ = r.also.Write(p)
	}
	return n, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Start implements Sink: it writes the header and starts the batches.
func (r *Recorder) Start(meta map[string]string, fail func(error)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := jsonl.NewStream(writerFunc(r.write), meta, r.f != nil)
	if err != nil {
		r.err = err
		return err
	}
	if r.f != nil {
		if err := r.f.Sync(); err != nil {
			r.err = err
			return err
		}
		r.dirty = false
	}
	r.s, r.fail = s, fail
	r.stopped = make(chan struct{})
	r.done.Go(r.ticks)
	return nil
}

// Txn implements Sink.
func (r *Recorder) Txn(t jsonl.StreamTxn) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if err := r.s.Txn(t); err != nil {
		return err
	}
	if r.s.Buffered() >= flushBytes {
		if err := r.s.Flush(); err != nil {
			r.err = err
		}
	}
	return r.err
}

// ticks writes and syncs the batches until Close.
func (r *Recorder) ticks() {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stopped:
			return
		case <-t.C:
		}
		if err := r.flush(); err != nil {
			r.fail(err)
			return
		}
	}
}

// flush writes the buffered lines and syncs what was written.
func (r *Recorder) flush() error {
	r.mu.Lock()
	if r.err == nil {
		if err := r.s.Flush(); err != nil {
			r.err = err
		}
	}
	err, sync := r.err, r.dirty && r.f != nil
	r.dirty = false
	r.mu.Unlock()
	if err != nil || !sync {
		return err
	}
	// Outside the lock: the sessions go on meanwhile.
	if err := r.f.Sync(); err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
		return err
	}
	return nil
}

// Close ends the recording. With no error so far it writes what is
// buffered and the end line (jsonl.Stream.Trailer) and, for a file, syncs
// it, completes its header, syncs again,
// renames it to its destination and syncs the directory. After an error
// (or if Close fails) a file stays where it is, marked incomplete: Close
// then returns a *WriteError naming it. Close after a Start that was never
// called removes the temporary file.
func (r *Recorder) Close() error {
	if r.stopped != nil {
		close(r.stopped)
		r.done.Wait()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s == nil {
		// Nothing recorded (Start failed or never came): nothing kept.
		if r.f != nil {
			return errors.Join(r.f.Close(), os.Remove(r.tmp))
		}
		return nil
	}
	if r.err == nil {
		r.err = r.s.Flush()
	}
	// The end line, once the last transaction is written: a file without
	// it (killed, out of disk) is refused as cut short.
	if r.err == nil {
		r.err = r.s.Trailer()
	}
	if r.f == nil {
		if r.err != nil {
			return &WriteError{Err: r.err}
		}
		return nil
	}
	if err := r.err; err != nil {
		r.f.Close()
		return &WriteError{Err: fmt.Errorf("%w; the history recorded so far is in %s, marked incomplete", err, r.tmp)}
	}
	if err := r.complete(); err != nil {
		r.f.Close()
		return &WriteError{Err: fmt.Errorf("%w; the history is in %s", err, r.tmp)}
	}
	return nil
}

// complete makes the file whole and puts it in place. Its data are synced
// before its header says it is whole.
func (r *Recorder) complete() error {
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("%w (marked incomplete)", err)
	}
	if _, err := r.f.WriteAt(r.s.CompleteHeader(), 0); err != nil {
		return err
	}
	if err := r.f.Sync(); err != nil {
		return err
	}
	if err := r.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(r.tmp, r.path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(r.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Bytes is the size of the history written so far.
func (r *Recorder) Bytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.good
}
