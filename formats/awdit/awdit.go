// Package awdit reads the AWDIT `test` history format (docs/formats.md):
// lines `r <key> <value>` and `w <key> <value>`, transactions separated by
// a line of `-` characters and sessions by a line of `=` characters. It
// owns the syntax, the mapping onto history.History (session ids 0,1,2…
// and transaction ids 1,2,… in file order, everything committed) and the
// initial-state rule: a first session made of a single transaction that
// only writes 0 is the explicit initial transaction; otherwise there is no
// initial state, as in AWDIT, whose test files carry their own.
package awdit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/formats/internal/lineio"
	"github.com/hyperiso/hyperiso/history"
)

// Format is the name recorded in History.Format.
const Format = "awdit"

// Options controls the reader.
type Options struct {
	// Lenient skips a malformed line with a warning instead of failing,
	// ignores fields after the third (as AWDIT does) with a warning, and
	// yields an empty history for an input without operations.
	Lenient bool
}

// Read reads the AWDIT test history in the file at path.
func Read(path string, opt Options) (*history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path, opt)
}

// maxLine bounds the bytes kept of one line; longer lines are only quoted.
const maxLine = 64 << 10

type op struct {
	write    bool
	key, val int64
}

type parser struct {
	name string
	opt  Options
	b    *history.Builder
	w    *history.WarningLog

	cur      []op // operations of the open transaction
	curLine  int  // line of its first operation
	sessTxns int  // non-empty transactions closed in the open session
	sess     int32
	nextSess int64
	nextTxn  int64

	// The first transaction of the first session is held back until the
	// session ends, since only then is it known whether it is the initial
	// transaction.
	held     []op
	heldLine int
	holding  bool
	first    bool // still in the first non-empty session

	raw []history.RawOp // a transaction's operations, for the builder
}

// Parse reads an AWDIT test history from r; name is used in positions and
// errors.
func Parse(r io.Reader, name string, opt Options) (*history.History, error) {
	p := &parser{
		name:    name,
		opt:     opt,
		b:       history.NewBuilder(name, Format),
		w:       &history.WarningLog{},
		sess:    -1,
		nextTxn: 1,
		first:   true,
	}
	if runtime.GOMAXPROCS(0) > 1 {
		p.b.SetParallel(parallelBatch)
	}
	// Room is reserved from the input's size as judged from its second
	// megabyte (Builder.ReserveWindow), not from its start: the first is
	// mostly the initial transaction's short lines, which would make the
	// rest look like many more operations than it holds.
	size := lineio.SizeOf(r)
	tail := &lineio.Tail{R: r}
	br := bufio.NewReaderSize(tail, maxLine)
	lineNo, lastBlank := 0, true
	for {
		line, tooLong, err := lineio.ReadLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		lineNo++
		lastBlank = !tooLong && len(bytes.TrimSpace(line)) == 0
		if err := p.line(line, tooLong, lineNo); err != nil {
			return nil, err
		}
		p.b.ReserveWindow(tail.N, size)
	}
	// The format shows no end: a file cut inside its last number reads as
	// a smaller number. A final newline is the one sign that the last line
	// is whole.
	if tail.N > 0 && tail.Last != '\n' && !lastBlank {
		pos := history.Pos{File: name, Line: lineNo}
		const msg = "the file does not end with a newline: the file may have been cut inside its last number"
		if !opt.Lenient {
			return nil, history.Errorf(pos, "%s; if it is complete, add a final newline, or read it with --lenient", msg)
		}
		p.w.Add("end", pos, "%s; read as it is", msg)
	}
	p.endSession()
	if p.nextTxn == 1 {
		pos := history.Pos{File: name, Line: max(lineNo, 1)}
		if !opt.Lenient {
			return nil, history.Errorf(pos, "no operations: expected lines \"r <key> <value>\" or \"w <key> <value>\"")
		}
		p.w.Add("empty", pos, "no operations")
	}
	h := p.b.Finish()
	semanticWarnings(h, p.w)
	h.Warnings = append(h.Warnings, p.w.Done()...)
	return h, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// fields splits a line at ASCII whitespace into at most 4 fields; n is the
// number of fields found (up to 4, more count as 4).
func fields(s []byte) (f [4][]byte, n int) {
	i := 0
	for n < 4 {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		start := i
		for i < len(s) && !isSpace(s[i]) {
			i++
		}
		f[n] = s[start:i]
		n++
	}
	return f, n
}

func all(s []byte, c byte) bool {
	for _, x := range s {
		if x != c {
			return false
		}
	}
	return true
}

func parseUint(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	return u, true
}

func quote(s []byte) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q...", s[:80])
	}
	return fmt.Sprintf("%q", s)
}

