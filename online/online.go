// Package online owns checking a history while it is still being written
// (hyperiso check --follow, collect --check): it takes a JSONL stream as
// it grows (a file being appended to, a pipe), keeps the verdict of every
// requested level on the prefix read so far, says when a violation is
// certain (no extension of the stream can undo it), and at the stream's
// end gives exactly the offline verdict of the whole history.
//
// Each check parses the window (the stream without what was folded away)
// afresh and hands it to package check. Without folding the window is the
// prefix, so its verdict is the offline verdict of the prefix by
// construction. With fences and unique values (docs/online.md, "Folding")
// the transactions before an exact cut are replaced by a T⊥ that writes
// each key's last version, which the fold proves gives the same verdict;
// memory then holds the transactions since about the last two cuts.
package online

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// Options configure a Checker.
type Options struct {
	// Name names the input in positions and errors.
	Name string
	// Levels are the levels checked; at least one.
	Levels []history.Level
	// Check are the options of every check.
	Check check.Options
	// Lenient reads the stream as jsonl's Lenient does.
	Lenient bool
	// Unique is the producer's promise that no (key, value) is written
	// twice in the stream, T⊥'s initial values included (collect
	// --unique keeps it). Only then can a violation be certain before
	// the stream ends: without it a later transaction may write a value
	// already read and so explain the read differently (docs/online.md).
	// A stream that breaks the promise is told (Status.Broken) and its
	// violations are certain only at its end.
	Unique bool
	// FenceKey, when FenceKeySet, is the key of the fence transactions
	// (collect --fence-every) that let the checker fold the history; the
	// header's metadata field "fence_key" sets it otherwise.
	FenceKey    int64
	FenceKeySet bool
	// NoFold keeps the whole history even where it could be folded.
	NoFold bool
}

// Level is the state of one level.
type Level struct {
	Level history.Level
	// Result is the verdict of the prefix last checked, as the offline
	// check of that prefix gives it; nil before the first check.
	Result *check.Result
	// Certain, once set, is a violation no extension of the stream can
	// undo, with its explanation (anomalies); CertainAt is how many
	// transactions had arrived when it was found.
	Certain   *check.Result
	CertainAt int
}

// Status is what a Checker knows after a check.
type Status struct {
	// Txns are the transactions read; Checked those of the prefix last
	// checked; Held those kept in memory (the others were folded away);
	// Open those of the window last checked that are not yet closed (a
	// read without its writer, or after such a transaction in its
	// session), counted only with Options.Unique.
	Txns, Checked, Held, Open int
	// Folded are the transactions folded away, at Cuts cuts; Keeping
	// says why the last check folded nothing (the whole history since
	// the last fold is kept), "" if it folded; FoldBroken, once set, why
	// verdicts not yet certain are
	// unknown from then on (a session that may precede folded
	// transactions).
	Folded, Cuts int
	Keeping      string
	FoldBroken   string
	// Fenced says the stream names a fence key (or Options does).
	Fenced bool
	// Bytes is the size of the stream read.
	Bytes int64
	// Levels are in the order of Options.Levels.
	Levels []Level
	// Ended says the stream is whole (its end line came, or Finish ran);
	// Final that the verdicts are those of the whole stream.
	Ended, Final bool
	// Broken names where the stream broke the promise of unique values
	// (Options.Unique), if it did.
	Broken string
}

// Checker follows one stream. Write may be called from one goroutine
// while Check runs on another.
type Checker struct {
	opt Options

	mu       sync.Mutex
	buf      []byte     // the whole lines read so far
	partial  []byte     // the last line, still unfinished
	lines    []lineInfo // one per line of buf
	txns     int
	lineNo   int  // lines read
	counted  int  // non-blank lines before the end line
	others   int  // init, aborted_writes and version_order lines
	folded   bool // lines without an id are given one as they come
	nonBlank bool // a non-blank line was read
	promised bool // the header promises an end line
	ended    bool // the end line was read

	status Status // guarded by checkMu
	fold   folder // guarded by checkMu
	// checkMu keeps checks one at a time.
	checkMu sync.Mutex
}

// New returns a Checker of the stream opt describes.
func New(opt Options) (*Checker, error) {
	if len(opt.Levels) == 0 {
		return nil, errors.New("online: no level to check")
	}
	c := &Checker{opt: opt}
	c.status.Levels = make([]Level, len(opt.Levels))
	for i, l := range opt.Levels {
		c.status.Levels[i].Level = l
	}
	return c, nil
}

// Write adds bytes of the stream; a line counts once its newline came.
func (c *Checker) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.partial = append(c.partial, p...)
			break
		}
		var line []byte
		if len(c.partial) > 0 {
			c.partial = append(c.partial, p[:i+1]...)
			line = c.partial
		} else {
			line = p[:i+1]
		}
		c.addLine(line)
		c.partial = c.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// addLine appends one whole line (with its newline) to buf.
