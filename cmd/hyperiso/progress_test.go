package main

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The stage display is for terminals only: a buffer, a pipe or a file gets
// nothing, and a nil display takes every call.
func TestStageDisplayOnlyOnTerminals(t *testing.T) {
	require.Nil(t, newStageDisplay(&bytes.Buffer{}))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.Nil(t, newStageDisplay(w))
	var d *stageDisplay
	d.set("solve")
	d.reading(func() int64 { t.Fatal("the size of an input no display shows was asked"); return 0 })
	d.finish()
}

// Reading an input of known size draws a bar of the bytes the process has
// read since reading began, then the next stage its spinner; finish
// clears both.
func TestStageDisplayReadBar(t *testing.T) {
	var out syncBuffer
	var read atomic.Int64
	read.Store(200 << 10) // read before the stage: not counted
	d := startStageDisplay(&out, func() (int64, bool) { return read.Load(), true }, 0)
	d.set("read")
	d.reading(func() int64 { return 400 << 10 })
	read.Add(100 << 10)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "25%") }, 5*time.Second, 10*time.Millisecond, out.String())
	read.Add(200 << 10)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "75%") }, 5*time.Second, 10*time.Millisecond, out.String())
	require.Contains(t, out.String(), "read")
	d.set("solve")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "solve") }, 5*time.Second, 10*time.Millisecond, out.String())
	d.finish()
	d.finish()
}

// Of unknown size (a pipe) or where the process's reads are not counted,
// reading shows the spinner.
func TestStageDisplayReadUnknown(t *testing.T) {
	for _, tc := range []struct {
		size  int64
		count bool
	}{{0, true}, {1 << 20, false}} {
		var out syncBuffer
		d := startStageDisplay(&out, func() (int64, bool) { return 512 << 10, tc.count }, 0)
		d.reading(func() int64 { return tc.size })
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "read") }, 5*time.Second, 10*time.Millisecond)
		d.finish()
		require.NotContains(t, out.String(), "%")
	}
}

// syncBuffer is a bytes.Buffer the display's goroutine and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
