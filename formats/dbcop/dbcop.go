// Package dbcop owns hyperiso's reader of dbcop's binary `history.bincode`
// files (docs/formats.md): the byte layout, its structural validation (fatal
// errors D1–D4 with byte offsets), the mapping onto history.History of §2.4,
// and the warnings of §2.5.
//
// The mapping: sessions 1..N in file order; transaction ids 1, 2, 3, … in
// file order, aborted ones included; failed events are dropped, failed
// writes recorded as aborted writes. The implicit initial transaction (id 0)
// writes 0 to every key of a successful event — of any transaction, so with
// DropAborted too — and to no key that occurs only in failed events. The
// header goes to Meta as dbcop.id, dbcop.n_node, dbcop.n_variable,
// dbcop.n_transaction, dbcop.n_event, dbcop.info, dbcop.start and dbcop.end.
package dbcop

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/history"
)

// Options tune the reader.
type Options struct {
	// Lenient turns a boolean byte other than 0/1 (D2), invalid UTF-8 in
	// the header strings (D4) and trailing bytes into warnings instead of
	// errors.
	Lenient bool
	// DropAborted drops transactions whose success flag is 0, as VeriStrong
	// and PolySI do. Their successful writes go to AbortedWrites so that a
	// read of them is still told apart from a thin-air read, and they still
	// consume a transaction id.
	DropAborted bool
}

// FileName is the file Read looks for when given a directory.
const FileName = "history.bincode"

// Minimal encoded sizes (§2.2), used to refuse length prefixes that cannot
// fit in the rest of the file before anything is allocated (D3).
const (
	eventSize   = 18
	minTxnSize  = 9
	minSessSize = 8
)

// maxWarningsPerKind bounds the warnings of one kind; the rest are counted
// in a single summary warning. Real files can have thousands of duplicate
// values, and a list that long helps nobody. A variable so tests can lower it.
var maxWarningsPerKind = 20

// Read reads a dbcop history from path, a history.bincode file or a
// directory that contains one.
func Read(path string, opt Options) (*history.History, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		dir := path
		path = filepath.Join(dir, FileName)
		if st, err = os.Stat(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, history.Errorf(history.Pos{File: dir}, "directory has no %s", FileName)
			}
			return nil, err
		}
	}
	if !st.Mode().IsRegular() {
		return nil, history.Errorf(history.Pos{File: path}, "not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path, st.Size(), opt)
}

// Parse reads a dbcop history from r. name is used in positions and as the
// history's source; size is the number of bytes r holds, or -1 if unknown
// (then length prefixes cannot be checked up front, but nothing is ever
// allocated beyond the bytes actually read).
func Parse(r io.Reader, name string, size int64, opt Options) (*history.History, error) {
	p := &parser{
		r:    bufio.NewReaderSize(r, 64<<10),
		name: name,
		size: size,
		opt:  opt,
		b:    history.NewBuilder(name, "dbcop"),
	}
	// Values are interned on two cores (Builder.SetParallel): nothing
	// reads them back while reading; the warnings about versions are
	// found afterwards, from the History (versions).
	p.b.SetParallel(parallelBatch)
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// parallelBatch is how many values the builder interns at a time on two
// goroutines; a variable so that tests can make batches small.
var parallelBatch = history.ParallelBatch

type event struct {
	off   int64 // offset of the event's first byte
	key   int64
	value int64
	write bool
	ok    bool
}

// Event flags of an irregular transaction.
const (
	evWrite uint8 = 1 << iota
	evOK
)

// irregular is a transaction whose events are not simply its operations
// in the History: one with failed events, or one dropped (DropAborted).
// The version walks need its events' kinds and outcomes; the others'
// events are their operations, at 18 bytes each from start+8.
type irregular struct {
	id        int64 // native id
	start     int64 // offset of its event count
	committed bool
	dropped   bool
	evs       []uint8 // per event: evWrite, evOK
}

type parser struct {
	r    *bufio.Reader
	name string
	off  int64
	size int64
	opt  Options
	b    *history.Builder
	w    warner
	buf  [eventSize]byte

	evs       []event       // events of the current transaction, reused
	txnID     int64         // last transaction id assigned
	lastTxn   history.TxnID // the last transaction given to the builder
	initRaw   map[int64]struct{}
	irregular []irregular
	allFailed bool            // every transaction and event so far has success 0
	raw       []history.RawOp // scratch for kept

	params      [5]uint64
	nSessions   uint64
	sessTxnsOK  bool // every session has params.n_transaction transactions
	totalTxns   uint64
	totalEvents uint64
	evsPerTxnOK bool // every transaction has params.n_event events
}

func (p *parser) pos(off int64) history.Pos { return history.Pos{File: p.name, Offset: off} }

// remaining is the number of bytes after the current offset, or -1.
func (p *parser) remaining() int64 {
	if p.size < 0 || p.off > p.size {
		return -1
	}
	return p.size - p.off
}

// read fills buf or reports truncation inside the field what.
func (p *parser) read(buf []byte, what func() string) error {
	n, err := io.ReadFull(p.r, buf)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return history.Errorf(p.pos(p.off), "truncated: file ends at byte %d, inside the %d-byte %s",
				p.off+int64(n), len(buf), what())
		}
		return fmt.Errorf("%s: byte %d: %w", p.name, p.off+int64(n), err)
	}
	p.off += int64(len(buf))
	return nil
}

