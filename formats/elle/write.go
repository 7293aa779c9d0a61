package elle

import (
	"bufio"
	"io"
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
	// A register history may start from any values: renamed to nil.
	var vals *express.Values
	if !lists {
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
		Init:           true,
		InitValue:      history.EmptyList,
		Names:          true,
	}, p)
	names := ednNames(h, p)
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() && value(op.Key, op.Value) == history.EmptyList {
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
	mop := func(op history.Op, reads bool) {
		val := value(op.Key, op.Value)
		switch {
		case op.Kind == history.OpAppend:
			buf = append(buf, "[:append "...)
		case op.Kind == history.OpWrite:
			buf = append(buf, "[:w "...)
		default:
			buf = append(buf, "[:r "...)
		}
		if name, ok := names.keys[op.Key]; ok {
			buf = append(buf, name...)
		} else {
			buf = strconv.AppendInt(buf, h.Key(op.Key), 10)
		}
		buf = append(buf, ' ')
		elem := func(v history.ValueID) {
			if name, ok := names.vals[history.Version{Key: op.Key, Value: v}]; ok && value(op.Key, v) != history.EmptyList {
				buf = append(buf, name...)
			} else {
				buf = strconv.AppendInt(buf, value(op.Key, v), 10)
			}
		}
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
	line := func(typ string, ops []history.Op, reads bool, process int64, time int64, timed bool) {
		buf = append(buf[:0], "{:type :"...)
		buf = append(buf, typ...)
		buf = append(buf, ", :f :txn, :value ["...)
		for i, op := range ops {
			if i > 0 {
				buf = append(buf, ' ')
			}
			mop(op, reads)
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
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		proc := h.Sessions[tx.Session].ID
		line("invoke", tx.Ops, false, proc, tx.Start, tx.Timed)
		switch tx.Status {
		case history.Committed:
			line("ok", tx.Ops, true, proc, tx.End, tx.Timed)
		case history.Aborted:
			line("fail", tx.Ops, false, proc, tx.End, tx.Timed)
		default:
			line("info", tx.Ops, false, proc, tx.Start, tx.Timed)
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
		line("invoke", ops, false, maxProc+1, 0, timed)
		line("fail", ops, false, maxProc+1, 0, timed)
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
