// Package jsonl owns hyperiso's native history format: JSON Lines, one
// object per line — an optional header, an optional initial-transaction
// line, one line per transaction, and lines of aborted writes. It reads
// (Read, Parse) and writes (Write) the format; Write followed by Read
// reproduces a history exactly, so the format is also how other readers'
// histories are converted, stored and compared. FORMAT.md specifies it.
package jsonl

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/formats/internal/lineio"
	"github.com/hyperiso/hyperiso/history"
)

// Format is the name recorded in History.Format.
const Format = "jsonl"

// Version is the format version written in the header and accepted by Read.
const Version = 1

// Options controls the reader.
type Options struct {
	// Lenient skips a line that cannot be read (bad JSON, a bad field, a
	// duplicate transaction id, a misplaced header or init line) and
	// ignores unknown fields, recording a warning for each, instead of
	// failing. An empty input yields an empty history.
	Lenient bool
	// Prefix reads the start of a history that is still being written
	// (package online): a header saying "incomplete" and a promised end
	// line that has not come yet are what such a start holds, not
	// errors, and nothing is counted as dropped for them.
	Prefix bool
	// LineOf, when set, gives the number by which the n-th line read is
	// named in positions and errors (package online reads a stream with
	// some of its lines folded away).
	LineOf func(n int) int
}

// Read reads the JSONL history in the file at path.
func Read(path string, opt Options) (*history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path, opt)
}

// Init kinds as written in the header's "init" field.
const (
	initUnset    = ""
	initZero     = "zero"
	initImplicit = "implicit"
	initExplicit = "explicit"
	initNone     = "none"
)

// defaultInitID is T⊥'s id when no init line gives one.
func defaultInitID(kind string) int64 {
	if kind == initZero || kind == initImplicit {
		return -1
	}
	return 0
}

type parser struct {
	lineScanner
	name string
	b    *history.Builder
	pos  history.Pos

	lines     int // non-blank lines so far
	kind      string
	initSeen  bool
	initID    int64
	initPos   history.Pos
	initOps   []history.Version
	initKeys  map[history.KeyID]bool
	txns      int
	ids       idLines                // transaction id -> line
	listish   map[history.KeyID]bool // keys whose initial value is EmptyList under "zero"
	listOrder []history.KeyID
	list      []history.ValueID // scratch for one list read
	raw       []history.RawOp   // scratch for addRaw
	rows      []history.Version // scratch for a predicate read's rows
	emptyWarn bool

	// parsed says the current line's object was read whole (so its kind
	// and ops are known); ignored counts what lenient reading ignored of
	// it (fields), given to the builder if the line is kept.
	parsed  bool
	ignored history.Dropped

	// promised says the header promised an end line (End); ended that it
	// was read, at line endAt. seen counts the non-blank lines, kept or
	// skipped, and ops the operations of the transaction lines kept.
	// incomplete says the header said "incomplete":true (read leniently):
	// the end line is then not expected.
	promised   bool
	incomplete bool
	ended      bool
	endAt      int
	seen       int
	ops        int64

	// size is how many bytes the input holds, if known (a hint: reading
	// never relies on it; Builder.ReserveRest).
	size int64
}

// smallInput is the size of a file too small for the pipelined reader to
// pay for its goroutine and batches.
const smallInput = 64 << 10

// Parse reads a JSONL history from r; name is used in positions and errors.
func Parse(r io.Reader, name string, opt Options) (*history.History, error) {
	p := &parser{
		lineScanner: lineScanner{opt: opt},
		name:        name,
		b:           history.NewBuilder(name, Format),
		size:        lineio.SizeOf(r),
	}
	var err error
	if pipelined() && (p.size < 0 || p.size >= smallInput) {
		p.b.SetParallel(parallelBatch)
		err = p.readPipelined(r)
	} else {
		err = p.readSequential(r)
	}
	if err != nil {
		return nil, err
	}
	if p.lines == 0 {
		pos := history.Pos{File: name, Line: 1}
		if !opt.Lenient {
			return nil, history.Errorf(pos, "empty file: expected JSON objects, one per line")
		}
		p.b.Warn(pos, "empty file")
	}
	return p.finish()
}

// readSequential reads and builds line by line on one goroutine.
func (p *parser) readSequential(r io.Reader) error {
	lr := newLineReader(r)
	for {
		line, lineNo, err := lr.next()
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		if line == nil {
			return nil
		}
		if e := p.line(line, lineNo); e != nil {
			return e
		}
		p.b.ReserveRest(lr.read, p.size)
	}
}

