package dbcop

// The reader as it was before its warnings were computed after reading
// (commit c74d58f), kept as the reference the fast reader must equal:
// same histories, warnings and errors. Its only change is that kept
// events are interned one at a time (Builder.Read and Write) instead of
// in groups (Builder.AddRaw).

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/history"
)

// refParse reads a dbcop history from r. name is used in positions and as the
// history's source; size is the number of bytes r holds, or -1 if unknown
// (then length prefixes cannot be checked up front, but nothing is ever
// allocated beyond the bytes actually read).
func refParse(r io.Reader, name string, size int64, opt Options) (*history.History, error) {
	p := &refParser{
		r:    bufio.NewReaderSize(r, 64<<10),
		name: name,
		size: size,
		opt:  opt,
		b:    history.NewBuilder(name, "dbcop"),
	}
	p.w.b = p.b
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

type refEvent struct {
	off   int64 // offset of the event's first byte
	key   int64
	value int64
	write bool
	ok    bool
}

// written records what is known about one version for the semantic
// warnings: where it was first written successfully and by whom.
type refWritten struct {
	first     int64 // 1 + offset of the first successful write, 0 if none
	lastTxn   int64 // id of the last transaction that wrote it successfully
	committed bool  // successfully written by a committed transaction
	aborted   bool  // written by an aborted transaction or a failed write
	dup       bool  // reported as written twice
}

// refPendingRead is a successful read of a non-zero value, checked against
// all writes once the whole file is read.
type refPendingRead struct {
	off        int64
	key, value int64
	ver        history.Version
}

type refParser struct {
	r    *bufio.Reader
	name string
	off  int64
	size int64
	opt  Options
	b    *history.Builder
	w    refWarner
	buf  [eventSize]byte

	evs       []refEvent // events of the current transaction, reused
	txnID     int64      // last transaction id assigned
	initKeys  []bool     // by KeyID: occurs in a successful event
	initRaw   map[int64]struct{}
	vers      [][]refWritten   // by KeyID and ValueID, as the builder interns them
	reads     []refPendingRead // successful reads of non-zero values, checked at the end
	allFailed bool             // every transaction and event so far has success 0

	params      [5]uint64
	nSessions   uint64
	sessTxnsOK  bool // every session has params.n_transaction transactions
	totalTxns   uint64
	totalEvents uint64
	evsPerTxnOK bool // every transaction has params.n_event events
}

func (p *refParser) pos(off int64) history.Pos { return history.Pos{File: p.name, Offset: off} }

// remaining is the number of bytes after the current offset, or -1.
func (p *refParser) remaining() int64 {
	if p.size < 0 || p.off > p.size {
		return -1
	}
	return p.size - p.off
}

// read fills buf or reports truncation inside the field what.
func (p *refParser) read(buf []byte, what func() string) error {
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

func (p *refParser) u64(what func() string) (uint64, error) {
	if err := p.read(p.buf[:8], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p.buf[:8]), nil
}

// count reads a length prefix and refuses one whose elements, at minSize
// bytes each, cannot fit in the rest of the file (D3).
func (p *refParser) count(minSize int64, what func() string) (uint64, error) {
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
func (p *refParser) boolean(c byte, off int64, what func() string) (bool, error) {
	if c <= 1 {
		return c == 1, nil
	}
	if !p.opt.Lenient {
		return false, history.Errorf(p.pos(off), "%s is byte 0x%02x, want 0 or 1", what(), c)
	}
	p.w.add(kindBool, p.pos(off), "%s is byte 0x%02x, not 0 or 1; taken as true", what(), c)
	return true, nil
}

func (p *refParser) str(field string) (string, error) {
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
		bad := at + int64(refInvalidUTF8(s))
		if !p.opt.Lenient {
			return "", history.Errorf(p.pos(bad), "%s string is not valid UTF-8", field)
		}
		p.w.add(kindUTF8, p.pos(bad), "%s string is not valid UTF-8; bytes kept as they are", field)
	}
	return string(s), nil
}

// refInvalidUTF8 returns the index of the first byte of s that is not part of a
// valid UTF-8 sequence.
func refInvalidUTF8(s []byte) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(s)
}

var refParamNames = [5]string{"id", "n_node", "n_variable", "n_transaction", "n_event"}

func (p *refParser) parse() error {
	for i := range p.params {
		v, err := p.u64(func() string { return "params." + refParamNames[i] })
		if err != nil {
			return err
		}
		p.params[i] = v
		p.b.SetMeta("dbcop."+refParamNames[i], strconv.FormatUint(v, 10))
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
	return p.trailing()
}

func (p *refParser) session(si uint64) error {
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

func (p *refParser) txn(s int32, si, ti uint64) error {
	p.txnID++
	id := p.txnID
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
	failed := 0
	for ei := uint64(1); ei <= nEv; ei++ {
		e, err := p.refEvent(ei, where)
		if err != nil {
			return err
		}
		if !e.ok {
			failed++
		}
		p.evs = append(p.evs, e)
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

func (p *refParser) refEvent(ei uint64, where func() string) (refEvent, error) {
	e := refEvent{off: p.off}
	field := func(name string) func() string {
		return func() string { return fmt.Sprintf("%s of event %d of %s", name, ei, where()) }
	}
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
				e.off+int64(n), flen, field(fname)())
		}
		return e, fmt.Errorf("%s: byte %d: %w", p.name, e.off+int64(n), err)
	}
	p.off += eventSize
	b := &p.buf
	e.key = int64(binary.LittleEndian.Uint64(b[1:9]))
	e.value = int64(binary.LittleEndian.Uint64(b[9:17]))
	e.write, e.ok = b[0] == 1, b[17] == 1
	// The messages are built only for a bad byte: no allocation per event.
	if b[0] > 1 {
		if e.write, err = p.boolean(b[0], e.off, field("is_write flag")); err != nil {
			return e, err
		}
	}
	if b[17] > 1 {
		if e.ok, err = p.boolean(b[17], e.off+17, field("success flag")); err != nil {
			return e, err
		}
	}
	return e, nil
}

// emit hands a fully read transaction to the builder (§2.4).
func (p *refParser) emit(s int32, id, start int64, committed bool) {
	drop := !committed && p.opt.DropAborted
	var t history.TxnID
	if !drop {
		status := history.Committed
		if !committed {
			status = history.Aborted
		}
		t = p.b.Begin(s, id, status, p.pos(start))
	}
	// Runs of kept events go to the builder together (AddRaw); the other
	// events intern their versions one by one, between the runs, so that
	// keys and values are interned in the order of the events.
	run := 0
	for i := range p.evs {
		e := &p.evs[i]
		if e.ok && !drop {
			run++
			continue
		}
		p.kept(t, id, committed, p.evs[i-run:i])
		run = 0
		switch {
		case !e.ok && e.write:
			p.b.AbortedWrite(e.key, e.value)
			p.note(p.version(e), e, id, false, committed)
		case !e.ok:
			// A failed read observed nothing.
		case drop:
			if e.write {
				p.b.AbortedWrite(e.key, e.value)
				p.note(p.version(e), e, id, true, false)
			}
			// VeriStrong's initial transaction covers keys of dropped
			// transactions too; keep that so DropAborted stays comparable.
			p.initRaw[e.key] = struct{}{}
		}
	}
	p.kept(t, id, committed, p.evs[len(p.evs)-run:])
}

// kept adds the successful events evs of kept transaction t (native id)
// to it, and notes their versions.
func (p *refParser) kept(t history.TxnID, id int64, committed bool, evs []refEvent) {
	if len(evs) == 0 {
		return
	}
	ops := make([]history.Op, len(evs))
	for i := range evs {
		if evs[i].write {
			p.b.Write(t, evs[i].key, evs[i].value)
		} else {
			p.b.Read(t, evs[i].key, evs[i].value)
		}
		all := p.b.Ops(t)
		ops[i] = all[len(all)-1]
	}
	for i := range evs {
		e := &evs[i]
		ver := history.Version{Key: ops[i].Key, Value: ops[i].Value}
		if e.write {
			p.note(ver, e, id, true, committed)
			if e.value == 0 {
				p.w.add(kindZeroWrite, p.pos(e.off), "write of value 0 to key %d collides with the initial value", e.key)
			}
		} else if e.value != 0 && p.refWritten(ver).lastTxn != id {
			// Reads of 0 see the initial state; a read of the
			// transaction's own earlier write is internal.
			p.reads = append(p.reads, refPendingRead{e.off, e.key, e.value, ver})
		}
		for int(ver.Key) >= len(p.initKeys) {
			p.initKeys = append(p.initKeys, false)
		}
		p.initKeys[ver.Key] = true
	}
}

// note records a write of k at off for the semantic warnings: success says
// whether the event succeeded, committed whether its transaction did. A
// successful write that repeats an earlier successful one is reported.
func (p *refParser) note(ver history.Version, e *refEvent, txn int64, success, committed bool) {
	w := p.refWritten(ver)
	if success {
		w.lastTxn = txn
		if w.first > 0 && !w.dup {
			// Reported once per (key, value), at its second write.
			w.dup = true
			p.w.add(kindDupWrite, p.pos(e.off), "write of (key %d, value %d) repeats the write at byte %d (dbcop requires unique values)",
				e.key, e.value, w.first-1)
		} else if w.first == 0 {
			w.first = e.off + 1
		}
	}
	if success && committed {
		w.committed = true
	} else {
		w.aborted = true
	}
}

// version interns the key and value of e, for events the builder does not
// return a version for.
func (p *refParser) version(e *refEvent) history.Version {
	k := p.b.KeyID(e.key)
	return history.Version{Key: k, Value: p.b.ValueID(k, e.value)}
}

// written returns the record of ver, growing the tables as the builder
// interns new keys and values.
func (p *refParser) refWritten(ver history.Version) *refWritten {
	for int(ver.Key) >= len(p.vers) {
		p.vers = append(p.vers, nil)
	}
	vs := p.vers[ver.Key]
	for int(ver.Value) >= len(vs) {
		vs = append(vs, refWritten{})
	}
	p.vers[ver.Key] = vs
	return &vs[ver.Value]
}

// trailing refuses bytes after Data, which bincode ignores (with --lenient,
// warns about them).
func (p *refParser) trailing() error {
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

func (p *refParser) finish() *history.History {
	if p.allFailed && p.totalTxns > 0 {
		p.w.add(kindWorkload, p.pos(0), "every transaction and every event has success 0: this looks like an un-executed dbcop workload, not a history")
	}
	dcStyle := p.params[1] == p.nSessions && p.sessTxnsOK && p.evsPerTxnOK
	psStyle := p.params[3] == p.totalTxns && p.params[4] == p.totalEvents
	if !dcStyle && !psStyle {
		p.w.add(kindParams, p.pos(0), "params (n_node %d, n_transaction %d, n_event %d) match neither dbcop's per-session counts nor PolySI's totals (%d sessions, %d transactions, %d events); informational",
			p.params[1], p.params[3], p.params[4], p.nSessions, p.totalTxns, p.totalEvents)
	}
	for _, r := range p.reads {
		w := p.refWritten(r.ver)
		switch {
		case w.committed:
		case w.aborted:
			p.w.add(kindAbortedRead, p.pos(r.off), "read of (key %d, value %d) sees a value only aborted or failed writes wrote (aborted read)", r.key, r.value)
		default:
			p.w.add(kindThinAir, p.pos(r.off), "read of (key %d, value %d) sees a value nothing wrote (thin-air read)", r.key, r.value)
		}
	}
	p.w.flush()

	// The initial transaction writes 0 to every key of a successful event.
	// Builder.InitWrite scans all earlier initial writes per call, which is
	// quadratic on files with thousands of keys, and InitAllKeys would also
	// cover keys that occur only in failed writes; so T⊥'s ops are set here.
	var init []history.Op
	for k, in := range p.initKeys {
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
		if int(k) >= len(p.initKeys) || !p.initKeys[k] {
			init = append(init, history.Op{Kind: history.OpWrite, Key: k, Value: p.b.ValueID(k, 0)})
		}
	}
	for _, op := range init {
		p.b.InitWriteID(op.Key, op.Value)
	}
	return p.b.Finish()
}

// warner passes warnings to the builder, at most maxWarningsPerKind of each
// kind, and remembers how many it held back.
type refWarner struct {
	b       *history.Builder
	count   [numKinds]int
	omitted [numKinds]history.Pos // first held-back warning of each kind
}

func (w *refWarner) add(k warnKind, pos history.Pos, format string, args ...any) {
	w.count[k]++
	if w.count[k] <= maxWarningsPerKind {
		w.b.Warn(pos, format, args...)
	} else if w.count[k] == maxWarningsPerKind+1 {
		w.omitted[k] = pos
	}
}

// flush adds one summary warning per kind that overflowed.
func (w *refWarner) flush() {
	for k, n := range w.count {
		if n > maxWarningsPerKind {
			w.b.Warn(w.omitted[k], "%d more %s warnings omitted (%d in all), the first of them here",
				n-maxWarningsPerKind, kindNames[k], n)
		}
	}
}
