package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/formats/internal/lineio"
	"github.com/hyperiso/hyperiso/history"
)

// The parallel reader scans on every core. One goroutine reads the input
// in chunks of whole lines and numbers them (lineio.Chunked); workers
// scan chunks at once, each into its own flat arrays: a plain transaction
// line (integer reads, writes and appends, no other field than a
// transaction's) becomes a record and its raw operations, any other line
// is kept as its place in the chunk.
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

// scanned is what a worker made of a chunk.
type scanned struct {
	recs []lineRec
	ops  []history.RawOp
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
	newScan := func() func(*lineio.Chunk, *scanned) {
		ls := lineScanner{opt: p.opt}
		return ls.scanChunk
	}
	return lineio.Chunked(r, chunkSize, runtime.GOMAXPROCS(0), newScan, p.buildChunk)
}

// scanChunk scans c's lines into out.
func (ls *lineScanner) scanChunk(c *lineio.Chunk, out *scanned) {
	out.recs, out.ops = out.recs[:0], out.ops[:0]
	lo := 0
	c.Lines(func(line []byte, no int) {
		if !blank(line) {
			out.recs = append(out.recs, lineRec{no: no, lo: lo, hi: lo + len(line)})
			ls.scanRec(line, &out.recs[len(out.recs)-1], &out.ops)
		}
		lo += len(line)
	})
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
func (p *parser) buildChunk(c *lineio.Chunk, sc *scanned) error {
	for i := range sc.recs {
		rec := &sc.recs[i]
		if !rec.fast || !p.fastTxn(rec, sc.ops[rec.opLo:rec.opHi]) {
			if e := p.line(c.Data[rec.lo:rec.hi], rec.no); e != nil {
				return e
			}
		}
	}
	if c.Err != nil {
		return fmt.Errorf("%s: %w", p.name, c.Err)
	}
	p.b.ReserveRest(c.End, p.size)
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
