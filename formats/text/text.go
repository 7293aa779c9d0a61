// Package text reads the Plume / PolySI / IsoVista text history format
// (docs/formats.md): one operation per line, r(key,value,session,txn) or
// w(key,value,session,txn), where txn -1 marks an operation of an aborted
// transaction. It owns the syntax, the mapping onto history.History
// (including detection of an explicit initial transaction, §4.4) and the
// format's validation and warnings (§4.5).
package text

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/formats/internal/lineio"
	"github.com/hyperiso/hyperiso/history"
)

// Format is the name recorded in History.Format.
const Format = "text"

// InitID is the native id of the implicit initial transaction (PolySI's
// convention); an explicit initial transaction keeps its own id.
const InitID int64 = -1

// Options controls the reader.
type Options struct {
	// Lenient turns structural errors with an obvious recovery into
	// warnings: a malformed, blank or out-of-range line is skipped, and a
	// transaction whose lines name two sessions stays in the first one (as
	// Plume, PolySI and IsoVista do). An empty input yields an empty history.
	Lenient bool
}

// Read reads the text history in the file at path.
func Read(path string, opt Options) (*history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path, opt)
}

// maxLine bounds the bytes kept of one line; a valid line is at most 86
// bytes, so anything longer is only kept to be quoted in an error.
const maxLine = 64 << 10

// Parse reads a text history from r; name is used in positions and errors.
func Parse(r io.Reader, name string, opt Options) (*history.History, error) {
	p := &parser{
		name: name,
		opt:  opt,
		b:    history.NewBuilder(name, Format),
		txns: make(map[int64]*txnState),
		w:    &history.WarningLog{},
	}
	if runtime.GOMAXPROCS(0) > 1 {
		p.b.SetParallel(parallelBatch)
	}
	size := lineio.SizeOf(r)
	var read int64
	br := bufio.NewReaderSize(r, maxLine)
	lineNo := 0
	for {
		line, tooLong, err := lineio.ReadLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		lineNo++
		if err := p.line(line, tooLong, lineNo); err != nil {
			return nil, err
		}
		read += int64(len(line)) + 1
		p.b.ReserveRest(read, size)
	}
	if lineNo == 0 {
		// An empty file has no line 1, but "file:1" reads better than a byte offset.
		pos := history.Pos{File: name, Line: 1}
		if !opt.Lenient {
			return nil, history.Errorf(pos, "empty file: expected lines r|w(key,value,session,txn)")
		}
		p.w.Add("empty", pos, "empty file")
	}
	return p.finish(), nil
}

// parallelBatch is how many values the builder interns at a time on two
// goroutines (history.Builder.SetParallel; 0: on this one): the history
// is the same either way. A variable so that tests compare the two.
var parallelBatch = history.ParallelBatch

// txnState tracks one committed transaction while reading.
type txnState struct {
	id      history.TxnID
	raw     int64
	sess    int64
	line    int // line of its most recent operation
	pure    bool
	zero    bool    // wrote value 0
	split   bool    // already warned that its lines are not contiguous
	pending []int64 // keys written 0 while pure, not yet given to the builder
}

type parser struct {
	name  string
	opt   Options
	b     *history.Builder
	txns  map[int64]*txnState
	order []*txnState
	last  *txnState
	w     *history.WarningLog

	zeroWriters int
	zeroFirst   *txnState

	abortedReads   int
	abortedReadPos history.Pos

	// Operations of transaction rawTxn not yet given to the builder: they
	// go together (Builder.AddRaw) before anything else reaches it.
	raw    []history.RawOp
	rawTxn history.TxnID
}

// rawGroup is how many operations the parser holds before AddRaw.
const rawGroup = 64

// addRaw gives the held operations to the builder.
func (p *parser) addRaw() {
	if len(p.raw) > 0 {
		p.b.AddRaw(p.rawTxn, p.raw)
		p.raw = p.raw[:0]
	}
}

// Syntax errors are classified as in docs/formats.md.
type lineErr uint8

const (
	errNone   lineErr = iota
	errSyntax         // T1
	errRange          // T2
	errNegTxn         // T3
)

type opLine struct {
	op                  byte
	key, val, sess, txn int64
	why                 string
	kind                lineErr
}

var fieldNames = [4]string{"key", "value", "session", "txn"}

