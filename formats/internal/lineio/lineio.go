// Package lineio reads the lines of the line-based history formats (text,
// AWDIT) with bounded memory: a line longer than the reader's buffer is cut
// and flagged rather than grown without limit. It also tells the readers
// how large an input is, when that is known (SizeOf).
package lineio

import (
	"bufio"
	"io"
	"os"
)

// SizeOf is what r holds, if it is a regular file (-1 otherwise): a hint
// for reserving room, never relied on (a pipe or standard input has none).
func SizeOf(r io.Reader) int64 {
	f, ok := r.(*os.File)
	if !ok {
		return -1
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return -1
	}
	return st.Size()
}

// keep is how much of an overlong line is kept for the error message.
const keep = 200

// ReadLine returns the next line without its terminator ("\n" or "\r\n").
// A line longer than br's buffer is truncated to its first bytes and
// reported as tooLong. At the end of input it returns io.EOF; a last line
// without a terminator is still a line.
func ReadLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	line, err = br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		line = append([]byte(nil), line[:min(keep, len(line))]...)
		tooLong = true
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
	}
	return finish(line, tooLong, err)
}

// ReadLongLine is ReadLine for formats whose lines may outgrow any buffer
// (one JSON transaction per line: an initial state over millions of keys):
// the line grows up to max bytes before it is cut and reported as tooLong.
func ReadLongLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	frag, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return finish(frag, false, err)
	}
	buf := append([]byte(nil), frag...)
	for err == bufio.ErrBufferFull {
		frag, err = br.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, frag...)
			if len(buf) > max {
				buf, tooLong = buf[:keep], true
			}
		}
	}
	return finish(buf, tooLong, err)
}

// finish ends a line read: a last line without a terminator is still a
// line, and the terminator is dropped.
func finish(line []byte, tooLong bool, err error) ([]byte, bool, error) {
	switch {
	case err == io.EOF && (len(line) > 0 || tooLong):
		err = nil
	case err != nil:
		return nil, false, err
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line, tooLong, nil
}

// Tail reads through R and remembers the last byte it gave, so that a
// reader can tell whether its input ended with a newline (a line format
// whose last line may be cut inside a number has no other sign of it).
type Tail struct {
	R    io.Reader
	Last byte  // the last byte read
	N    int64 // bytes read
}

func (t *Tail) Read(p []byte) (int, error) {
	n, err := t.R.Read(p)
	if n > 0 {
		t.Last = p[n-1]
		t.N += int64(n)
	}
	return n, err
}