// line reads one line; in lenient mode a bad line becomes a warning.
func (p *parser) line(line []byte, lineNo int) error {
	if blank(line) {
		return nil
	}
	p.startLine(lineNo)
	return p.endLine(p.parseLine(line))
}

func (p *parser) startLine(lineNo int) {
	if p.opt.LineOf != nil {
		lineNo = p.opt.LineOf(lineNo)
	}
	p.pos = history.Pos{File: p.name, Line: lineNo}
	p.seen++
	p.parsed, p.ignored = false, history.Dropped{}
}

// endLine finishes a line parseLine or scanned has read: kept, or
// skipped with a warning (lenient), or the error.
func (p *parser) endLine(err *history.InputError) error {
	if err == nil {
		p.lines++
		p.b.Drop(p.ignored)
		return nil
	}
	if !p.opt.Lenient {
		return err
	}
	p.b.Warn(p.pos, "line skipped: %s", err.Msg)
	p.b.Drop(p.skipped())
	return nil
}

// skipped says what a line skipped whole held, as far as it was read.
func (p *parser) skipped() history.Dropped {
	f := &p.f
	switch {
	case !p.parsed, f.has&fHyperiso != 0:
		return history.Dropped{Other: 1}
	case f.has&fInit == 0 && f.has&fAborted != 0:
		return history.Dropped{Ops: len(f.aborted)}
	}
	// A transaction line, or the init line (T⊥'s writes): as parseLine
	// tells them apart.
	return history.Dropped{Txns: 1, Ops: len(f.ops)}
}

func (p *parser) errorf(col int, format string, args ...any) *history.InputError {
	msg := fmt.Sprintf(format, args...)
	if col > 0 {
		msg = fmt.Sprintf("column %d: %s", col, msg)
	}
	return history.Errorf(p.pos, "%s", msg)
}

func (p *parser) parseLine(line []byte) *history.InputError {
	if !utf8.Valid(line) {
		return p.errorf(0, "line is not valid UTF-8")
	}
	if p.lines == 0 && len(line) >= 3 && string(line[:3]) == "\ufeff" {
		if !p.opt.Lenient {
			return p.errorf(1, "byte order mark at the start of the file")
		}
		p.b.Warn(p.pos, "byte order mark ignored")
		line = line[3:]
	}
	p.sc.reset(line)
	p.warns, p.other = p.warns[:0], 0
	if !p.object() {
		return p.scanned(p.sc.err)
	}
	return p.scanned(nil)
}

// scanned goes on with a line once object has read it into p.f (with the
// warnings and error that gave): everything that needs the builder.
func (p *parser) scanned(err *scanErr) *history.InputError {
	for _, w := range p.warns {
		p.b.Warn(p.pos, "%s", w)
	}
	p.ignored.Other += p.other
	if err != nil {
		return p.errorf(err.col, "%s", err.msg)
	}
	p.parsed = true
	f := &p.f
	if p.ended {
		return p.errorf(0, "a line after the end line (line %d), which ends the history: two files joined, or appended to", p.endAt)
	}
	switch {
	case f.has&fEnd != 0:
		return p.end()
	case f.has&fHyperiso != 0:
		return p.header()
	case f.has&fInit != 0:
		return p.initLine()
	case f.has&fAborted != 0:
		if err := p.allowed(abortedFields, "an aborted_writes line"); err != nil {
			return err
		}
		for _, w := range f.aborted {
			k := p.keyID(w.key, w.kname)
			p.b.AbortedWriteID(k, p.valID(k, w.val, w.vname))
		}
		return nil
	case f.has&fOrder != 0:
		if err := p.allowed(orderFields, "a version_order line"); err != nil {
			return err
		}
		for i := 0; i+2 < len(f.order); i += 3 {
			k := p.keyID(f.order[i], f.orderNames[i])
			p.b.VersionHintID(k, p.valID(k, f.order[i+1], f.orderNames[i+1]), p.valID(k, f.order[i+2], f.orderNames[i+2]))
		}
		return nil
	}
	return p.txn()
}

