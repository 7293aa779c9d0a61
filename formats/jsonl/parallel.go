package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/history"
)

// The parallel reader scans on every core. One goroutine reads the input
// in chunks of whole lines and numbers them; workers scan chunks at once,
// each into its own flat arrays: a plain transaction line (integer reads,
// writes and appends, no other field than a transaction's) becomes a
// record and its raw operations, any other line is kept as its bytes.
// The caller's goroutine builds the history from the chunks in file
// order: records go to the builder without being scanned again, the other
// lines (headers, init lines, names, lists, bad lines) and any record
// that would fail are read by the sequential code, so both readers give
// the same history, warnings and errors.

// forceSequential disables the parallel reader (tests compare the two).
var forceSequential bool

// parallelBatch is how many values the parallel reader's builder interns
// at a time on two goroutines (history.Builder.SetParallel); a variable so
// that tests can make batches small.
var parallelBatch = history.ParallelBatch

// chunkSize is how many bytes a chunk reads at least (a line longer than
// that makes its chunk longer); a variable so that tests can make chunks
// meet anywhere.
var chunkSize = 1 << 19

func pipelined() bool { return !forceSequential && runtime.GOMAXPROCS(0) > 1 }

// chunk is a run of whole lines of the input and what a worker made of
// them.
type chunk struct {
	data      []byte
	firstLine int   // the number of data's first line
	end       int64 // bytes of the input up to data's end
	err       error // the read error that ended the input after data
	recs      []lineRec
	ops       []history.RawOp
	done      chan struct{}
}

// lineRec is one non-blank line of a chunk: a plain transaction line
// (fast) with its fields and its operations ops[opLo:opHi], or a line
// for the sequential code; either way data[lo:hi] is the line.
type lineRec struct {
	no         int
	lo, hi     int
	opLo, opHi int
	fast       bool
	hasID      bool
	hasTime    bool
	status     history.Status
	level      history.Level
	session    int64
	id         int64
	t0, t1     int64
}

