// Package viper reads the JSON history logs of the Viper snapshot-isolation
// checker (docs/formats.md): a directory with one J<n>.log file per client
// session, each line one transaction {"value": [[op, key, value, flag], …]}.
// It owns the syntax, the order of the files, the mapping onto
// history.History and the format's errors and warnings.
//
// The mapping, following what Viper's own loader does with these files:
// sessions in numeric order of <n> (session id n); transactions numbered
// 1, 2, 3, … in that order, all committed; ["w", k, v, true] writes v to k,
// ["w", k, v, false] is a write that did not take effect (an aborted
// write); ["r", k, v, dead] reads v, or an absent row when v is null or
// "nil" (never written) or dead is true (deleted). Viper's range workload
// (inserts, deletes and range queries) is read into the model's rows and
// predicate reads (rows.go). A transaction marked "isInitial": true that
// is alone in its file is the initial transaction; otherwise every key
// starts as nil.
package viper

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hyperiso/hyperiso/formats/internal/lineio"
	"github.com/hyperiso/hyperiso/history"
)

// Format is the name recorded in History.Format.
const Format = "viper"

// InitID is the id of the initial transaction, as in Viper.
const InitID int64 = 0

// Options controls the reader.
type Options struct {
	// Lenient skips a line that is not a transaction, and drops a
	// micro-operation that is malformed or of a kind hyperiso does not
	// read, each with a warning, instead of failing.
	Lenient bool
}

// maxLine bounds the bytes of one line (one transaction, which for the
// initial state holds a write per key); a longer line is only quoted.
const maxLine = 1 << 30

// Log is one session's log: Name is its file name (J<n>.log decides the
// session order and id) and Data its bytes.
type Log struct {
	Name string
	Data io.Reader
}

// IsLogName reports whether a file name is a Viper log's, J<n>.log, and
// returns n.
func IsLogName(base string) (int64, bool) {
	s, ok := strings.CutPrefix(base, "J")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".log")
	if !ok || s == "" || (s[0] == '0' && len(s) > 1) || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// Read reads the Viper history at path: a directory of J<n>.log files, or
// one such file (a history of one session).
func Read(path string, opt Options) (*history.History, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return Parse(f, path, opt)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var logs []Log
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, e := range entries {
		if _, ok := IsLogName(e.Name()); !ok {
			continue
		}
		p := filepath.Join(path, e.Name())
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, history.Errorf(history.Pos{File: p, Offset: -1}, "not a regular file; every J<n>.log of a Viper history must be a session log")
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		logs = append(logs, Log{Name: p, Data: f})
	}
	if len(logs) == 0 {
		return nil, history.Errorf(history.Pos{File: path, Offset: -1}, "no J<n>.log file in the directory: not a Viper history")
	}
	return ParseLogs(path, logs, opt)
}

// Parse reads one Viper log from r as a history of one session; name is
// used in positions and, when it is J<n>.log, gives the session id.
func Parse(r io.Reader, name string, opt Options) (*history.History, error) {
	return ParseLogs(name, []Log{{Name: name, Data: r}}, opt)
}

// ParseLogs reads a Viper history from logs, ordered by the <n> of their
// names J<n>.log (other names after them, by name); source names the
// history.
func ParseLogs(source string, logs []Log, opt Options) (*history.History, error) {
	type sess struct {
		log Log
		id  int64
		ok  bool
	}
	ss := make([]sess, len(logs))
	for i, l := range logs {
		ss[i].log = l
		ss[i].id, ss[i].ok = IsLogName(filepath.Base(l.Name))
	}
	slices.SortStableFunc(ss, func(a, b sess) int {
		switch {
		case a.ok && b.ok:
			return cmp.Compare(a.id, b.id)
		case a.ok:
			return -1
		case b.ok:
			return 1
		}
		return strings.Compare(a.log.Name, b.log.Name)
	})
	next := int64(0)
	for _, s := range ss {
		if s.ok {
			next = max(next, s.id+1)
		}
	}
	p := &parser{opt: opt, b: history.NewBuilder(source, Format), w: &history.WarningLog{}}
	for _, s := range ss {
		n := lineio.SizeOf(s.log.Data)
		if n < 0 {
			p.size = -1
			break
		}
		p.size += n
	}
	if runtime.GOMAXPROCS(0) > 1 {
		// Values are interned on two cores: nothing here needs them
		// back but an aborted write, which waits for them.
		p.b.SetParallel(history.ParallelBatch)
	}
	for i := range ss {
		if !ss[i].ok {
			ss[i].id = next
			next++
		}
		if err := p.log(ss[i].log, ss[i].id); err != nil {
			return nil, err
		}
	}
	return p.finish(source)
}