// allowed rejects fields that do not belong to the line kind (strict) or
// ignores them with a warning (lenient).
func (p *parser) allowed(mask uint32, kind string) *history.InputError {
	extra := p.f.has &^ mask
	if extra == 0 {
		return nil
	}
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if extra&bit == 0 {
			continue
		}
		if !p.opt.Lenient {
			return p.errorf(0, "field %q is not allowed in %s", fieldNames[bit], kind)
		}
		p.b.Warn(p.pos, "field %q ignored: not allowed in %s", fieldNames[bit], kind)
		switch bit {
		case fOps:
			p.ignored.Ops += len(p.f.ops)
		case fAborted:
			p.ignored.Ops += len(p.f.aborted)
		default:
			p.ignored.Other++
		}
	}
	return nil
}

func (p *parser) header() *history.InputError {
	f := &p.f
	if err := p.allowed(headerFields, "the header"); err != nil {
		return err
	}
	if p.lines > 0 {
		return p.errorf(0, "the header (the object with \"hyperiso\") must be the first line")
	}
	if f.version != Version {
		return p.errorf(0, "unsupported format version %d (this reader knows %d)", f.version, Version)
	}
	if f.has&fIncomplete != 0 && f.incomplete && !p.opt.Prefix {
		if !p.opt.Lenient {
			return p.errorf(0, "%s; the transactions recorded so far can be read with --lenient", incompleteMsg)
		}
		// Not a line skipped: the header applies, and the rest of the
		// history is what was lost.
		p.b.Warn(p.pos, "%s; read as far as it goes, without what came after", incompleteMsg)
		p.b.Drop(history.Dropped{Other: 1})
		p.incomplete = true
	}
	if f.has&fInit != 0 {
		if f.initIsBool {
			return p.errorf(f.initCol, `header field "init": expected "zero", "implicit", "explicit" or "none"`)
		}
		switch f.initStr {
		case initZero, initImplicit, initExplicit, initNone:
		default:
			return p.errorf(f.initCol, `header field "init": unknown kind %q (want "zero", "implicit", "explicit" or "none")`, f.initStr)
		}
	}
	seen := make(map[int64]bool, len(f.sessions))
	for _, s := range f.sessions {
		if seen[s] {
			return p.errorf(0, "session %d listed twice in \"sessions\"", s)
		}
		seen[s] = true
	}
	named := make(map[int64]bool, len(f.keyNames))
	for _, kn := range f.keyNames {
		if named[kn.key] {
			return p.errorf(0, "key %d named twice in \"key_names\"", kn.key)
		}
		named[kn.key] = true
	}
	metaSeen := make(map[string]bool, len(f.meta))
	for _, m := range f.meta {
		if metaSeen[m.k] {
			return p.errorf(0, "meta key %q given twice", m.k)
		}
		metaSeen[m.k] = true
	}
	// Valid: apply.
	if f.has&fInit != 0 {
		p.kind = f.initStr
	}
	p.promised = f.has&fTrailer != 0 && f.trailer
	for _, m := range f.meta {
		p.b.SetMeta(m.k, m.v)
	}
	for _, s := range f.sessions {
		p.b.Session(s)
	}
	for _, kn := range f.keyNames {
		p.b.SetKeyName(kn.key, kn.name)
	}
	// What a lenient reading of the history's source skipped, carried
	// over so that a verdict on the converted file still says so.
	if f.has&fDropped != 0 {
		p.b.Drop(history.Dropped{Txns: int(f.dropped[0]), Ops: int(f.dropped[1]), Other: int(f.dropped[2])})
	}
	return nil
}

func (p *parser) initLine() *history.InputError {
	f := &p.f
	if err := p.allowed(initFields, "the init line"); err != nil {
		return err
	}
	if !f.initIsBool || !f.initBool {
		return p.errorf(f.initCol, `field "init": expected true (an init line) or a header with "hyperiso": %d`, Version)
	}
	switch {
	case p.initSeen:
		return p.errorf(0, "a second init line (the first is on line %d)", p.initPos.Line)
	case p.txns > 0:
		return p.errorf(0, "the init line must precede all transactions")
	case p.kind == initNone && len(f.ops) > 0:
		return p.errorf(0, `the header says "init": "none" but the init line writes`)
	}
	seen := make(map[any]bool, len(f.ops))
	for i, op := range f.ops {
		if op.kind != history.OpWrite {
			return p.errorf(0, "ops[%d]: the init line may only write (\"w\"), found %q", i, opName(op.kind))
		}
		var id any = op.key
		if op.kname > 0 {
			id = f.names[op.kname-1]
		}
		if seen[id] {
			return p.errorf(0, "ops[%d]: key %v written twice by the init line", i, id)
		}
		seen[id] = true
	}
	if p.kind == initUnset {
		p.kind = initExplicit
	}
	p.initSeen = true
	p.initPos = p.pos
	p.initID = defaultInitID(p.kind)
	if f.has&fID != 0 {
		p.initID = f.id
	}
	p.initKeys = make(map[history.KeyID]bool, len(f.ops))
	p.initOps = make([]history.Version, len(f.ops))
	for i, op := range f.ops {
		// Intern now so that KeyIDs follow the file.
		k := p.keyID(op.key, op.kname)
		p.initKeys[k] = true
		p.initOps[i] = history.Version{Key: k, Value: p.valID(k, op.val, op.vname)}
	}
	return nil
}