func (p *parser) readPipelined(r io.Reader) error {
	workers := runtime.GOMAXPROCS(0)
	inFlight := 2*workers + 2
	work := make(chan *chunk, inFlight)
	order := make(chan *chunk, inFlight)
	free := make(chan *chunk, inFlight)
	for range inFlight {
		free <- &chunk{done: make(chan struct{}, 1)}
	}
	var stop atomic.Bool
	go func() {
		defer close(order)
		defer close(work)
		readChunks(r, free, work, order, &stop)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ls := lineScanner{opt: p.opt}
			for c := range work {
				if !stop.Load() {
					ls.scanChunk(c)
				}
				c.done <- struct{}{}
			}
		})
	}
	var err error
	for c := range order {
		<-c.done
		if err == nil {
			err = p.buildChunk(c)
			if err != nil {
				// Let the reader stop, and wait for it: it must not
				// read r once Parse has returned.
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
func readChunks(r io.Reader, free <-chan *chunk, work, order chan<- *chunk, stop *atomic.Bool) {
	var carry []byte // the start of a line the last chunk did not end
	line := 1
	var read int64
	for !stop.Load() {
		c := <-free
		buf := append(c.data[:0], carry...)
		// Read at least chunkSize bytes, and on until a line ends.
		var err error
		cut := -1
		for err == nil && (len(buf) < chunkSize || cut < 0) {
			if cap(buf)-len(buf) <= chunkSize/2 {
				buf = append(buf, make([]byte, max(chunkSize, cap(buf)))...)[:len(buf)]
			}
			var n int
			n, err = r.Read(buf[len(buf):cap(buf)])
			if i := bytes.LastIndexByte(buf[len(buf):len(buf)+n], '\n'); i >= 0 {
				cut = len(buf) + i + 1
			}
			buf = buf[:len(buf)+n]
		}
		c.err = nil
		switch {
		case err == io.EOF:
			cut = len(buf)
		case err != nil:
			// What a line reader would have given before the error:
			// the whole lines; the rest of a line is lost.
			c.err = err
			cut = max(cut, 0)
		}
		carry = append(carry[:0], buf[cut:]...)
		c.data = buf[:cut]
		c.firstLine = line
		line += bytes.Count(c.data, []byte{'\n'})
		if cut > 0 && c.data[cut-1] != '\n' {
			line++ // the last line, without its newline
		}
		read += int64(cut)
		c.end = read
		work <- c
		order <- c
		if err != nil {
			return
		}
	}
}

// scanChunk scans c's lines into c.recs and c.ops.
func (ls *lineScanner) scanChunk(c *chunk) {
	c.recs, c.ops = c.recs[:0], c.ops[:0]
	no := c.firstLine
	for lo := 0; lo < len(c.data); no++ {
		hi := len(c.data)
		if i := bytes.IndexByte(c.data[lo:], '\n'); i >= 0 {
			hi = lo + i + 1
		}
		line := c.data[lo:hi]
		if !blank(line) {
			c.recs = append(c.recs, lineRec{no: no, lo: lo, hi: hi})
			ls.scanRec(line, &c.recs[len(c.recs)-1], &c.ops)
		}
		lo = hi
	}
}

// scanRec makes rec fast if line is a plain transaction line, appending
// its operations to ops.
func (ls *lineScanner) scanRec(line []byte, rec *lineRec, ops *[]history.RawOp) {
	if fastTxnLine(line, rec, ops) {
		return
	}
	if !utf8.Valid(line) || bytes.HasPrefix(line, []byte("\ufeff")) {
		return
	}
	ls.sc.reset(line)
	ls.warns, ls.other = ls.warns[:0], 0
	f := &ls.f
	if !ls.object() || len(ls.warns) > 0 || ls.other > 0 ||
		f.has&^txnFields != 0 || f.has&fSession == 0 || f.has&fOps == 0 {
		return
	}
	lo := len(*ops)
	for _, op := range f.ops {
		if op.kname != 0 || op.vname != 0 || op.kind == history.OpReadList || op.src != history.SrcPlain {
			*ops = (*ops)[:lo]
			return
		}
		*ops = append(*ops, history.RawOp{Kind: op.kind, Key: op.key, Value: op.val})
	}
	*rec = lineRec{
		no: rec.no, lo: rec.lo, hi: rec.hi, opLo: lo, opHi: len(*ops), fast: true,
		hasID: f.has&fID != 0, hasTime: f.has&fTime != 0,
		status: f.status, level: f.level, session: f.session, id: f.id,
	}
	if rec.hasTime {
		rec.t0, rec.t1 = f.time[0], f.time[1]
	}
}

// buildChunk builds c's lines, in order.
func (p *parser) buildChunk(c *chunk) error {
	for i := range c.recs {
		rec := &c.recs[i]
		if !rec.fast || !p.fastTxn(rec, c.ops[rec.opLo:rec.opHi]) {
			if e := p.line(c.data[rec.lo:rec.hi], rec.no); e != nil {
				return e
			}
		}
	}
	if c.err != nil {
		return fmt.Errorf("%s: %w", p.name, c.err)
	}
	p.b.ReserveRest(c.end, p.size)
	return nil
}

// fastTxn is scanned and txn for a plain transaction line that a worker
// has scanned: it adds the transaction and reports true, unless the line
// would fail (after the end line, a duplicate id), which it leaves to the
// sequential code, untouched, for the same error or warning.
func (p *parser) fastTxn(rec *lineRec, ops []history.RawOp) bool {
	id := int64(p.txns + 1)
	if rec.hasID {
		id = rec.id
	}
	if _, dup := p.ids.get(id); dup || p.ended {
		return false
	}
	p.startLine(rec.no)
	p.parsed = true
	var t [2]int64
	if rec.hasTime {
		t = [2]int64{rec.t0, rec.t1}
	}
	tx, track := p.beginTxn(id, rec.session, len(ops), rec.status, rec.level, rec.hasTime, t)
	p.addRawOps(tx, id, track, ops)
	_ = p.endLine(nil)
	return true
}
