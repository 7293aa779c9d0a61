package jsonl

import (
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// The fields of one line of the format: which line kind may carry which
// field, and each field's value, read with the scanner of scan.go.

// Field bits, to detect duplicates and to check which line kind may carry
// which field.
const (
	fHyperiso uint32 = 1 << iota
	fInit
	fMeta
	fSessions
	fKeyNames
	fID
	fSession
	fStatus
	fLevel
	fOps
	fAborted
	fTime
	fOrder
	fDropped
	fTrailer
	fEnd
	fIncomplete
)

var fieldNames = map[uint32]string{
	fHyperiso: "hyperiso", fInit: "init", fMeta: "meta", fSessions: "sessions", fKeyNames: "key_names",
	fID: "id", fSession: "session", fStatus: "status", fLevel: "level", fOps: "ops", fAborted: "aborted_writes", fTime: "time", fOrder: "version_order", fDropped: "dropped",
	fTrailer: "trailer", fEnd: "end", fIncomplete: "incomplete",
}

const (
	headerFields  = fHyperiso | fInit | fMeta | fSessions | fKeyNames | fDropped | fTrailer | fIncomplete
	initFields    = fInit | fID | fOps
	txnFields     = fID | fSession | fStatus | fLevel | fOps | fTime
	abortedFields = fAborted
	orderFields   = fOrder
	endFields     = fEnd
)

// rawOp is one parsed operation; a list read's elements are
// lists[lo:hi] of the line's scratch.
// A key or value is an integer (name 0) or a string: name-1 indexes the
// line's names.
//
// An insert is an OpWrite and a delete an OpWrite without a value, both
// marked by src; a predicate read ("select") is an OpRead marked
// SrcSelect whose key and val are its key range [key, val), whose
// returned rows are rows[lo:hi] of the line's scratch, and whose kname
// (a predicate's keys are integers) is 1 + the index of its value test in
// the line's tests, 0 for none.
type rawOp struct {
	kind         history.OpKind
	src          history.OpSrc
	key, val     int64
	kname, vname int32
	lo, hi       int32
}

// selRow is one row a predicate read returned: an integer key and a value
// (an integer, or a string: name-1 indexes the line's names).
type selRow struct {
	key, val int64
	vname    int32
}

type kv struct {
	key, val     int64
	kname, vname int32
}

// fields holds one parsed line. Its slices are reused from line to line.
type fields struct {
	has        uint32
	version    int64
	initBool   bool
	initStr    string
	initCol    int
	meta       []kvString
	sessions   []int64
	keyNames   []keyName
	id         int64
	session    int64
	status     history.Status
	level      history.Level
	time       []int64
	order      []int64
	dropped    []int64
	ops        []rawOp
	lists      []int64
	listNames  []int32 // parallel to lists
	rows       []selRow
	tests      []*history.ValueTest // value tests of predicate reads (rawOp)
	orderNames []int32              // parallel to order
	names      []string
	aborted    []kv
	initIsBool bool
	trailer    bool
	incomplete bool
	end        End
	endCol     int
}

type kvString struct{ k, v string }

type keyName struct {
	key  int64
	name string
}

// lineScanner turns one line into fields. It touches nothing else, so
// that lines can be scanned ahead of the builder on another goroutine
// (parallel.go); what lenient scanning would warn about is kept in warns
// and other, and given to the builder with the line.
type lineScanner struct {
	opt   Options
	sc    scanner
	f     fields
	warns []string // messages for Builder.Warn at the line's position
	other int      // fields ignored (Dropped.Other)
	// rowKeys is scratch for a predicate read's returned keys.
	rowKeys []int64
}

// object parses one line's object into p.f.
func (p *lineScanner) object() bool {
	sc, f := &p.sc, &p.f
	f.has = 0
	f.status, f.level = history.Committed, history.LevelNone
	f.ops, f.lists, f.aborted, f.rows = f.ops[:0], f.lists[:0], f.aborted[:0], f.rows[:0]
	f.tests = f.tests[:0]
	f.listNames, f.orderNames, f.names = f.listNames[:0], f.orderNames[:0], f.names[:0]
	f.meta, f.sessions, f.keyNames = nil, nil, nil
	sc.ws()
	if !sc.expect('{', "'{' (each line is one JSON object)") {
		return false
	}
	sc.ws()
	if sc.peek() == '}' {
		sc.i++
	} else {
		for {
			sc.ws()
			col := sc.i + 1
			name, ok := sc.str("field name")
			if !ok {
				return false
			}
			bit := fieldBit(name)
			sc.ws()
			if !sc.expect(':', "':' after a field name") {
				return false
			}
			sc.ws()
			if bit == 0 || f.has&bit != 0 {
				what := "unknown field"
				if bit != 0 {
					what = "duplicate field"
				}
				if !p.opt.Lenient {
					sc.i = col - 1
					return sc.fail("%s %q", what, name)
				}
				p.warns = append(p.warns, fmt.Sprintf("column %d: %s %q ignored", col, what, name))
				p.other++
				if !sc.skip(0) {
					return false
				}
			} else {
				f.has |= bit
				if !p.value(bit) {
					return false
				}
			}
			sc.ws()
			if sc.peek() == '}' {
				sc.i++
				break
			}
			if !sc.expect(',', "',' or '}' after a field") {
				return false
			}
		}
	}
	sc.ws()
	if sc.i != len(sc.s) {
		return sc.fail("expected the end of the line after the object (one object per line), found %s", sc.found())
	}
	return true
}

func fieldBit(name []byte) uint32 {
	switch string(name) {
	case "hyperiso":
		return fHyperiso
	case "init":
		return fInit
	case "meta":
		return fMeta
	case "sessions":
		return fSessions
	case "key_names":
		return fKeyNames
	case "id":
		return fID
	case "session":
		return fSession
	case "status":
		return fStatus
	case "level":
		return fLevel
	case "ops":
		return fOps
	case "aborted_writes":
		return fAborted
	case "time":
		return fTime
	case "version_order":
		return fOrder
	case "dropped":
		return fDropped
	case "trailer":
		return fTrailer
	case "end":
		return fEnd
	case "incomplete":
		return fIncomplete
	}
	return 0
}

// value parses the value of a known field.
func (p *lineScanner) value(bit uint32) bool {
	sc, f := &p.sc, &p.f
	var ok bool
	switch bit {
	case fHyperiso:
		f.version, ok = sc.integer(`"hyperiso"`)
	case fInit:
		f.initCol = sc.i + 1
		if c := sc.peek(); c == 't' || c == 'f' {
			f.initIsBool = true
			f.initBool, ok = sc.boolean(`"init"`)
		} else {
			f.initIsBool = false
			var s []byte
			s, ok = sc.str(`"init"`)
			f.initStr = string(s)
		}
	case fMeta:
		ok = p.meta()
	case fSessions:
		ok = p.intArray(`"sessions"`, &f.sessions)
	case fKeyNames:
		ok = p.keyNames()
	case fID:
		f.id, ok = sc.integer(`"id"`)
	case fSession:
		f.session, ok = sc.integer(`"session"`)
	case fStatus:
		start := sc.i
		var s []byte
		if s, ok = sc.str(`"status"`); ok {
			if f.status, ok = history.ParseStatus(string(s)); !ok {
				sc.i = start
				return sc.fail(`"status": unknown status %q (want "committed", "aborted" or "unknown")`, s)
			}
		}
	case fLevel:
		start := sc.i
		var s []byte
		if s, ok = sc.str(`"level"`); ok {
			if f.level, ok = history.ParseLevel(string(s)); !ok || f.level == history.Mixed {
				sc.i = start
				return sc.fail(`"level": unknown level %q (want one of %s)`, s, history.LevelList(", ", func(r history.LevelRow) bool { return r.Level != history.Mixed }))
			}
		}
	case fDropped:
		start := sc.i
		f.dropped = f.dropped[:0]
		if ok = p.intArray(`"dropped"`, &f.dropped); ok && (len(f.dropped) != 3 || min(f.dropped[0], f.dropped[1], f.dropped[2]) < 0) {
			sc.i = start
			return sc.fail(`"dropped": want [transactions, operations, other items], none negative`)
		}
	case fOrder:
		f.order = f.order[:0]
		ok = p.array(`"version_order"`, func(int) bool {
			n := len(f.order)
			if !p.array(`"version_order" triple`, func(int) bool {
				v, name, ok := p.scalar(`"version_order" triple element`)
				f.order, f.orderNames = append(f.order, v), append(f.orderNames, name)
				return ok
			}) {
				return false
			}
			if len(f.order)-n != 3 {
				return sc.fail(`"version_order": want triples [key, earlier value, later value]`)
			}
			return true
		})
	case fTime:
		start := sc.i
		f.time = f.time[:0]
		if ok = p.intArray(`"time"`, &f.time); ok && (len(f.time) != 2 || f.time[0] > f.time[1]) {
			sc.i = start
			return sc.fail(`"time": want [invocation, completion] with invocation <= completion`)
		}
	case fTrailer:
		f.trailer, ok = sc.boolean(`"trailer"`)
	case fIncomplete:
		f.incomplete, ok = sc.boolean(`"incomplete"`)
	case fEnd:
		f.endCol = sc.i + 1
		ok = p.endObject()
	case fOps:
		ok = p.ops()
	case fAborted:
		ok = p.pairs()
	}
	return ok
}

// endObject parses the end line's {"transactions": n, "operations": n,
// "lines": n}: each field exactly once, none negative.
func (p *lineScanner) endObject() bool {
	sc, f := &p.sc, &p.f
	const want = `"end": want {"transactions": n, "operations": n, "lines": n}`
	if !sc.expect('{', want) {
		return false
	}
	var seen [3]bool
	for {
		sc.ws()
		start := sc.i
		k, ok := sc.str(want)
		if !ok {
			return false
		}
		sc.ws()
		if !sc.expect(':', "':'") {
			return false
		}
		sc.ws()
		i := slices.Index([]string{"transactions", "operations", "lines"}, string(k))
		if i < 0 || seen[i] {
			sc.i = start
			return sc.fail("%s, found the field %q", want, k)
		}
		seen[i] = true
		n, ok := sc.integer(fmt.Sprintf(`"end" %q`, k))
		if !ok {
			return false
		}
		if n < 0 {
			sc.i = start
			return sc.fail(`"end" %q is negative`, k)
		}
		*[]*int64{&f.end.Txns, &f.end.Ops, &f.end.Lines}[i] = n
		sc.ws()
		if sc.peek() == '}' {
			sc.i++
			break
		}
		if !sc.expect(',', `"end": ',' or '}'`) {
			return false
		}
	}
	if !seen[0] || !seen[1] || !seen[2] {
		return sc.fail(want)
	}
	return true
}

// array calls elem for each element of a JSON array.
func (p *lineScanner) array(what string, elem func(i int) bool) bool {
	sc := &p.sc
	if !sc.expect('[', what+": an array '['") {
		return false
	}
	sc.ws()
	if sc.peek() == ']' {
		sc.i++
		return true
	}
	for i := 0; ; i++ {
		sc.ws()
		if !elem(i) {
			return false
		}
		sc.ws()
		if sc.peek() == ']' {
			sc.i++
			return true
		}
		if !sc.expect(',', what+": ',' or ']'") {
			return false
		}
	}
}

func (p *lineScanner) intArray(what string, out *[]int64) bool {
	return p.array(what, func(int) bool {
		v, ok := p.sc.integer(what + " element")
		*out = append(*out, v)
		return ok
	})
}

func (p *lineScanner) meta() bool {
	sc, f := &p.sc, &p.f
	if !sc.expect('{', `"meta": an object '{'`) {
		return false
	}
	sc.ws()
	if sc.peek() == '}' {
		sc.i++
		return true
	}
	for {
		sc.ws()
		k, ok := sc.str(`"meta" key`)
		if !ok {
			return false
		}
		ks := string(k)
		sc.ws()
		if !sc.expect(':', "':'") {
			return false
		}
		sc.ws()
		v, ok := sc.str(fmt.Sprintf(`"meta" value of %q (values are strings)`, ks))
		if !ok {
			return false
		}
		f.meta = append(f.meta, kvString{ks, string(v)})
		sc.ws()
		if sc.peek() == '}' {
			sc.i++
			return true
		}
		if !sc.expect(',', `"meta": ',' or '}'`) {
			return false
		}
	}
}

func (p *lineScanner) keyNames() bool {
	sc, f := &p.sc, &p.f
	return p.array(`"key_names"`, func(i int) bool {
		what := fmt.Sprintf(`"key_names"[%d]`, i)
		var k int64
		var n []byte
		ok := p.pair(what+": a pair [key, \"name\"]", what+": ','", what+": ']' (a pair has two elements)",
			func() (ok bool) { k, ok = sc.integer(what + " key"); return ok },
			func() (ok bool) { n, ok = sc.str(what + " name"); return ok })
		if ok {
			f.keyNames = append(f.keyNames, keyName{k, string(n)})
		}
		return ok
	})
}

func (p *lineScanner) pairs() bool {
	f := &p.f
	return p.array(`"aborted_writes"`, func(int) bool {
		var w kv
		ok := p.pair(`"aborted_writes": a pair [key, value]`, `aborted write: ','`, "aborted write: ']' (a pair has two elements)",
			func() (ok bool) { w.key, w.kname, ok = p.scalar("aborted write key"); return ok },
			func() (ok bool) { w.val, w.vname, ok = p.scalar("aborted write value"); return ok })
		if ok {
			f.aborted = append(f.aborted, w)
		}
		return ok
	})
}

// pair scans "[first, second]", each element by its function, with the
// caller's messages for the opening bracket, the comma and the closing one.
func (p *lineScanner) pair(open, comma, close string, first, second func() bool) bool {
	sc := &p.sc
	if !sc.expect('[', open) {
		return false
	}
	sc.ws()
	if !first() {
		return false
	}
	sc.ws()
	if !sc.expect(',', comma) {
		return false
	}
	sc.ws()
	if !second() {
		return false
	}
	sc.ws()
	return sc.expect(']', close)
}

// ops parses the "ops" array. It is the hot loop of the reader, so it
// avoids closures and formats messages only on failure.
func (p *lineScanner) ops() bool {
	sc := &p.sc
	if !sc.expect('[', `"ops": an array '['`) {
		return false
	}
	sc.ws()
	if sc.peek() == ']' {
		sc.i++
		return true
	}
	for n := 0; ; n++ {
		sc.ws()
		if !p.op(n) {
			return false
		}
		sc.ws()
		switch sc.peek() {
		case ']':
			sc.i++
			return true
		case ',':
			sc.i++
		default:
			return sc.fail(`"ops": expected ',' or ']' after ops[%d], found %s`, n, sc.found())
		}
	}
}

func (p *lineScanner) op(n int) bool {
	sc, f := &p.sc, &p.f
	if sc.peek() != '[' {
		return sc.fail(`ops[%d]: expected an operation ["r"|"w"|"append"|"insert", key, value], ["delete", key] or ["select", predicate, rows], found %s`, n, sc.found())
	}
	sc.i++
	sc.ws()
	name, ok := sc.str("operation name")
	if !ok {
		return sc.wrap(n)
	}
	var op rawOp
	switch string(name) {
	case "r":
		op.kind = history.OpRead
	case "w":
		op.kind = history.OpWrite
	case "append":
		op.kind = history.OpAppend
	case "insert":
		op.kind, op.src = history.OpWrite, history.SrcInsert
	case "delete":
		op.kind, op.src = history.OpWrite, history.SrcDelete
	case "select":
		return p.selectOp(n)
	default:
		return sc.fail(`ops[%d]: unknown operation %q (want "r", "w", "append", "insert", "delete" or "select")`, n, name)
	}
	sc.ws()
	if sc.peek() != ',' {
		if op.src == history.SrcDelete {
			return sc.fail(`ops[%d]: expected 2 elements ["delete", key], found %s after the name`, n, sc.found())
		}
		return sc.fail(`ops[%d]: expected 3 elements [op, key, value], found %s after the name`, n, sc.found())
	}
	sc.i++
	sc.ws()
	if op.key, op.kname, ok = p.scalar("key"); !ok {
		return sc.wrap(n)
	}
	sc.ws()
	if op.src == history.SrcDelete {
		if sc.peek() != ']' {
			if sc.peek() == ',' {
				return sc.fail(`ops[%d]: too many elements (a delete is ["delete", key])`, n)
			}
			return sc.fail(`ops[%d]: expected ']' after the key, found %s`, n, sc.found())
		}
		sc.i++
		op.val = history.EmptyList
		f.ops = append(f.ops, op)
		return true
	}
	if sc.peek() != ',' {
		return sc.fail(`ops[%d]: expected 3 elements [op, key, value], found %s after the key`, n, sc.found())
	}
	sc.i++
	sc.ws()
	switch c := sc.peek(); {
	case c == '[' && op.kind == history.OpRead:
		op.kind = history.OpReadList
		op.lo = int32(len(f.lists))
		sc.i++
		sc.ws()
		if sc.peek() == ']' {
			sc.i++
		} else {
			for {
				sc.ws()
				v, name, ok := p.scalar("list element")
				if !ok {
					return sc.wrap(n)
				}
				f.lists, f.listNames = append(f.lists, v), append(f.listNames, name)
				sc.ws()
				if sc.peek() == ']' {
					sc.i++
					break
				}
				if sc.peek() != ',' {
					return sc.fail(`ops[%d]: expected ',' or ']' in the list, found %s`, n, sc.found())
				}
				sc.i++
			}
		}
		op.hi = int32(len(f.lists))
	case c == 'n' && op.kind == history.OpRead:
		if !sc.literal("null") {
			return false
		}
		op.val = history.EmptyList
	default:
		if c != '-' && c != '"' && (c < '0' || c > '9') {
			if op.kind == history.OpRead {
				return sc.fail("ops[%d] value: expected an integer, a string, a list or null, found %s", n, sc.found())
			}
			return sc.fail("ops[%d] value: expected an integer or a string, found %s", n, sc.found())
		}
		if op.val, op.vname, ok = p.scalar("value"); !ok {
			return sc.wrap(n)
		}
	}
	sc.ws()
	if sc.peek() != ']' {
		if sc.peek() == ',' {
			return sc.fail(`ops[%d]: too many elements (an operation is [op, key, value])`, n)
		}
		return sc.fail(`ops[%d]: expected ']' after the value, found %s`, n, sc.found())
	}
	sc.i++
	f.ops = append(f.ops, op)
	return true
}

// scalar reads a key or value: an integer, or a non-empty string, kept by
// name (name > 0 indexes the line's names).
func (p *lineScanner) scalar(what string) (n int64, name int32, ok bool) {
	sc, f := &p.sc, &p.f
	switch c := sc.peek(); {
	case c == '-' || c >= '0' && c <= '9':
		n, ok = sc.integer(what)
		return n, 0, ok
	case c != '"':
		return 0, 0, sc.fail("%s: expected an integer or a string, found %s", what, sc.found())
	}
	start := sc.i
	s, ok := sc.str(what)
	if !ok {
		return 0, 0, false
	}
	if len(s) == 0 {
		sc.i = start
		return 0, 0, sc.fail("%s: the empty string is not a key or value", what)
	}
	f.names = append(f.names, string(s))
	return 0, int32(len(f.names)), true
}

// smallRows is how many rows of a predicate read are checked for a
// repeated key one by one (naming the row); beyond, the keys are sorted.
const smallRows = 16
