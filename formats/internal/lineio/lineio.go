// Package lineio reads the lines of the text history formats (text, AWDIT)
// with bounded memory: a line longer than the reader's buffer is cut and
// flagged rather than grown without limit.
package lineio

import (
	"bufio"
	"io"
)

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
