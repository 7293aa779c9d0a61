package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCheckFromPipeAndFIFO reads histories through /dev/fd/N (what a
// shell's process substitution <(...) gives) and through a named FIFO,
// each written by a goroutine, and compares with the file, strictly and
// leniently (where a lost head used to give another verdict, not an error).
func TestCheckFromPipeAndFIFO(t *testing.T) {
	streamCases(t, func(t *testing.T, name string, data []byte, args []string, want outcome) {
		t.Run("pipe-"+name, func(t *testing.T) {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			writeAll(w, data)
			require.Equal(t, want, runWithin(t, append(args, fmt.Sprintf("/dev/fd/%d", r.Fd()))...))
		})
		t.Run("fifo-"+name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "h.jsonl")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			go func() {
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					writeAll(f, data)
				}
			}()
			require.Equal(t, want, runWithin(t, append(args, fifo)...))
		})
	})
}

// runWithin is runOutcome with a deadline: a reader that opens a FIFO
// twice blocks for ever once the writer has gone.
func runWithin(t *testing.T, args ...string) outcome {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := pipeRun(t, nil, args...)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		return outcomeOf(t, r.code, r.out, r.err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%v: still running after 30 s", args)
	}
	return outcome{}
}