func (p *parser) u64(what func() string) (uint64, error) {
	if err := p.read(p.buf[:8], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p.buf[:8]), nil
}

// count reads a length prefix and refuses one whose elements, at minSize
// bytes each, cannot fit in the rest of the file (D3).
func (p *parser) count(minSize int64, what func() string) (uint64, error) {
	at := p.off
	n, err := p.u64(what)
	if err != nil {
		return 0, err
	}
	if rem := p.remaining(); rem >= 0 && n > uint64(rem/minSize) {
		return 0, history.Errorf(p.pos(at), "%s is %d, but the %d bytes left in the file hold at most %d",
			what(), n, rem, rem/minSize)
	}
	return n, nil
}

// boolean checks a success/is_write flag (D2).
func (p *parser) boolean(c byte, off int64, what func() string) (bool, error) {
	if c <= 1 {
		return c == 1, nil
	}
	if !p.opt.Lenient {
		return false, history.Errorf(p.pos(off), "%s is byte 0x%02x, want 0 or 1", what(), c)
	}
	p.w.add(kindBool, p.pos(off), "%s is byte 0x%02x, not 0 or 1; taken as true", what(), c)
	return true, nil
}

func (p *parser) str(field string) (string, error) {
	what := func() string { return "length of the " + field + " string" }
	n, err := p.u64(what)
	if err != nil {
		return "", err
	}
	at := p.off
	if rem := p.remaining(); rem >= 0 && n > uint64(rem) {
		return "", history.Errorf(p.pos(at-8), "%s is %d, but only %d bytes are left in the file", what(), n, rem)
	}
	var s []byte
	if p.size >= 0 {
		s = make([]byte, n)
		if err := p.read(s, func() string { return field + " string" }); err != nil {
			return "", err
		}
	} else {
		// Unknown size: grow with the bytes actually present, never with n.
		got, err := io.ReadAll(io.LimitReader(p.r, int64(min(n, 1<<62))))
		if err != nil {
			return "", fmt.Errorf("%s: byte %d: %w", p.name, at, err)
		}
		if uint64(len(got)) < n {
			return "", history.Errorf(p.pos(at), "truncated: file ends at byte %d, inside the %d-byte %s string",
				at+int64(len(got)), n, field)
		}
		p.off += int64(len(got))
		s = got
	}
	if !utf8.Valid(s) {
		bad := at + int64(invalidUTF8(s))
		if !p.opt.Lenient {
			return "", history.Errorf(p.pos(bad), "%s string is not valid UTF-8", field)
		}
		p.w.add(kindUTF8, p.pos(bad), "%s string is not valid UTF-8; bytes kept as they are", field)
	}
	return string(s), nil
}