func (c *Checker) addLine(line []byte) {
	info, promised := classify(line, !c.nonBlank)
	info.start = len(c.buf)
	c.lineNo++
	info.no = c.lineNo
	switch info.kind {
	case lineBlank:
	case lineHeader:
		c.promised = promised
		c.counted++
	case lineTxn:
		c.txns++
		info.ord = c.txns
		c.counted++
		if c.folded && !info.hasID {
			// Its place among the window's lines is not its place in
			// the stream, which gives it its id.
			line, info.hasID = withID(line, info.ord), true
		}
	case lineEnd:
		c.ended = true
	default:
		c.others++
		c.counted++
	}
	c.buf = append(c.buf, line...)
	c.lines = append(c.lines, info)
	if info.kind == lineBlank {
		return
	}
	c.nonBlank = true
}

// Ended says the end line was read.
func (c *Checker) Ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// Waits says a stream that reached the end of what was written so far
// is not whole yet: its header promised an end line that has not come,
// or no line came at all. A growing file is followed until it does not.
func (c *Checker) Waits() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.nonBlank || c.promised && !c.ended
}

// Txns is the number of transaction lines read.
func (c *Checker) Txns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txns
}

// snapshot is the stream as it stands: buf only grows at its end, so the
// slices stay valid while Write goes on.
type snapshot struct {
	buf   []byte
	lines []lineInfo
	txns  int
	ended bool
}

func (c *Checker) snapshot() snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return snapshot{buf: c.buf[:len(c.buf):len(c.buf)], lines: c.lines[:len(c.lines):len(c.lines)], txns: c.txns, ended: c.ended}
}

// Status returns the state after the last check.
func (c *Checker) Status() Status {
	c.checkMu.Lock()
	defer c.checkMu.Unlock()
	return c.copyStatus()
}

func (c *Checker) copyStatus() Status {
	s := c.status
	s.Levels = append([]Level(nil), c.status.Levels...)
	c.mu.Lock()
	s.Txns, s.Held, s.Bytes = c.txns, c.txns-c.fold.txns, int64(len(c.buf)+len(c.partial))
	s.Folded, s.Cuts, s.FoldBroken = c.fold.txns, c.fold.cuts, c.fold.broken
	c.mu.Unlock()
	return s
}

// Check checks the prefix read so far at every level (nothing if no
// transaction came since the last check) and returns the state. An error
// is bad input (named by file and line) or a failed check; a level that
// the prefix cannot be checked at yet (nothing committed so far, no real
// time yet) keeps an unknown verdict with the reason until it can. When
// every level not yet settled is satisfied, the window is folded at its
// latest cut that allows it (fold.go).
func (c *Checker) Check(ctx context.Context) (Status, error) {
	c.checkMu.Lock()
	defer c.checkMu.Unlock()
	snap := c.snapshot()
	if snap.txns == 0 || snap.txns == c.status.Checked && c.status.Levels[0].Result != nil {
		return c.copyStatus(), nil
	}
	if snap.ended {
		return c.finish(ctx, snap)
	}
	h, err := c.parse(snap.buf, snap.lines, true)
	if err != nil {
		return c.copyStatus(), err
	}
	c.status.Checked = snap.txns
	c.newSessions(h)
	var cl *closure
	var closedH *history.History
	if c.opt.Unique && c.status.Broken == "" && c.fold.broken == "" {
		cc := closeOver(h)
		cl = &cc
		c.status.Open = cl.open
		if cl.dup {
			c.status.Broken = fmt.Sprintf("%s: a value written a second time (transaction %s); violations are certain only at the end of the stream", h.Txns[cl.dupTxn].Pos, h.TxnString(cl.dupTxn))
			cl = nil
		}
	}
	allSatisfied := true
	for i := range c.status.Levels {
		lv := &c.status.Levels[i]
		if lv.Certain != nil { // settled: every extension violates it
			lv.Result = lv.Certain
			continue
		}
		res, err := check.Check(ctx, h, lv.Level, c.opt.Check)
		if err != nil {
			if !errors.Is(err, check.ErrInput) {
				return c.copyStatus(), err
			}
			res.Verdict, res.Reason = check.Unknown, "not checkable yet: "+err.Error()
		}
		lv.Result = res
		if res.Verdict != check.Satisfied {
			allSatisfied = false
		}
		if res.Verdict != check.Violated || cl == nil {
			continue
		}
		if cl.open == 0 {
			lv.Certain, lv.CertainAt = res, snap.txns
			continue
		}
		if cl.rows {
			continue
		}
		if closedH == nil {
			sub := closedLines(snap, h, cl)
			if closedH, err = c.parse(sub, snap.lines, true); err != nil {
				return c.copyStatus(), fmt.Errorf("online: the closed part of the stream does not read back: %w", err)
			}
		}
		cres, err := check.Check(ctx, closedH, lv.Level, c.opt.Check)
		if err == nil && cres.Verdict == check.Violated {
			lv.Certain, lv.CertainAt = cres, snap.txns
		}
	}
	c.foldBroken()
	_, fenced := h.Meta[FenceKeyMeta]
	c.status.Fenced = fenced || c.opt.FenceKeySet
	if allSatisfied {
		c.tryFold(h, snap)
	} else {
		c.status.Keeping = "a level is not satisfied by the window (yet)"
	}
	return c.copyStatus(), nil
}

