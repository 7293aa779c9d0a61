package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/history"
)

// The pipelined reader uses the second core: one goroutine reads lines and
// scans them into fields (lineScanner touches nothing shared) in batches,
// while the caller's goroutine builds the history from them in line order.
// Lines whose reading depends on what came before (a byte order mark is
// allowed on the first line only) or that fail the UTF-8 check are passed
// on raw and read by the sequential code, so both readers give the same
// history, warnings and errors.

// forceSequential disables the pipeline (tests compare the two).
var forceSequential bool

// parallelBatch is how many values the pipelined reader's builder
// interns at a time on two goroutines (history.Builder.SetParallel); a
// variable so that tests can make batches small.
var parallelBatch = history.ParallelBatch

func pipelined() bool { return !forceSequential && runtime.GOMAXPROCS(0) > 1 }

const (
	batchLines = 512 // lines per batch handed to the builder
	batchAhead = 4   // batches scanned ahead of the builder
	// firstBatch is the first batch's lines; each new batch holds twice
	// the last one's, up to batchLines, so that a small input does not
	// cost full batches (hundreds of kilobytes each).
	firstBatch = 16
)

type lineKind uint8

const (
	lineBlank lineKind = iota
	lineRaw            // read by the builder's goroutine, as readSequential does
	lineScanned
)

type scannedLine struct {
	no    int
	kind  lineKind
	raw   []byte // lineRaw: the line
	f     fields // lineScanned: what object read
	err   *scanErr
	warns []string
	other int
}

type batch struct {
	lines []scannedLine
	err   error // the read error that ended the input after these lines
	read  int64 // bytes of the input's lines up to these
}

func (p *parser) readPipelined(r io.Reader) error {
	full := make(chan *batch, batchAhead)
	free := make(chan *batch, batchAhead+2)
	var stop atomic.Bool
	go func() {
		defer close(full)
		scanAhead(r, p.opt, full, free, &stop)
	}()
	var err error
	for b := range full {
		if err == nil {
			err = p.buildBatch(b)
		}
		if err != nil {
			// Let the scanner stop, and wait for it: it must not read r
			// once Parse has returned.
			stop.Store(true)
		}
		select {
		case free <- b:
		default:
		}
	}
	return err
}

func (p *parser) buildBatch(b *batch) error {
	for i := range b.lines {
		sl := &b.lines[i]
		switch sl.kind {
		case lineRaw:
			if e := p.line(sl.raw, sl.no); e != nil {
				return e
			}
		case lineScanned:
			p.startLine(sl.no)
			// Swap rather than copy, so that buffers circulate.
			p.f, sl.f = sl.f, p.f
			p.warns, sl.warns = sl.warns, p.warns
			p.other = sl.other
			if e := p.endLine(p.scanned(sl.err)); e != nil {
				return e
			}
		}
	}
	if b.err != nil {
		return fmt.Errorf("%s: %w", p.name, b.err)
	}
	p.b.ReserveRest(b.read, p.size)
	return nil
}

// scanAhead reads r and sends its lines, scanned, in batches on full.
func scanAhead(r io.Reader, opt Options, full chan<- *batch, free <-chan *batch, stop *atomic.Bool) {
	lr := newLineReader(r)
	lr.lineOf = opt.LineOf
	ls := lineScanner{opt: opt}
	var b *batch
	size := firstBatch
	for !stop.Load() {
		if b == nil {
			select {
			case b = <-free:
			default:
			}
			if b != nil && cap(b.lines) >= size {
				b.lines, b.err = b.lines[:0], nil
			} else {
				// Smaller batches than size go: they were the first.
				b = &batch{lines: make([]scannedLine, 0, size)}
				size = min(2*size, batchLines)
			}
		}
		line, lineNo, err := lr.next()
		b.read = lr.read
		if err != nil {
			b.err = err
			full <- b
			return
		}
		if line == nil {
			break
		}
		b.lines = b.lines[:len(b.lines)+1]
		sl := &b.lines[len(b.lines)-1]
		sl.no = lineNo
		switch {
		case blank(line):
			sl.kind = lineBlank
		case !utf8.Valid(line) || bytes.HasPrefix(line, []byte("\ufeff")):
			sl.kind = lineRaw
			sl.raw = append(sl.raw[:0], line...)
		default:
			sl.kind = lineScanned
			ls.sc.reset(line)
			ls.warns, ls.other = ls.warns[:0], 0
			sl.err = nil
			if !ls.object() {
				sl.err = ls.sc.err
			}
			ls.f, sl.f = sl.f, ls.f
			ls.warns, sl.warns = sl.warns, ls.warns
			sl.other = ls.other
		}
		if len(b.lines) == cap(b.lines) {
			full <- b
			b = nil
		}
	}
	if b != nil && len(b.lines) > 0 {
		full <- b
	}
}