type parser struct {
	opt     Options
	b       *history.Builder
	w       *history.WarningLog
	nextTxn int64
	init    history.TxnID // the initial transaction, 0 if none
	initPos history.Pos
	dropped history.Dropped
	fast    fastLine        // the line scanFast read
	raw     []history.RawOp // its operations, for the builder
	// size is what all the logs hold (-1: unknown), read how much of it
	// has been read: hints for the builder (ReserveRest).
	size, read int64
}

// txnLine is one line of a log.
type txnLine struct {
	Value     *[]json.RawMessage `json:"value"`
	IsInitial *bool              `json:"isInitial"`
}

func (p *parser) log(l Log, id int64) error {
	br := bufio.NewReaderSize(l.Data, 1<<16)
	s := p.b.Session(id)
	lineNo, txns := 0, 0
	var initAt history.TxnID
	for {
		line, tooLong, err := lineio.ReadLongLine(br, maxLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", l.Name, err)
		}
		lineNo++
		p.read += int64(len(line)) + 1
		p.b.ReserveRest(p.read, p.size)
		pos := history.Pos{File: l.Name, Line: lineNo}
		if len(bytes.TrimSpace(line)) == 0 {
			if err := p.bad(pos, false, "blank line (Viper joins the lines of a log into one JSON array, which a blank line breaks)"); err != nil {
				return err
			}
			continue
		}
		if tooLong {
			if err := p.bad(pos, true, "line longer than %d bytes", maxLine); err != nil {
				return err
			}
			continue
		}
		if lineNo == 1 && bytes.HasPrefix(line, []byte(bom)) {
			if !p.opt.Lenient {
				return history.Errorf(pos, "column 1: a UTF-8 byte-order mark (EF BB BF) at the start of the log; hyperiso reads UTF-8 without one (--lenient skips it)")
			}
			p.w.Add("bom", pos, "byte-order mark ignored")
			line = line[len(bom):]
		}
		if !forceGeneral && scanFast(line, &p.fast) {
			t, err := p.begin(s, pos, p.fast.initial, &initAt)
			if err != nil {
				return err
			}
			txns++
			p.addFast(t)
			continue
		}
		tl, unknown, err := decodeTxnLine(line)
		if err != nil {
			if err := p.bad(pos, true, "not a transaction {\"value\": [[op, key, value, flag], ...]}: %v", err); err != nil {
				return err
			}
			continue
		}
		if unknown != "" {
			// A corrupted "isInitial" must not silently make the line an
			// ordinary transaction.
			msg := fmt.Sprintf("unknown field %s (a transaction has only \"value\" and \"isInitial\")", unknown)
			if !p.opt.Lenient {
				return history.Errorf(pos, "%s", msg)
			}
			p.w.Add("field", pos, "%s; ignored", msg)
			p.dropped.Other++
		}
		if tl.Value == nil {
			if err := p.bad(pos, true, "no \"value\" field: a transaction is {\"value\": [[op, key, value, flag], ...]}"); err != nil {
				return err
			}
			continue
		}
		t, err := p.begin(s, pos, tl.IsInitial != nil && *tl.IsInitial, &initAt)
		if err != nil {
			return err
		}
		txns++
		for j, raw := range *tl.Value {
			if err := p.mop(t, j+1, raw, pos); err != nil {
				return err
			}
		}
	}
	if initAt != 0 {
		if txns > 1 {
			return history.Errorf(p.initPos, "the initial transaction (\"isInitial\": true) must be alone in its log, as Viper takes it only then; this log has %d transactions", txns)
		}
		for _, op := range p.b.Ops(initAt) {
			if op.Kind != history.OpWrite {
				return history.Errorf(p.initPos, "the initial transaction may only write, but it has a %v operation", op.Kind)
			}
		}
		p.init = initAt
	}
	return nil
}

