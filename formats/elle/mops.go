package elle

import (
	"strconv"

	"github.com/hyperiso/hyperiso/history"
)

// The common completion — {:type :ok, :value [[:r 1 2] [:w 3 4] …]} with
// integer keys, integer or nil arguments and no list reads — is read here
// straight from the input into small records, and its invocation's
// :value only compared with it, instead of decoding both into vals
// (opValue) for compare and addOps. Anything else, or anything addOp
// would warn about or drop, goes the general way, so histories, warnings
// and errors are the same either way.

// forceGeneral turns completeFast off (tests compare the two ways).
var forceGeneral bool

// mop is a micro-operation [:f key arg]: f 'r', 'w' or 'a' (:append), an
// integer key, and an integer argument or nil.
type mop struct {
	f        byte
	argNil   bool
	key, arg int64
}

// mopsAt reads the :value at data[off], which opMap checked, into dst when
// it is a vector of micro-operations of that shape; ok false otherwise.
func (f *fastEDN) mopsAt(data []byte, off int, dst []mop) (_ []mop, ok bool) {
	f.data, f.i = data, off
	closer, ok := f.open()
	if !ok {
		return dst, false
	}
	for {
		f.ws()
		if f.i >= len(data) {
			return dst, false
		}
		if data[f.i] == closer {
			return dst, true
		}
		inner, ok := f.open()
		if !ok {
			return dst, false
		}
		var m mop
		f.ws()
		if f.i >= len(data) || data[f.i] != ':' {
			return dst, false
		}
		start := f.i + 1
		if _, ok := f.token(false); !ok {
			return dst, false
		}
		switch string(data[start:f.i]) {
		case "r":
			m.f = 'r'
		case "w":
			m.f = 'w'
		case "append":
			m.f = 'a'
		default:
			return dst, false
		}
		f.ws()
		if m.key, ok = f.int(); !ok {
			return dst, false
		}
		f.ws()
		if f.i < len(data) && data[f.i] == 'n' {
			if len(data)-f.i < 3 || string(data[f.i:f.i+3]) != "nil" {
				return dst, false
			}
			f.i += 3
			m.argNil = true
			if !f.delimited() {
				return dst, false
			}
		} else if m.arg, ok = f.int(); !ok {
			return dst, false
		}
		f.ws()
		if f.i >= len(data) || data[f.i] != inner {
			return dst, false
		}
		f.i++
		dst = append(dst, m)
	}
}

// open reads '[' or '(' and returns the bracket that closes it.
func (f *fastEDN) open() (byte, bool) {
	if f.i >= len(f.data) {
		return 0, false
	}
	switch f.data[f.i] {
	case '[':
		f.i++
		return ']', true
	case '(':
		f.i++
		return ')', true
	}
	return 0, false
}

// int reads an integer as value does.
func (f *fastEDN) int() (int64, bool) {
	if f.i >= len(f.data) || (f.data[f.i] != '-' && (f.data[f.i] < '0' || f.data[f.i] > '9')) {
		return 0, false
	}
	v, ok := f.integer()
	return v.n, ok
}

// completeFast is complete for an :ok completion whose :value, and its
// invocation's, mopsAt reads; done false leaves the completion to
// complete, having changed nothing.
func (p *parser) completeFast(pd pend, op *rawOp) (done bool, err error) {
	if op.typ != tOK || !op.hasValue || op.valAt <= 0 || pd.inv.valAt <= 0 {
		return false, nil
	}
	var ok bool
	if p.comp, ok = p.scratch.mopsAt(p.data, op.valAt, p.comp[:0]); !ok {
		return false, nil
	}
	if p.inv, ok = p.scratch.mopsAt(p.data, pd.inv.valAt, p.inv[:0]); !ok {
		return false, nil
	}
	t := pd.t
	p.b.SetStatus(t, history.Committed)
	same := len(p.inv) == len(p.comp)
	for i := 0; same && i < len(p.inv); i++ {
		same = p.inv[i].f == p.comp[i].f && p.inv[i].key == p.comp[i].key
	}
	if !same {
		p.warn("mismatch", p.pos(op.line), "the completion's micro-operations differ from those of its :invoke at line "+strconv.Itoa(pd.inv.line)+"; the completion's are used")
	}
	if p.plain(p.comp) {
		p.addMops(t, p.comp, op.line)
	} else {
		p.scratch.reset()
		if err := p.addOps(t, p.opValue(op), op.line, true); err != nil {
			return true, err
		}
	}
	p.interval(t, pd.inv, op)
	return true, nil
}

// plain reports whether addOp would take every micro-operation of a
// committed transaction as it is, without a warning.
func (p *parser) plain(ms []mop) bool {
	for _, m := range ms {
		switch {
		case m.f == 'a' && p.workload == RWRegister, m.f == 'w' && p.workload == ListAppend:
			return false
		case m.f != 'r' && (m.argNil || m.arg == history.EmptyList):
			return false
		case m.f == 'r' && !m.argNil && (p.workload != RWRegister || m.arg == history.EmptyList):
			return false
		}
	}
	return true
}

// addMops is addOps with reads for micro-operations plain accepts: the
// same builder calls in the same order.
func (p *parser) addMops(t history.TxnID, ms []mop, line int) {
	for _, m := range ms {
		if !m.argNil {
			p.sink += p.b.Touch(m.key, m.arg)
		}
	}
	for _, m := range ms {
		key := p.b.KeyID(m.key)
		if m.f != 'r' {
			x := p.b.ValueIDOf(key, m.key, m.arg)
			vk := history.Version{Key: key, Value: x}
			if p.writes.add(vk) == 2 {
				p.dupWrites = append(p.dupWrites, vk)
				p.dupText = append(p.dupText, [2]string{strconv.FormatInt(m.key, 10), strconv.FormatInt(m.arg, 10)})
				p.dupPos = append(p.dupPos, p.pos(line))
			}
			if m.f == 'a' {
				p.b.AppendID(t, key, x)
			} else {
				p.b.WriteID(t, key, x)
			}
			continue
		}
		empty := p.emptyOf(key)
		switch {
		case p.workload != RWRegister:
			p.b.ReadListID(t, key, nil, empty)
		case m.argNil:
			p.b.ReadID(t, key, empty)
		default:
			p.b.ReadID(t, key, p.b.ValueIDOf(key, m.key, m.arg))
		}
	}
}
