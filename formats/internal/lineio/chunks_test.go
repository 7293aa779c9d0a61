package lineio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

type numbered struct {
	line string
	no   int
}

// splitLines is the reference: the lines of data with their numbers, as
// a line reader gives them (each with its '\n').
func splitLines(data string) []numbered {
	var out []numbered
	for i, l := range strings.SplitAfter(data, "\n") {
		if l != "" {
			out = append(out, numbered{l, i + 1})
		}
	}
	return out
}

// TestChunkedLines: whatever the chunk size, workers and reads, Chunked
// builds every line once, in order, with its number; a read error comes
// after the whole lines before it; an error from build stops it.
func TestChunkedLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for round := range 400 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(strings.Repeat("x", rng.IntN(40)))
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[rng.IntN(3)])
		}
		if rng.IntN(2) == 0 {
			b.WriteString("last")
		}
		data := b.String()
		var r io.Reader = strings.NewReader(data)
		switch round % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		var readErr error
		want := splitLines(data)
		if round%5 == 4 && len(data) > 0 {
			// A read error after some bytes: the whole lines before it.
			cut := rng.IntN(len(data))
			readErr = errors.New("disk on fire")
			r = io.MultiReader(strings.NewReader(data[:cut]), iotest.ErrReader(readErr))
			want = splitLines(data[:strings.LastIndexByte(data[:cut], '\n')+1])
		}
		var got []numbered
		var lastErr error
		var end int64
		err := Chunked(r, 1+rng.IntN(100), 1+rng.IntN(3),
			func() func(*Chunk, *[]numbered) {
				return func(c *Chunk, out *[]numbered) {
					*out = (*out)[:0]
					c.Lines(func(line []byte, no int) { *out = append(*out, numbered{string(line), no}) })
				}
			},
			func(c *Chunk, out *[]numbered) error {
				require.Equal(t, end+int64(len(c.Data)), c.End)
				end = c.End
				got = append(got, *out...)
				lastErr = c.Err
				return c.Err
			})
		require.Equal(t, want, got, "round %d %q", round, data)
		require.Equal(t, readErr, err)
		require.Equal(t, readErr, lastErr)
	}
	// build's error stops the reading.
	stop := errors.New("stop")
	n := 0
	err := Chunked(bytes.NewReader(bytes.Repeat([]byte("line\n"), 10000)), 16, 2,
		func() func(*Chunk, *int) { return func(*Chunk, *int) {} },
		func(*Chunk, *int) error { n++; return stop })
	require.Equal(t, stop, err)
	require.Equal(t, 1, n)
}