const bom = "\ufeff"

// forceGeneral turns the fast path off (tests compare the two).
var forceGeneral bool

// begin starts the transaction of the line at pos in session s; initial
// says it is marked "isInitial", initAt is the log's initial transaction.
func (p *parser) begin(s int32, pos history.Pos, initial bool, initAt *history.TxnID) (history.TxnID, error) {
	p.nextTxn++
	t := p.b.Begin(s, p.nextTxn, history.Committed, pos)
	if initial {
		if p.init != 0 || *initAt != 0 {
			return 0, history.Errorf(pos, "a second initial transaction (the first is at %s)", p.initPos)
		}
		*initAt = t
		p.initPos = pos
	}
	return t, nil
}

// addFast adds the operations scanFast read to t, as mop would one by one:
// the aborted writes in their places, so that every value is interned in
// the same order.
func (p *parser) addFast(t history.TxnID) {
	raw := p.raw[:0]
	for _, op := range p.fast.ops {
		switch op.kind {
		case 'r':
			raw = append(raw, history.RawOp{Kind: history.OpRead, Key: op.key, Value: op.val})
		case 'w':
			raw = append(raw, history.RawOp{Kind: history.OpWrite, Key: op.key, Value: op.val})
		default:
			p.b.AddRaw(t, raw)
			raw = raw[:0]
			p.b.AbortedWrite(op.key, op.val)
		}
	}
	p.b.AddRaw(t, raw)
	p.raw = raw
}

// decodeTxnLine decodes one line {"value": [...], "isInitial": bool}: field
// names must be exactly these (encoding/json alone would match names
// case-insensitively and skip unknown ones, so a corrupted "isInitial"
// would go unnoticed), each at most once, the line valid UTF-8. unknown
// quotes the first other field name, whose value is skipped.
func decodeTxnLine(line []byte) (tl txnLine, unknown string, err error) {
	if !utf8.Valid(line) {
		return tl, "", errors.New("the line is not valid UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return tl, "", err
	}
	if tok != json.Delim('{') {
		return tl, "", fmt.Errorf("found %v, not an object", tok)
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return tl, "", err
		}
		name, _ := tok.(string)
		switch name {
		case "value":
			if tl.Value != nil {
				return tl, "", errors.New(`field "value" given twice`)
			}
			var v []json.RawMessage
			if err := d.Decode(&v); err != nil {
				return tl, "", fmt.Errorf(`field "value": %v`, err)
			}
			if v == nil {
				return tl, "", errors.New(`field "value" is null, not an array of operations`)
			}
			tl.Value = &v
		case "isInitial":
			if tl.IsInitial != nil {
				return tl, "", errors.New(`field "isInitial" given twice`)
			}
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				return tl, "", fmt.Errorf(`field "isInitial": %v`, err)
			}
			var b bool
			switch string(bytes.TrimSpace(raw)) {
			case "true":
				b = true
			case "false":
			default:
				return tl, "", fmt.Errorf(`field "isInitial" is %s, not true or false`, short(raw))
			}
			tl.IsInitial = &b
		case "isFinal":
			// ViperBench marks its last transaction; read as any other.
			var final bool
			if err := d.Decode(&final); err != nil {
				return tl, "", fmt.Errorf(`field "isFinal" is not true or false`)
			}
		default:
			if unknown == "" {
				unknown = strconv.Quote(name)
			}
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return tl, "", err
			}
		}
	}
	if _, err := d.Token(); err != nil { // the closing '}'
		return tl, "", err
	}
	if _, err := d.Token(); err != io.EOF {
		return tl, "", errors.New("text after the transaction's JSON object")
	}
	return tl, unknown, nil
}