// parseLine parses one line per §4.1 with a plain byte loop.
func parseLine(s []byte) (l opLine) {
	fail := func(kind lineErr, format string, args ...any) opLine {
		return opLine{kind: kind, why: fmt.Sprintf(format, args...)}
	}
	if len(s) == 0 {
		return fail(errSyntax, "blank line")
	}
	if s[0] != 'r' && s[0] != 'w' {
		return fail(errSyntax, `expected "r" or "w" at column 1`)
	}
	l.op = s[0]
	if len(s) < 2 || s[1] != '(' {
		return fail(errSyntax, `expected "(" at column 2`)
	}
	i := 2
	var f [4]int64
	for n := range 4 {
		neg := n == 3 && i < len(s) && s[i] == '-'
		if neg {
			i++
		}
		start := i
		var u uint64
		over := false
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			d := uint64(s[i] - '0')
			if u > (math.MaxInt64-d)/10 {
				over = true
			} else {
				u = u*10 + d
			}
			i++
		}
		if i == start {
			return fail(errSyntax, "expected digits for %s at column %d", fieldNames[n], i+1)
		}
		if over {
			return fail(errRange, "%s %s out of range (max %d)", fieldNames[n], s[start:i], int64(math.MaxInt64))
		}
		sep := byte(',')
		if n == 3 {
			sep = ')'
		}
		if i >= len(s) || s[i] != sep {
			return fail(errSyntax, "expected %q after %s at column %d", sep, fieldNames[n], i+1)
		}
		i++
		f[n] = int64(u)
		if neg {
			if u != 1 {
				return fail(errNegTxn, "negative txn id -%d (only -1, an operation of an aborted transaction, may be negative)", u)
			}
			f[n] = -1
		}
	}
	if i != len(s) {
		return fail(errSyntax, `unexpected text after ")" at column %d`, i+1)
	}
	l.key, l.val, l.sess, l.txn = f[0], f[1], f[2], f[3]
	return l
}

// quote renders an offending line for a message, shortened if long.
func quote(s []byte) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q...", s[:80])
	}
	return fmt.Sprintf("%q", s)
}

func (p *parser) line(s []byte, tooLong bool, lineNo int) error {
	pos := history.Pos{File: p.name, Line: lineNo}
	var l opLine
	if tooLong {
		l = opLine{kind: errSyntax, why: fmt.Sprintf("line longer than %d bytes", maxLine)}
	} else {
		l = parseLine(s)
	}
	if l.kind != errNone {
		// Any byte outside ASCII fails the syntax, so UTF-8 validity (T5)
		// only needs checking on the way to an error.
		msg := l.why
		switch {
		case tooLong:
			msg += ", starting " + quote(s)
		case !utf8.Valid(s):
			msg = "line is not valid UTF-8: " + quote(s)
		case len(s) > 0:
			msg += " in " + quote(s)
			if l.kind == errSyntax {
				msg += " (want r|w(key,value,session,txn))"
			}
		}
		if !p.opt.Lenient {
			return history.Errorf(pos, "%s", msg)
		}
		p.w.Add("skipped", pos, "line skipped: %s", msg)
		switch {
		case len(s) >= 2 && (s[0] == 'r' || s[0] == 'w') && s[1] == '(':
			p.b.Drop(history.Dropped{Ops: 1}) // each line is one operation
		case len(s) > 0:
			p.b.Drop(history.Dropped{Other: 1})
		}
		return nil
	}
	if l.txn == -1 {
		if l.op == 'w' {
			p.addRaw()
			p.b.AbortedWrite(l.key, l.val)
		} else if p.abortedReads++; p.abortedReads == 1 {
			p.abortedReadPos = pos
		}
		return nil
	}
	st := p.last
	if st == nil || st.raw != l.txn {
		st = p.txns[l.txn]
		p.addRaw()
		if st == nil {
			st = &txnState{raw: l.txn, sess: l.sess, pure: true}
			st.id = p.b.Begin(p.b.Session(l.sess), l.txn, history.Committed, pos)
			p.txns[l.txn] = st
			p.order = append(p.order, st)
		} else if !st.split {
			st.split = true
			p.w.Add("split", pos, "lines of transaction %d are not contiguous (previous line %d)", l.txn, st.line)
		}
		p.last = st
	}
	if st.sess != l.sess {
		if !p.opt.Lenient {
			return history.Errorf(pos, "transaction %d is in session %d (line %d) but this line names session %d: %s",
				l.txn, st.sess, p.b.Txn(st.id).Pos.Line, l.sess, quote(s))
		}
		p.w.Add("session", pos, "transaction %d kept in its first session %d, not %d", l.txn, st.sess, l.sess)
	}
	st.line = lineNo
	p.op(st, l.op, l.key, l.val)
	return nil
}

