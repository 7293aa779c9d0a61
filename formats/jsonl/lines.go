package jsonl

import (
	"bufio"
	"io"
)

// lineReader yields the lines of r with their numbers; a line longer than
// the buffer is gathered whole.
type lineReader struct {
	br     *bufio.Reader
	long   []byte
	lineNo int
	eof    bool
	read   int64 // bytes of the lines so far
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line (valid until the following call) and its
// number, or nil at the end of the input.
func (lr *lineReader) next() ([]byte, int, error) {
	if lr.eof {
		return nil, 0, nil
	}
	line, err := lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = lr.br.ReadSlice('\n')
			lr.long = append(lr.long, line...)
		}
		line = lr.long
	}
	if err != nil && err != io.EOF {
		return nil, 0, err
	}
	if err == io.EOF {
		lr.eof = true
		if len(line) == 0 {
			return nil, 0, nil
		}
	}
	lr.lineNo++
	lr.read += int64(len(line))
	return line, lr.lineNo, nil
}

func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
