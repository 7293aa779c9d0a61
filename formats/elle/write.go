package elle

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"olympos.io/encoding/edn"

	"github.com/hyperiso/hyperiso/formats/internal/express"
	"github.com/hyperiso/hyperiso/history"
)

// Write writes h as a Jepsen history.edn, one operation map per line, so
// that Read gives back h up to ids: each transaction is an :invoke and its
// completion (:ok committed, :fail aborted, :info unknown) on the process
// of its session, in TxnID order. The workload is list-append when h has
// list operations, rw-register otherwise; nil stands for the empty list
// and for the initial value. Real-time intervals are written as :time (the
// completion of an unknown transaction, whose end is open, gets its start).
// Aborted writes outside any transaction become one :fail transaction on a
// process of its own. The reads of aborted transactions are not kept (Elle
// has none; no check looks at them).
//
// Write refuses, writing nothing, what the format cannot hold, naming all
// of it: register and list operations in one history, a register read of a
// non-nil value in a list-append one, reads of unknown-outcome transactions
// (a Jepsen :info carries only what was invoked), intervals on some
// transactions only, levels, stated version orders, lenient drops, and an
// initial value of a list other than nil (or a list key without one that
// reads nil), and a transaction writing a register's initial value. The
// values of registers are renamed per key (express.Values) so that T⊥'s
// value is nil, which changes no verdict.
//
// Rows are written in Elle's closed-predicate syntax: [:insert k v],
// [:delete k], a read of an absent row [:r k nil], a predicate read
// [:rp pred {k v, …}] (only one that covers every key of the history,
// which is what Elle's predicate reads cover, with pred :true, [:= v] or
// [:mod m r]), and T⊥'s rows that are not
// absent as an {:f :init} operation (values are not renamed: a delete
// writes nil). checkRows says what else is refused.
func Write(w io.Writer, h *history.History) error {
	lists := false
	for t := 1; t < len(h.Txns) && !lists; t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind == history.OpAppend || op.Kind == history.OpReadList {
				lists = true
				break
			}
		}
	}
	// A register history may start from any values: renamed to nil. A
	// history of rows may not (a delete writes nil): its initial state
	// is an :f :init operation, as in Elle's closed-predicate workload.
	rows := h.HasRows()
	var vals *express.Values
	if !lists && !rows {
		vals = express.NewValues(h, history.EmptyList)
	}
	value := func(k history.KeyID, v history.ValueID) int64 {
		if vals != nil {
			return vals.Of(k, v)
		}
		return h.Value(k, v)
	}
	p := express.New("the Elle EDN format")
	express.Check(h, express.Limits{
		Values:         vals,
		Lists:          true,
		NoRegisters:    lists,
		Aborted:        true,
		Unknown:        true,
		AbortedWrites:  true,
		Timed:          true,
		AllOrNoneTimed: true,
		Init:           !rows,
		InitValue:      history.EmptyList,
		Names:          true,
		Rows:           true,
		ValueTests:     true, // Elle's own; checkRows refuses the others
	}, p)
	names := ednNames(h, p)
	if rows {
		checkRows(h, lists, p)
	}
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() && op.Src != history.SrcDelete && value(op.Key, op.Value) == history.EmptyList {
				p.Add("%s writes the initial value %d of key %s (in EDN the initial value is nil, which cannot be written)",
					h.TxnString(history.TxnID(t)), h.Value(op.Key, op.Value), h.KeyString(op.Key))
				break
			}
		}
	}
	for _, v := range h.AbortedWrites {
		if value(v.Key, v.Value) == history.EmptyList {
			p.Add("an aborted write of the initial value %d of key %s (in EDN the initial value is nil, which cannot be written)",
				h.Value(v.Key, v.Value), h.KeyString(v.Key))
			break
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	key := func(k history.KeyID) {
		if name, ok := names.keys[k]; ok {
			buf = append(buf, name...)
		} else {
			buf = strconv.AppendInt(buf, h.Key(k), 10)
		}
	}
	version := func(k history.KeyID, v history.ValueID) {
		if name, ok := names.vals[history.Version{Key: k, Value: v}]; ok && value(k, v) != history.EmptyList {
			buf = append(buf, name...)
		} else {
			buf = strconv.AppendInt(buf, value(k, v), 10)
		}
	}
	mop := func(op history.Op, reads bool) {
		val := value(op.Key, op.Value)
		switch {
		case op.Kind == history.OpAppend:
			buf = append(buf, "[:append "...)
		case op.Src == history.SrcInsert:
			buf = append(buf, "[:insert "...)
		case op.Src == history.SrcDelete:
			buf = append(buf, "[:delete "...)
			key(op.Key)
			buf = append(buf, ']')
			return
		case op.Kind == history.OpWrite:
			buf = append(buf, "[:w "...)
		default:
			buf = append(buf, "[:r "...)
		}
		key(op.Key)
		buf = append(buf, ' ')
		elem := func(v history.ValueID) { version(op.Key, v) }
		switch {
		case op.Kind.IsWrite():
			elem(op.Value)
		case !reads || (op.Kind == history.OpRead && val == history.EmptyList):
			buf = append(buf, "nil"...)
		case op.Kind == history.OpReadList:
			l := h.List(op)
			if len(l) == 0 {
				buf = append(buf, "nil"...)
				break
			}
			buf = append(buf, '[')
			for i, e := range l {
				if i > 0 {
					buf = append(buf, ' ')
				}
				elem(e)
			}
			buf = append(buf, ']')
		default:
			elem(op.Value)
		}
		buf = append(buf, ']')
	}
	// rp writes a predicate read, which checkRows found covers every key
	// with a test Elle can state: Elle's [:rp pred {k v, …}] with the rows
	// it returned.
	rp := func(s history.Select, reads bool) {
		buf = append(buf, "[:rp "...)
		buf = appendElleTest(buf, s.Test)
		buf = append(buf, ' ')
		if !reads {
			buf = append(buf, "nil]"...)
			return
		}
		buf = append(buf, '{')
		first := true
		for _, op := range s.Ops(h) {
			if h.Value(op.Key, op.Value) == history.EmptyList {
				continue // not returned
			}
			if !first {
				buf = append(buf, ", "...)
			}
			first = false
			key(op.Key)
			buf = append(buf, ' ')
			version(op.Key, op.Value)
		}
		buf = append(buf, "}]"...)
	}
	line := func(typ string, t history.TxnID, ops []history.Op, reads bool, process int64, time int64, timed bool) {
		buf = append(buf[:0], "{:type :"...)
		buf = append(buf, typ...)
		buf = append(buf, ", :f :txn, :value ["...)
		// A predicate read is one micro-operation at its place (At),
		// however many rows it expanded to.
		var sels []history.Select
		if t > 0 {
			sels = h.SelectsOf(t)
		}
		for i, n := 0, 0; i < len(ops) || len(sels) > 0; n++ {
			if n > 0 {
				buf = append(buf, ' ')
			}
			if len(sels) > 0 && (int(sels[0].At) <= i || i >= len(ops)) {
				rp(sels[0], reads)
				i += int(sels[0].N)
				sels = sels[1:]
				continue
			}
			mop(ops[i], reads)
			i++
		}
		buf = append(buf, "], :process "...)
		buf = strconv.AppendInt(buf, process, 10)
		if timed {
			buf = append(buf, ", :time "...)
			buf = strconv.AppendInt(buf, time, 10)
		}
		buf = append(buf, "}\n"...)
		bw.Write(buf)
	}
	maxProc := int64(-1)
	for _, s := range h.Sessions {
		maxProc = max(maxProc, s.ID)
	}
	if rows {
		// T⊥'s rows that are not absent: Elle's universe-creating :init,
		// first, as Elle expects it.
		buf = append(buf[:0], "{:type :ok, :f :init, :value {"...)
		n := 0
		for _, op := range h.Txns[history.InitTxn].Ops {
			if h.Value(op.Key, op.Value) == history.EmptyList {
				continue
			}
			if n > 0 {
				buf = append(buf, ", "...)
			}
			n++
			key(op.Key)
			buf = append(buf, ' ')
			version(op.Key, op.Value)
		}
		buf = append(buf, "}, :process "...)
		buf = strconv.AppendInt(buf, maxProc+2, 10)
		buf = append(buf, "}\n"...)
		if n > 0 {
			bw.Write(buf)
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		proc := h.Sessions[tx.Session].ID
		tid := history.TxnID(t)
		line("invoke", tid, tx.Ops, false, proc, tx.Start, tx.Timed)
		switch tx.Status {
		case history.Committed:
			line("ok", tid, tx.Ops, true, proc, tx.End, tx.Timed)
		case history.Aborted:
			line("fail", tid, tx.Ops, false, proc, tx.End, tx.Timed)
		default:
			line("info", tid, tx.Ops, false, proc, tx.Start, tx.Timed)
		}
	}
	if len(h.AbortedWrites) > 0 {
		ops := make([]history.Op, len(h.AbortedWrites))
		kind := history.OpWrite
		if lists {
			kind = history.OpAppend
		}
		for i, v := range h.AbortedWrites {
			ops[i] = history.Op{Kind: kind, Key: v.Key, Value: v.Value}
		}
		timed := len(h.Txns) > 1 && h.Txns[1].Timed
		line("invoke", 0, ops, false, maxProc+1, 0, timed)
		line("fail", 0, ops, false, maxProc+1, 0, timed)
	}
	return bw.Flush()
}

// names holds the EDN text of the keys and values h holds as names.
type names struct {
	keys map[history.KeyID]string
	vals map[history.Version]string
}

// ednNames renders each name as EDN: verbatim when it is the EDN text of
// a value other than an integer or nil (what this reader names), else as
// an EDN string. Two names that would read back as one are refused.
func ednNames(h *history.History, p *express.Problems) names {
	n := names{keys: map[history.KeyID]string{}, vals: map[history.Version]string{}}
	keyOf := map[string]string{}
	for k := range h.Keys {
		kid := history.KeyID(k)
		if name := h.KeyName(kid); name != "" {
			text := EDNText(name)
			if other, dup := keyOf[text]; dup {
				p.Add("keys named %s and %s, which are one key in EDN (%s)", other, name, text)
			}
			keyOf[text] = name
			n.keys[kid] = text
		}
		valOf := map[string]string{}
		for v := range h.Values[k] {
			if name := h.ValueName(kid, history.ValueID(v)); name != "" {
				text := EDNText(name)
				if other, dup := valOf[text]; dup {
					p.Add("values %s and %s of key %s, which are one value in EDN (%s)", other, name, h.KeyString(kid), text)
				}
				valOf[text] = name
				n.vals[history.Version{Key: kid, Value: history.ValueID(v)}] = text
			}
		}
	}
	return n
}

// EDNText renders a key's or value's name as EDN: the name itself if it
// is already the canonical EDN text of a value the reader keeps by name
// (a keyword, an EDN string, a vector, …), else the name as an EDN string.
func EDNText(name string) string {
	var x any
	if err := edn.UnmarshalString(name, &x); err == nil {
		p := &parser{syntax: EDN}
		if v := convertEDN(x); v.k != vString || strings.HasPrefix(name, `"`) {
			if text, ok := p.ednName(v); ok && text == name {
				return name
			}
		}
	}
	return EDNString(name)
}

// elleTestOf reports whether Elle has a predicate for test: :true (nil),
// [:= v] (one value), [:mod m r].
func elleTestOf(test *history.ValueTest) bool {
	if test == nil {
		return true
	}
	n := 0
	for _, has := range []bool{test.HasIn, test.HasRange, test.HasMod} {
		if has {
			n++
		}
	}
	return n == 1 && (test.HasIn && len(test.In) == 1 || test.HasMod)
}

// appendElleTest writes test as Elle's predicate (elleTestOf holds).
func appendElleTest(buf []byte, test *history.ValueTest) []byte {
	switch {
	case test == nil:
		return append(buf, ":true"...)
	case test.HasMod:
		buf = append(buf, "[:mod "...)
		buf = strconv.AppendInt(buf, test.Mod, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, test.Rem, 10)
	default:
		buf = append(buf, "[:= "...)
		buf = strconv.AppendInt(buf, test.In[0], 10)
	}
	return append(buf, ']')
}

// checkRows adds to p what Elle's closed-predicate syntax cannot hold of
// h's rows: rows beside lists, predicate reads that do not cover every
// key of the history (Elle's [:rp …] reads its whole universe; the reader
// takes it as a read of every integer key), and value tests that are not
// Elle's (elleTestOf).
func checkRows(h *history.History, lists bool, p *express.Problems) {
	if lists {
		p.Add("inserts, deletes or predicate reads beside list appends")
	}
	partial, first := 0, ""
	tests, firstTest := 0, ""
	// A read covers every key when no key is a name and its range holds
	// the least and the greatest (an aborted transaction's read stores
	// only its rows, so N does not say it).
	named := slices.ContainsFunc(h.KeyNames, func(n string) bool { return n != "" })
	least, greatest := int64(math.MaxInt64), int64(math.MinInt64)
	for _, k := range h.Keys {
		least, greatest = min(least, k), max(greatest, k)
	}
	for _, s := range h.Selects {
		if !elleTestOf(s.Test) {
			if tests == 0 {
				firstTest = h.TxnString(s.Txn) + "'s " + s.Predicate()
			}
			tests++
		}
		if named || len(h.Keys) > 0 && (least < s.Lo || greatest >= s.Hi) {
			if partial == 0 {
				first = h.TxnString(s.Txn) + fmt.Sprintf("'s keys [%d,%d)", s.Lo, s.Hi)
			}
			partial++
		}
	}
	initial := make([]bool, len(h.Keys))
	for _, op := range h.Txns[history.InitTxn].Ops {
		initial[op.Key] = true
	}
	if k := slices.Index(initial, false); k >= 0 {
		p.Add("keys without an initial state (first: key %s); in a history of rows EDN starts every key absent unless an :init gives it a value", h.KeyString(history.KeyID(k)))
	}
	if partial > 0 {
		p.Add("%d predicate reads over a key range that is not every key of the history (first: %s); Elle's predicate reads ([:rp …]) cover every key", partial, first)
	}
	if tests > 0 {
		p.Add("%d predicate reads with a value test that is not one of Elle's (first: %s); Elle's are :true, [:= v] and [:mod m r]", tests, firstTest)
	}
}