// parse reads buf, whose lines are lines, naming each by its number in
// the whole stream.
func (c *Checker) parse(buf []byte, lines []lineInfo, prefix bool) (*history.History, error) {
	return jsonl.Parse(bytes.NewReader(buf), c.opt.Name, jsonl.Options{Lenient: c.opt.Lenient, Prefix: prefix,
		LineOf: func(n int) int {
			if n-1 < len(lines) {
				return lines[n-1].no
			}
			return n
		}})
}

// foldBroken turns the verdicts not yet certain into unknowns once a fold
// can no longer stand for the past (FoldBroken).
func (c *Checker) foldBroken() {
	if c.fold.broken == "" {
		return
	}
	for i := range c.status.Levels {
		lv := &c.status.Levels[i]
		if lv.Certain == nil && lv.Result != nil {
			r := *lv.Result
			r.Verdict, r.Reason, r.Anomalies = check.Unknown, "the history was folded, and then "+c.fold.broken, nil
			lv.Result = &r
		}
	}
}

// Finish checks the whole stream once its input ended (whether or not
// its end line came): the offline check of the stream as read, every
// violation certain.
func (c *Checker) Finish(ctx context.Context) (Status, error) {
	c.checkMu.Lock()
	defer c.checkMu.Unlock()
	c.mu.Lock()
	if len(c.partial) > 0 { // a last line without its newline
		c.addLine(append(c.partial, '\n'))
		c.partial = nil
	}
	c.mu.Unlock()
	return c.finish(ctx, c.snapshot())
}

// A stream whose end line came is read as a prefix would be (Prefix):
// the end line is checked all the same, and a header still saying
// "incomplete" is one a recorder completes in its file after the end
// line (collect --check sees the lines, not that rewrite). A folded
// stream's end line counts what was folded away too: it is checked here
// (endLine), and the window read without it.
func (c *Checker) finish(ctx context.Context, snap snapshot) (Status, error) {
	buf, lines := snap.buf, snap.lines
	var endAt = -1
	if c.fold.txns > 0 {
		for i, ln := range lines {
			if ln.kind == lineEnd {
				endAt = i
				buf, lines = snap.buf[:ln.start], lines[:i]
				break
			}
		}
	}
	h, err := c.parse(buf, lines, snap.ended)
	if err != nil {
		return c.copyStatus(), err
	}
	if endAt >= 0 {
		if err := c.endLine(snap, endAt, h); err != nil {
			return c.copyStatus(), err
		}
	}
	c.status.Checked, c.status.Ended, c.status.Final, c.status.Open = snap.txns, true, true, 0
	for i := range c.status.Levels {
		lv := &c.status.Levels[i]
		if lv.Certain != nil && c.fold.txns > 0 {
			lv.Result = lv.Certain // the window alone no longer shows it
			continue
		}
		res, err := check.Check(ctx, h, lv.Level, c.opt.Check)
		if err != nil {
			return c.copyStatus(), err
		}
		lv.Result = res
		if res.Verdict == check.Violated && lv.Certain == nil && c.fold.broken == "" {
			lv.Certain, lv.CertainAt = res, snap.txns
		}
	}
	c.foldBroken()
	return c.copyStatus(), nil
}

// closedLines is the stream without the transactions the closure left
// out: every other line as it came, a kept transaction line without an
// id given the id its place in the whole stream gave it.
func closedLines(snap snapshot, h *history.History, cl *closure) []byte {
	drop := make(map[int]bool, cl.open) // line numbers in the stream
	for t := 1; t < len(h.Txns); t++ {
		if !cl.keep[t] {
			drop[h.Txns[t].Pos.Line] = true
		}
	}
	out := make([]byte, 0, len(snap.buf))
	dropped := false
	for i, ln := range snap.lines {
		end := len(snap.buf)
		if i+1 < len(snap.lines) {
			end = snap.lines[i+1].start
		}
		line := snap.buf[ln.start:end]
		if ln.kind == lineTxn {
			if drop[ln.no] {
				dropped = true
				out = append(out, '\n') // keep line numbers
				continue
			}
			if dropped && !ln.hasID {
				if j := bytes.IndexByte(line, '{'); j >= 0 {
					out = append(out, line[:j+1]...)
					out = append(out, `"id":`...)
					out = strconv.AppendInt(out, int64(ln.ord), 10)
					out = append(out, ',')
					line = line[j+1:]
				}
			}
		}
		out = append(out, line...)
	}
	return out
}
