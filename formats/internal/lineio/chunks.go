package lineio

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
)

// Chunk is a run of whole lines of an input, as Chunked reads it.
type Chunk struct {
	Data      []byte
	FirstLine int   // the number of Data's first line
	End       int64 // bytes of the input up to Data's end
	Err       error // the read error that ended the input after Data
}

// chunk is a Chunk with what a worker made of it (T, reused from chunk
// to chunk) and the signal that it is made.
type chunk[T any] struct {
	Chunk
	out  T
	done chan struct{}
}

// Chunked reads r in chunks of whole lines of at least size bytes (a line
// longer than that makes its chunk longer) on one goroutine, has workers
// goroutines scan them at once (newScan makes each worker's scan, which
// may keep its own state), and calls build on each, in input order, on
// the caller's goroutine. It returns build's first error, after which it
// reads no further, and returns only once nothing reads r any more. Lines
// are numbered from 1 as a line reader numbers them: each '\n' ends one,
// and a last line without it is a line too.
func Chunked[T any](r io.Reader, size, workers int, newScan func() func(*Chunk, *T), build func(*Chunk, *T) error) error {
	inFlight := 2*workers + 2
	work := make(chan *chunk[T], inFlight)
	order := make(chan *chunk[T], inFlight)
	free := make(chan *chunk[T], inFlight)
	for range inFlight {
		free <- &chunk[T]{done: make(chan struct{}, 1)}
	}
	var stop atomic.Bool
	go func() {
		defer close(order)
		defer close(work)
		readChunks(r, size, free, work, order, &stop)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			scan := newScan()
			for c := range work {
				if !stop.Load() {
					scan(&c.Chunk, &c.out)
				}
				c.done <- struct{}{}
			}
		})
	}
	var err error
	for c := range order {
		<-c.done
		if err == nil {
			if err = build(&c.Chunk, &c.out); err != nil {
				stop.Store(true)
			}
		}
		free <- c
	}
	wg.Wait()
	return err
}

// readChunks reads r into chunks of whole lines, sent in order to work
// (for a worker) and order (for the builder).
func readChunks[T any](r io.Reader, size int, free <-chan *chunk[T], work, order chan<- *chunk[T], stop *atomic.Bool) {
	var carry []byte // the start of a line the last chunk did not end
	line := 1
	var read int64
	for !stop.Load() {
		c := <-free
		buf := append(c.Data[:0], carry...)
		// Read at least size bytes, and on until a line ends.
		var err error
		cut := -1
		for err == nil && (len(buf) < size || cut < 0) {
			if cap(buf)-len(buf) <= size/2 {
				buf = append(buf, make([]byte, max(size, cap(buf)))...)[:len(buf)]
			}
			var n int
			n, err = r.Read(buf[len(buf):cap(buf)])
			if i := bytes.LastIndexByte(buf[len(buf):len(buf)+n], '\n'); i >= 0 {
				cut = len(buf) + i + 1
			}
			buf = buf[:len(buf)+n]
		}
		c.Err = nil
		switch {
		case err == io.EOF:
			cut = len(buf)
		case err != nil:
			// What a line reader would have given before the error:
			// the whole lines; the rest of a line is lost.
			c.Err = err
			cut = max(cut, 0)
		}
		carry = append(carry[:0], buf[cut:]...)
		c.Data = buf[:cut]
		c.FirstLine = line
		line += bytes.Count(c.Data, []byte{'\n'})
		if cut > 0 && c.Data[cut-1] != '\n' {
			line++ // the last line, without its newline
		}
		read += int64(cut)
		c.End = read
		work <- c
		order <- c
		if err != nil {
			return
		}
	}
}

// Lines calls f for each line of c with its number, the line including
// its '\n' if it has one.
func (c *Chunk) Lines(f func(line []byte, no int)) {
	no := c.FirstLine
	for lo := 0; lo < len(c.Data); no++ {
		hi := len(c.Data)
		if i := bytes.IndexByte(c.Data[lo:], '\n'); i >= 0 {
			hi = lo + i + 1
		}
		f(c.Data[lo:hi], no)
		lo = hi
	}
}