const want = `(want "r <key> <value>", "w <key> <value>", a line of "-" or a line of "=")`

// fastOp reads a line that is exactly "r K V" or "w K V" — single spaces,
// a key and a value of at most 19 digits, which cannot overflow — the
// common case, without splitting it into fields; any other line is left to
// the general reading, which gives the same for these.
func fastOp(s []byte) (o op, ok bool) {
	if len(s) < 5 || s[1] != ' ' {
		return o, false
	}
	switch s[0] {
	case 'r':
	case 'w':
		o.write = true
	default:
		return o, false
	}
	k, i, ok := digits(s, 2)
	if !ok || i >= len(s) || s[i] != ' ' {
		return o, false
	}
	v, i, ok := digits(s, i+1)
	if !ok || i != len(s) {
		return o, false
	}
	o.key, o.val = int64(k), int64(v)
	return o, true
}

// digits reads 1 to 19 decimal digits at s[i:].
func digits(s []byte, i int) (uint64, int, bool) {
	start := i
	var u uint64
	for i < len(s) && s[i]-'0' < 10 {
		u = u*10 + uint64(s[i]-'0')
		i++
	}
	return u, i, i > start && i-start <= 19
}

func (p *parser) line(s []byte, tooLong bool, lineNo int) error {
	if !tooLong {
		if o, ok := fastOp(s); ok {
			if len(p.cur) == 0 {
				p.curLine = lineNo
			}
			p.cur = append(p.cur, o)
			return nil
		}
	}
	pos := history.Pos{File: p.name, Line: lineNo}
	// isOp: the line has the shape of an operation ("r" or "w" first).
	isOp := false
	bad := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if !p.opt.Lenient {
			return history.Errorf(pos, "%s", msg)
		}
		p.w.Add("skipped", pos, "line skipped: %s", msg)
		if isOp {
			p.b.Drop(history.Dropped{Ops: 1})
		} else {
			p.b.Drop(history.Dropped{Other: 1})
		}
		return nil
	}
	if tooLong {
		return bad("line longer than %d bytes: %s", maxLine, quote(s))
	}
	if !utf8.Valid(s) {
		return bad("line is not valid UTF-8: %s", quote(s))
	}
	f, n := fields(s)
	isOp = n > 0 && (string(f[0]) == "r" || string(f[0]) == "w")
	switch {
	case n == 0:
		return nil
	case n == 1 && all(f[0], '='):
		p.endSession()
		return nil
	case n == 1 && all(f[0], '-'):
		p.endTxn()
		return nil
	case f[0][0] == '=' || f[0][0] == '-':
		return bad("a separator line must consist only of \"=\" or only of \"-\", found %s", quote(s))
	case n < 3:
		return bad("expected 3 fields, found %d in %s %s", n, quote(s), want)
	}
	var o op
	switch string(f[0]) {
	case "r":
	case "w":
		o.write = true
	default:
		return bad("expected \"r\" or \"w\", found %s %s", quote(f[0]), want)
	}
	k, ok := parseUint(f[1])
	if !ok {
		return bad("key %s is not an unsigned 64-bit decimal integer in %s", quote(f[1]), quote(s))
	}
	v, ok := parseUint(f[2])
	if !ok {
		return bad("value %s is not an unsigned 64-bit decimal integer in %s", quote(f[2]), quote(s))
	}
	if n > 3 {
		if !p.opt.Lenient {
			return history.Errorf(pos, "expected 3 fields, found more in %s %s", quote(s), want)
		}
		p.w.Add("extra", pos, "fields after the third ignored in %s", quote(s))
		p.b.Drop(history.Dropped{Other: 1})
	}
	// Keys and values are 64-bit: keep all bits (docs/formats.md).
	o.key, o.val = int64(k), int64(v)
	if len(p.cur) == 0 {
		p.curLine = lineNo
	}
	p.cur = append(p.cur, o)
	return nil
}