// invalidUTF8 returns the index of the first byte of s that is not part of a
// valid UTF-8 sequence.
func invalidUTF8(s []byte) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(s)
}

var paramNames = [5]string{"id", "n_node", "n_variable", "n_transaction", "n_event"}

func (p *parser) parse() error {
	for i := range p.params {
		v, err := p.u64(func() string { return "params." + paramNames[i] })
		if err != nil {
			return err
		}
		p.params[i] = v
		p.b.SetMeta("dbcop."+paramNames[i], strconv.FormatUint(v, 10))
	}
	for _, field := range [...]string{"info", "start", "end"} {
		at := p.off
		s, err := p.str(field)
		if err != nil {
			return err
		}
		p.b.SetMeta("dbcop."+field, s)
		if field != "info" {
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				p.w.add(kindTime, p.pos(at), "%s time %q is not RFC 3339 (dbcop and AWDIT would reject the file)", field, s)
			}
		}
	}

	p.initRaw = make(map[int64]struct{})
	p.allFailed = true
	p.evsPerTxnOK = true
	p.sessTxnsOK = true
	p.b.SetInit(history.InitImplicit, 0)

	nSess, err := p.count(minSessSize, func() string { return "session count" })
	if err != nil {
		return err
	}
	p.nSessions = nSess
	for si := uint64(1); si <= nSess; si++ {
		if err := p.session(si); err != nil {
			return err
		}
	}
	p.w.stage = 2*p.txnID + 2
	return p.trailing()
}

func (p *parser) session(si uint64) error {
	s := p.b.Session(int64(si))
	nTxn, err := p.count(minTxnSize, func() string { return fmt.Sprintf("transaction count of session %d", si) })
	if err != nil {
		return err
	}
	if nTxn != p.params[3] {
		p.sessTxnsOK = false
	}
	p.totalTxns += nTxn
	for ti := uint64(1); ti <= nTxn; ti++ {
		if err := p.txn(s, si, ti); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) txn(s int32, si, ti uint64) error {
	p.txnID++
	id := p.txnID
	p.w.stage = 2 * id
	where := func() string { return fmt.Sprintf("transaction %d (id %d) of session %d", ti, id, si) }
	start := p.off
	nEv, err := p.count(eventSize, func() string { return "event count of " + where() })
	if err != nil {
		return err
	}
	p.totalEvents += nEv
	if nEv != p.params[4] {
		p.evsPerTxnOK = false
	}
	p.evs = p.evs[:0]
	for ei := uint64(1); ei <= nEv; {
		// The events already in the reader's buffer are decoded in place;
		// reading one more is left to event, which says where the file
		// ends.
		n := min(nEv-ei+1, uint64(p.r.Buffered()/eventSize))
		if n == 0 {
			e, err := p.event(ei, where)
			if err != nil {
				return err
			}
			p.evs = append(p.evs, e)
			ei++
			continue
		}
		buf, _ := p.r.Peek(int(n) * eventSize) // buffered: no read, no error
		for len(buf) > 0 {
			e, err := p.decode(buf[:eventSize], ei, where)
			if err != nil {
				return err
			}
			p.evs = append(p.evs, e)
			buf = buf[eventSize:]
			ei++
		}
		if _, err := p.r.Discard(int(n) * eventSize); err != nil {
			return err // cannot happen: the bytes are buffered
		}
	}
	failed := 0
	for i := range p.evs {
		if !p.evs[i].ok {
			failed++
		}
	}
	at := p.off
	if err := p.read(p.buf[:1], func() string { return "success flag of " + where() }); err != nil {
		return err
	}
	ok, err := p.boolean(p.buf[0], at, func() string { return "success flag of " + where() })
	if err != nil {
		return err
	}
	if ok || failed < len(p.evs) {
		p.allFailed = false
	}
	if ok && failed > 0 {
		p.w.add(kindFailedInCommitted, p.pos(start), "committed transaction %d has %d failed events (informational)", id, failed)
	}
	p.emit(s, id, start, ok)
	p.b.ReserveRest(p.off, p.size)
	return nil
}

func (p *parser) event(ei uint64, where func() string) (event, error) {
	e := event{off: p.off}
	n, err := io.ReadFull(p.r, p.buf[:eventSize])
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			// Name the field the file ends in, at the field's own offset.
			var fstart, flen int
			var fname string
			switch {
			case n < 1:
				fstart, flen, fname = 0, 1, "is_write flag"
			case n < 9:
				fstart, flen, fname = 1, 8, "key"
			case n < 17:
				fstart, flen, fname = 9, 8, "value"
			default:
				fstart, flen, fname = 17, 1, "success flag"
			}
			return e, history.Errorf(p.pos(e.off+int64(fstart)), "truncated: file ends at byte %d, inside the %d-byte %s",
				e.off+int64(n), flen, eventField(fname, ei, where)())
		}
		return e, fmt.Errorf("%s: byte %d: %w", p.name, e.off+int64(n), err)
	}
	return p.decode(p.buf[:], ei, where)
}