// strictUnmarshal decodes one JSON value that must be the whole of data,
// keeping numbers exact.
func strictUnmarshal(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("text after the transaction's JSON object")
	}
	return nil
}

// bad reports a malformed line: fatal in strict mode, skipped with a
// warning in lenient mode. txn says whether the line may have held a
// transaction.
func (p *parser) bad(pos history.Pos, txn bool, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if !p.opt.Lenient {
		return history.Errorf(pos, "%s", msg)
	}
	p.w.Add("skipped", pos, "line skipped: %s", msg)
	if txn {
		p.dropped.Other++
	}
	return nil
}

// mop reads the j-th micro-operation of transaction t.
func (p *parser) mop(t history.TxnID, j int, raw json.RawMessage, pos history.Pos) error {
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf("micro-operation %d: ", j) + fmt.Sprintf(format, args...)
		if !p.opt.Lenient {
			return history.Errorf(pos, "%s", msg)
		}
		p.w.Add("micro-op", pos, "%s; dropped", msg)
		p.dropped.Ops++
		return nil
	}
	var m []json.RawMessage
	if err := strictUnmarshal(raw, &m); err != nil || len(m) == 0 {
		return fail("%s is not an array [op, key, value, flag]", short(raw))
	}
	var op string
	if err := json.Unmarshal(m[0], &op); err != nil {
		return fail("the operation %s is not a string", short(m[0]))
	}
	switch op {
	case "r", "w":
	case "i", "d":
		return p.rowMop(t, op, m, fail)
	case "range":
		return p.rangeMop(t, m, fail)
	case "append":
		return fail("\"append\" operations (Viper's append workload) are not read by hyperiso; only \"r\", \"w\", \"i\", \"d\" and \"range\"")
	default:
		return fail("unknown operation %q (want \"r\", \"w\", \"i\", \"d\" or \"range\")", op)
	}
	if len(m) != 4 {
		return fail("[%q, key, value, flag] has 4 elements, this one %d", op, len(m))
	}
	key, err := integer(m[1])
	if err != nil {
		return fail("key %s: %v", short(m[1]), err)
	}
	var flag bool
	if err := json.Unmarshal(m[3], &flag); err != nil {
		return fail("flag %s is not true or false", short(m[3]))
	}
	if op == "r" {
		v, err := readValue(m[2], flag)
		if err != nil {
			return fail("%v", err)
		}
		p.b.Read(t, key, v)
		return nil
	}
	v, err := integer(m[2])
	if err != nil {
		return fail("value written %s: %v", short(m[2]), err)
	}
	if v == history.EmptyList {
		return fail("value written %d is reserved for nil", v)
	}
	if flag {
		p.b.Write(t, key, v)
	} else {
		p.b.AbortedWrite(key, v)
	}
	return nil
}

func isNil(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "null" || s == `"nil"`
}

func integer(raw json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, errors.New("does not fit in 64 bits")
		}
		return 0, errors.New("not an integer")
	}
	return v, nil
}

func short(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

func (p *parser) finish(source string) (*history.History, error) {
	if p.nextTxn == 0 {
		pos := history.Pos{File: source, Line: 1}
		if !p.opt.Lenient {
			return nil, history.Errorf(pos, "no transactions: expected lines {\"value\": [[op, key, value, flag], ...]}")
		}
		p.w.Add("empty", pos, "no transactions")
	}
	if p.init != 0 {
		p.b.PromoteToInit(p.init)
	} else {
		p.b.SetInit(history.InitImplicit, InitID)
	}
	p.b.InitAllKeys(history.EmptyList)
	p.b.Drop(p.dropped)
	h := p.b.Finish()
	h.Warnings = append(h.Warnings, p.w.Done()...)
	return h, nil
}