// op records an operation. Writes of 0 by a transaction that so far only
// wrote 0 are held back: if that transaction turns out to be the explicit
// initial transaction, its duplicate writes of a key must collapse into one.
func (p *parser) op(st *txnState, op byte, key, val int64) {
	zeroWrite := op == 'w' && val == 0
	if zeroWrite && !st.zero {
		st.zero = true
		p.zeroWriters++
		if p.zeroFirst == nil {
			p.zeroFirst = st
		}
	}
	if st.pure {
		if zeroWrite {
			st.pending = append(st.pending, key)
			return
		}
		p.flush(st)
	}
	if len(p.raw) > 0 && p.rawTxn != st.id || len(p.raw) == rawGroup {
		p.addRaw()
	}
	kind := history.OpRead
	if op == 'w' {
		kind = history.OpWrite
	}
	p.rawTxn = st.id
	p.raw = append(p.raw, history.RawOp{Kind: kind, Key: key, Value: val})
}

func (p *parser) flush(st *txnState) {
	p.addRaw()
	for _, k := range st.pending {
		p.b.Write(st.id, k, 0)
	}
	st.pending, st.pure = nil, false
}

// finish applies the initial-state rule of §4.4 and builds the history.
func (p *parser) finish() *history.History {
	p.addRaw()
	var init *txnState
	if p.zeroWriters == 1 && p.zeroFirst.pure {
		init = p.zeroFirst
	}
	for _, st := range p.order {
		if !st.pure {
			continue
		}
		if st == init {
			seen := make(map[int64]bool, len(st.pending))
			for _, k := range st.pending {
				if !seen[k] {
					seen[k] = true
					p.b.Write(st.id, k, 0)
				}
			}
			st.pending, st.pure = nil, false
			continue
		}
		p.flush(st)
	}
	if init != nil {
		p.b.PromoteToInit(init.id)
	} else {
		p.b.SetInit(history.InitImplicit, InitID)
		for _, st := range p.order {
			if st.zero {
				p.w.Add("zero", p.b.Txn(st.id).Pos, "value 0 written by transaction %d; reads of 0 are ambiguous (the implicit initial transaction writes 0 too)", st.raw)
			}
		}
	}
	if p.abortedReads > 0 {
		p.w.Add("aborted-read", p.abortedReadPos, "%d read(s) with txn -1 ignored (an aborted transaction's reads carry no information)", p.abortedReads)
	}
	p.b.InitAllKeys(0)
	h := p.b.Finish()
	semanticWarnings(h, p.w)
	h.Warnings = append(h.Warnings, p.w.Done()...)
	return h
}

// semanticWarnings adds the §4.5 warnings that need the whole history:
// keys read with a non-zero value but never written (thin-air candidates)
// and (key, value) pairs written by two transactions.
func semanticWarnings(h *history.History, w *history.WarningLog) {
	nk := len(h.Keys)
	written := make([]bool, nk)
	for _, v := range h.AbortedWrites {
		written[v.Key] = true
	}
	base := make([]int, nk+1)
	for k := range nk {
		base[k+1] = base[k] + len(h.Values[k])
	}
	firstWriter := make([]history.TxnID, base[nk]) // 0: none yet, -1: warned
	readAt := make([]history.TxnID, nk)            // first txn reading k non-zero
	readVal := make([]int64, nk)
	// zero[k] is the id of k's value 0 (-1: none), so that a read of 0,
	// the commonest, is told apart without looking its value up.
	zero := make([]history.ValueID, nk)
	for k, vals := range h.Values {
		zero[k] = history.ValueID(slices.Index(vals, 0))
	}
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for _, op := range tx.Ops {
			k := op.Key
			if op.Kind.IsRead() {
				if readAt[k] == 0 && op.Value != zero[k] {
					readAt[k], readVal[k] = history.TxnID(t), h.Value(k, op.Value)
				}
				continue
			}
			written[k] = true
			ver := base[k] + int(op.Value)
			switch fw := firstWriter[ver]; {
			case fw == 0:
				firstWriter[ver] = history.TxnID(t)
			case fw > 0 && fw != history.TxnID(t):
				firstWriter[ver] = -1
				w.Add("duplicate", tx.Pos, "value %d of key %d written by transactions %d and %d (checkers assume unique values per key)",
					h.Value(k, op.Value), h.Key(k), h.Txns[fw].ID, tx.ID)
			}
		}
	}
	for k := range nk {
		if readAt[k] != 0 && !written[k] {
			t := &h.Txns[readAt[k]]
			w.Add("thin-air", t.Pos, "key %d is read (value %d by transaction %d) but never written", h.Keys[k], readVal[k], t.ID)
		}
	}
}