// eventField names a field of event ei of the transaction where says.
func eventField(name string, ei uint64, where func() string) func() string {
	return func() string { return fmt.Sprintf("%s of event %d of %s", name, ei, where()) }
}

// decode decodes b, event ei, the eventSize bytes at the current offset,
// and moves past it.
func (p *parser) decode(b []byte, ei uint64, where func() string) (event, error) {
	b = b[:eventSize]
	e := event{off: p.off}
	p.off += eventSize
	var err error
	e.key = int64(binary.LittleEndian.Uint64(b[1:9]))
	e.value = int64(binary.LittleEndian.Uint64(b[9:17]))
	e.write, e.ok = b[0] == 1, b[17] == 1
	// The messages are built only for a bad byte: no allocation per event.
	if b[0] > 1 {
		if e.write, err = p.boolean(b[0], e.off, eventField("is_write flag", ei, where)); err != nil {
			return e, err
		}
	}
	if b[17] > 1 {
		if e.ok, err = p.boolean(b[17], e.off+17, eventField("success flag", ei, where)); err != nil {
			return e, err
		}
	}
	return e, nil
}

// emit hands a fully read transaction to the builder (§2.4).
func (p *parser) emit(s int32, id, start int64, committed bool) {
	drop := !committed && p.opt.DropAborted
	var t history.TxnID
	if !drop {
		status := history.Committed
		if !committed {
			status = history.Aborted
		}
		t = p.b.Begin(s, id, status, p.pos(start))
		p.lastTxn = t
	}
	// Runs of kept events go to the builder together (AddRaw); the other
	// events intern their versions one by one, between the runs, so that
	// keys and values are interned in the order of the events.
	run, kept := 0, 0
	for i := range p.evs {
		e := &p.evs[i]
		if e.ok && !drop {
			run++
			continue
		}
		p.kept(t, p.evs[i-run:i])
		kept += run
		run = 0
		switch {
		case !e.ok && e.write:
			p.b.AbortedWrite(e.key, e.value)
		case !e.ok:
			// A failed read observed nothing.
		case drop:
			if e.write {
				p.b.AbortedWrite(e.key, e.value)
			}
			// VeriStrong's initial transaction covers keys of dropped
			// transactions too; keep that so DropAborted stays comparable.
			p.initRaw[e.key] = struct{}{}
		}
	}
	p.kept(t, p.evs[len(p.evs)-run:])
	kept += run
	if kept < len(p.evs) {
		ir := irregular{id: id, start: start, committed: committed, dropped: drop, evs: make([]uint8, len(p.evs))}
		for i, e := range p.evs {
			if e.write {
				ir.evs[i] |= evWrite
			}
			if e.ok {
				ir.evs[i] |= evOK
			}
		}
		p.irregular = append(p.irregular, ir)
	}
}