// endTxn closes the open transaction; empty ones are skipped, as in AWDIT.
func (p *parser) endTxn() {
	if len(p.cur) == 0 {
		return
	}
	switch {
	case p.first && p.sessTxns == 0:
		p.held = append(p.held[:0], p.cur...)
		p.heldLine = p.curLine
		p.holding = true
	case p.holding:
		// The first session has a second transaction: the held one is
		// ordinary.
		p.emit(p.held, p.heldLine, false)
		p.holding = false
		fallthrough
	default:
		p.emit(p.cur, p.curLine, false)
	}
	p.sessTxns++
	p.cur = p.cur[:0]
}

// endSession closes the open session; empty ones are skipped.
func (p *parser) endSession() {
	p.endTxn()
	if p.sessTxns == 0 {
		return
	}
	if p.holding {
		p.emit(p.held, p.heldLine, initLike(p.held))
		p.holding = false
	}
	p.first = false
	p.sessTxns = 0
	p.sess = -1
}

// initLike reports whether a transaction only writes 0.
func initLike(ops []op) bool {
	for _, o := range ops {
		if !o.write || o.val != 0 {
			return false
		}
	}
	return true
}

func (p *parser) emit(ops []op, line int, init bool) {
	b := p.b
	if p.sess < 0 {
		p.sess = b.Session(p.nextSess)
		p.nextSess++
	}
	t := b.Begin(p.sess, p.nextTxn, history.Committed, history.Pos{File: p.name, Line: line})
	p.nextTxn++
	if !init {
		raw := p.raw[:0]
		for _, o := range ops {
			kind := history.OpRead
			if o.write {
				kind = history.OpWrite
			}
			raw = append(raw, history.RawOp{Kind: kind, Key: o.key, Value: o.val})
		}
		b.AddRaw(t, raw)
		p.raw = raw
		return
	}
	// T⊥ writes each key once.
	seen := make(map[int64]bool, len(ops))
	for _, o := range ops {
		if !seen[o.key] {
			seen[o.key] = true
			b.Write(t, o.key, 0)
		}
	}
	b.PromoteToInit(t)
}

// parallelBatch is how many values the builder interns at a time on two
// goroutines (history.Builder.SetParallel): the history is the same
// either way. A variable so that tests compare the two.
var parallelBatch = history.ParallelBatch

// semanticWarnings reports what AWDIT itself would reject: a read of a
// (key, value) that no transaction writes (AWDIT panics) and a (key, value)
// written by two transactions (AWDIT asserts values are unique).
func semanticWarnings(h *history.History, w *history.WarningLog) {
	nk := len(h.Keys)
	base := make([]int, nk+1)
	for k := range nk {
		base[k+1] = base[k] + len(h.Values[k])
	}
	// One word per version, so that a write or read looks at one place:
	// 0 not written, t+1 first written by t (T⊥ is 0), -1 warned about.
	state := make([]history.TxnID, base[nk])
	for t := range h.Txns {
		tx := &h.Txns[t]
		for _, op := range tx.Ops {
			if !op.Kind.IsWrite() {
				continue
			}
			ver := base[op.Key] + int(op.Value)
			switch st := state[ver]; {
			case st == 0:
				state[ver] = history.TxnID(t) + 1
			case st > 0 && st != history.TxnID(t)+1:
				state[ver] = -1
				w.Add("duplicate", tx.Pos, "value %d of key %d written by transactions %d and %d (AWDIT requires unique values per key)",
					h.Value(op.Key, op.Value), h.Key(op.Key), h.Txns[st-1].ID, tx.ID)
			}
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for _, op := range tx.Ops {
			if !op.Kind.IsRead() {
				continue
			}
			if ver := base[op.Key] + int(op.Value); state[ver] == 0 {
				state[ver] = -1
				w.Add("thin-air", tx.Pos, "transaction %d reads value %d of key %d, which no transaction writes",
					tx.ID, h.Value(op.Key, op.Value), h.Key(op.Key))
			}
		}
	}
}