func opName(k history.OpKind) string {
	switch k {
	case history.OpWrite:
		return "w"
	case history.OpAppend:
		return "append"
	}
	return "r"
}

func (p *parser) txn() *history.InputError {
	f := &p.f
	if err := p.allowed(txnFields, "a transaction line"); err != nil {
		return err
	}
	switch {
	case f.has&fSession == 0:
		return p.errorf(0, `missing field "session" (a transaction line needs "session" and "ops")`)
	case f.has&fOps == 0:
		return p.errorf(0, `missing field "ops" (a transaction line needs "session" and "ops")`)
	}
	id := int64(p.txns + 1)
	if f.has&fID != 0 {
		id = f.id
	}
	if prev, dup := p.ids.get(id); dup {
		return p.errorf(0, "transaction id %d already used on line %d", id, prev)
	}
	var tm [2]int64
	if f.has&fTime != 0 {
		tm = [2]int64{f.time[0], f.time[1]}
	}
	t, track := p.beginTxn(id, f.session, len(f.ops), f.status, f.level, f.has&fTime != 0, tm)
	if p.addRaw(t, id, track) {
		return nil
	}
	b := p.b
	for _, op := range f.ops {
		if op.src != history.SrcPlain {
			p.rowOp(t, op, track)
			continue
		}
		k := p.keyID(op.key, op.kname)
		switch op.kind {
		case history.OpRead:
			b.ReadID(t, k, p.valID(k, op.val, op.vname))
			if track && op.vname == 0 && op.val == history.EmptyList {
				p.markListish(k)
			}
		case history.OpWrite:
			b.WriteID(t, k, p.valID(k, op.val, op.vname))
		case history.OpAppend:
			b.AppendID(t, k, p.valID(k, op.val, op.vname))
			if track {
				p.markListish(k)
			}
		case history.OpReadList:
			p.list = p.list[:0]
			for i := op.lo; i < op.hi; i++ {
				p.list = append(p.list, p.valID(k, f.lists[i], f.listNames[i]))
			}
			b.ReadListID(t, k, p.list, b.ValueID(k, history.EmptyList))
			if track {
				p.markListish(k)
			}
		}
		if op.kind.IsWrite() && op.vname == 0 && op.val == history.EmptyList && !p.emptyWarn {
			p.emptyWarn = true
			b.Warn(p.pos, "transaction %d writes %d, the value that stands for an empty list or a missing key", id, op.val)
		}
	}
	return nil
}

// beginTxn starts transaction id, whose line has passed every check, with
// nops operations to come; track says whether its keys' initial values
// are to be told apart (markListish).
func (p *parser) beginTxn(id, session int64, nops int, status history.Status, level history.Level, hasTime bool, tm [2]int64) (history.TxnID, bool) {
	if p.kind == initUnset {
		p.kind = initZero
	}
	p.txns++
	p.ops += int64(nops)
	p.ids.set(id, p.pos.Line)
	b := p.b
	t := b.Begin(b.Session(session), id, status, p.pos)
	if level != history.LevelNone {
		b.SetLevel(t, level)
	}
	if hasTime {
		b.SetInterval(t, tm[0], tm[1])
	}
	return t, p.kind == initZero
}

// addRaw adds the line's operations to t at once (Builder.AddRaw) when
// they are all plain reads, writes and appends of integers, the common
// case, with the same effects as txn's loop; otherwise it adds nothing
// and says so.
func (p *parser) addRaw(t history.TxnID, id int64, track bool) bool {
	f := &p.f
	raw := p.raw[:0]
	for _, op := range f.ops {
		if op.kname != 0 || op.vname != 0 || op.kind == history.OpReadList || op.src != history.SrcPlain {
			return false
		}
		raw = append(raw, history.RawOp{Kind: op.kind, Key: op.key, Value: op.val})
	}
	p.raw = raw
	p.addRawOps(t, id, track, raw)
	return true
}