// kept adds the successful events evs of kept transaction t to it.
func (p *parser) kept(t history.TxnID, evs []event) {
	if len(evs) == 0 {
		return
	}
	raw := p.raw[:0]
	for i := range evs {
		kind := history.OpRead
		if evs[i].write {
			kind = history.OpWrite
		}
		raw = append(raw, history.RawOp{Kind: kind, Key: evs[i].key, Value: evs[i].value})
	}
	p.raw = raw
	p.b.AddRaw(t, raw)
}

// trailing refuses bytes after Data, which bincode ignores (with --lenient,
// warns about them).
func (p *parser) trailing() error {
	extra, err := p.r.Discard(1 << 62)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: byte %d: %w", p.name, p.off+int64(extra), err)
	}
	if extra > 0 {
		if !p.opt.Lenient {
			return history.Errorf(p.pos(p.off), "%d trailing bytes after the last transaction (a second history, or a damaged file; --lenient ignores them)", extra)
		}
		p.w.add(kindTrailing, p.pos(p.off), "%d trailing bytes after the last transaction (ignored)", extra)
		p.b.Drop(history.Dropped{Other: 1})
	}
	return nil
}

func (p *parser) finish() *history.History {
	// The initial transaction writes 0 to every key of a successful event.
	// Builder.InitWrite scans all earlier initial writes per call, which is
	// quadratic on files with thousands of keys, and InitAllKeys would also
	// cover keys that occur only in failed writes; so T⊥'s ops are set here.
	var initKeys []bool // by KeyID: occurs in a successful event
	for t := history.TxnID(1); t <= p.lastTxn; t++ {
		for _, op := range p.b.Ops(t) {
			for int(op.Key) >= len(initKeys) {
				initKeys = append(initKeys, false)
			}
			initKeys[op.Key] = true
		}
	}
	var init []history.Op
	for k, in := range initKeys {
		if in {
			init = append(init, history.Op{Kind: history.OpWrite, Key: history.KeyID(k), Value: p.b.ValueID(history.KeyID(k), 0)})
		}
	}
	raws := make([]int64, 0, len(p.initRaw))
	for raw := range p.initRaw {
		raws = append(raws, raw)
	}
	slices.Sort(raws) // KeyIDs are assigned here: keep them deterministic
	for _, raw := range raws {
		k := p.b.KeyID(raw)
		if int(k) >= len(initKeys) || !initKeys[k] {
			init = append(init, history.Op{Kind: history.OpWrite, Key: k, Value: p.b.ValueID(k, 0)})
		}
	}
	for _, op := range init {
		p.b.InitWriteID(op.Key, op.Value)
	}
	h := p.b.Finish()

	vw := p.versions(h)
	p.w.stage = stageEnd
	if p.allFailed && p.totalTxns > 0 {
		p.w.add(kindWorkload, p.pos(0), "every transaction and every event has success 0: this looks like an un-executed dbcop workload, not a history")
	}
	dcStyle := p.params[1] == p.nSessions && p.sessTxnsOK && p.evsPerTxnOK
	psStyle := p.params[3] == p.totalTxns && p.params[4] == p.totalEvents
	if !dcStyle && !psStyle {
		p.w.add(kindParams, p.pos(0), "params (n_node %d, n_transaction %d, n_event %d) match neither dbcop's per-session counts nor PolySI's totals (%d sessions, %d transactions, %d events); informational",
			p.params[1], p.params[3], p.params[4], p.nSessions, p.totalTxns, p.totalEvents)
	}
	vw.reads()
	h.Warnings = append(h.Warnings, p.w.done()...)
	return h
}