// addRawOps is addRaw for operations already checked and converted.
func (p *parser) addRawOps(t history.TxnID, id int64, track bool, raw []history.RawOp) {
	b := p.b
	b.AddRaw(t, raw)
	if !track && p.emptyWarn {
		return
	}
	// Keys only, already interned: Ops would wait for the values
	// (Builder.SetParallel).
	for _, op := range raw {
		if track && (op.Kind == history.OpAppend || op.Kind == history.OpRead && op.Value == history.EmptyList) {
			p.markListish(b.KeyID(op.Key))
		}
		if op.Kind.IsWrite() && op.Value == history.EmptyList && !p.emptyWarn {
			p.emptyWarn = true
			b.Warn(p.pos, "transaction %d writes %d, the value that stands for an empty list or a missing key", id, op.Value)
		}
	}
}

// keyID interns a key: an integer, or a string (name > 0).
func (p *parser) keyID(key int64, name int32) history.KeyID {
	if name > 0 {
		return p.b.KeyNamed(p.f.names[name-1])
	}
	return p.b.KeyID(key)
}

// valID interns a value of k: an integer, or a string (name > 0).
func (p *parser) valID(k history.KeyID, val int64, name int32) history.ValueID {
	if name > 0 {
		return p.b.ValueNamed(k, p.f.names[name-1])
	}
	return p.b.ValueID(k, val)
}

func (p *parser) markListish(key history.KeyID) {
	if p.listish == nil {
		p.listish = make(map[history.KeyID]bool)
	}
	if !p.listish[key] {
		p.listish[key] = true
		p.listOrder = append(p.listOrder, key)
	}
}

// end checks the end line against what was read before it.
func (p *parser) end() *history.InputError {
	if err := p.allowed(endFields, "the end line"); err != nil {
		return err
	}
	p.ended, p.endAt = true, p.pos.Line
	got := End{Txns: int64(p.txns), Ops: p.ops, Lines: int64(p.seen - 1)}
	if got == p.f.end {
		return nil
	}
	msg := fmt.Sprintf("the end line states %s but the file has %s before it: lines lost, added or changed", p.f.end, got)
	if !p.opt.Lenient {
		return p.errorf(p.f.endCol, "%s", msg)
	}
	p.b.Warn(p.pos, "%s", msg)
	p.b.Drop(history.Dropped{Other: 1})
	return nil
}

// incompleteMsg is the error (and, with --lenient, the warning) for a
// header with "incomplete":true (IncompleteField).
const incompleteMsg = "history incomplete: its recording was cut short (killed or out of disk)"

// finish builds T⊥ and the history.
func (p *parser) finish() (*history.History, error) {
	// An incomplete history lacks its end line: the header's warning
	// says so already, and counted the loss once.
	if p.promised && !p.ended && !p.incomplete && !p.opt.Prefix {
		pos := history.Pos{File: p.name, Line: p.pos.Line}
		msg := fmt.Sprintf("truncated: the header promises an end line {\"end\": ...} but the file ends after line %d without one", p.pos.Line)
		if !p.opt.Lenient {
			return nil, history.Errorf(pos, "%s", msg)
		}
		p.b.Warn(pos, "%s; read as far as it goes", msg)
		p.b.Drop(history.Dropped{Other: 1})
	}
	kind := p.kind
	if kind == initUnset { // no header kind, init line or transaction
		kind = initZero
	}
	id := defaultInitID(kind)
	if p.initSeen {
		id = p.initID
	}
	if kind != initNone {
		if line, ok := p.ids.get(id); ok {
			return nil, history.Errorf(history.Pos{File: p.name, Line: line},
				"transaction id %d is also the initial transaction's id (give the init line another \"id\")", id)
		}
	}
	b := p.b
	ops := p.initOps
	if kind == initZero {
		for _, k := range p.listOrder {
			if !p.initKeys[k] {
				ops = append(ops, history.Version{Key: k, Value: b.ValueID(k, history.EmptyList)})
			}
		}
	}
	b.SetInit(initKindOf(kind), id)
	b.SetInitPos(p.initPos)
	for _, w := range ops {
		b.InitWriteID(w.Key, w.Value)
	}
	if kind == initZero {
		b.InitAllKeys(0)
	}
	return b.Finish(), nil
}

func initKindOf(kind string) history.InitKind {
	switch kind {
	case initZero, initImplicit:
		return history.InitImplicit
	case initExplicit:
		return history.InitExplicit
	}
	return history.InitNone
}
