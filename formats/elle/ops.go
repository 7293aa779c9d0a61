package elle

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// One transaction's operations: each micro-operation map becomes a read,
// write, append or list read of an interned key and value.

// addOps turns the micro-operations of v into operations of t: writes
// always, reads only for a committed transaction (reads is set).
func (p *parser) addOps(t history.TxnID, v val, line int, reads bool) error {
	if v.k == vNil {
		return nil
	}
	if v.k != vVec {
		return p.fail("micro-op", line, "value ignored", ":value must be a vector of micro-operations, found %s", v.describe())
	}
	// What interning the operations' integer keys and values will probe,
	// loaded first so that the cache misses overlap.
	for _, m := range v.elems {
		if m.k != vVec || len(m.elems) != 3 || m.elems[1].k != vInt {
			continue
		}
		switch arg := m.elems[2]; arg.k {
		case vInt:
			p.sink += p.b.Touch(m.elems[1].n, arg.n)
		case vVec:
			for _, e := range arg.elems {
				if e.k == vInt {
					p.sink += p.b.Touch(m.elems[1].n, e.n)
				}
			}
		}
	}
	for j, m := range v.elems {
		if err := p.addOp(t, j, m, line, reads); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) addOp(t history.TxnID, j int, m val, line int, reads bool) error {
	const drop = "micro-operation dropped"
	var f string
	ok := m.k == vVec && len(m.elems) > 0
	if ok {
		f, _ = m.elems[0].name()
	}
	switch {
	case ok && f == "delete" && len(m.elems) != 2:
		return p.fail("micro-op", line, drop, "micro-operation %d is %s, not a vector [:delete key]", j+1, m.describe())
	case !ok || f != "delete" && len(m.elems) != 3:
		return p.fail("micro-op", line, drop, "micro-operation %d is %s, not a vector [f key value]", j+1, m.describe())
	}
	f, ok = m.elems[0].name()
	switch {
	case !ok || (f != "r" && f != "w" && f != "append" && !rowFunc(f)):
		return p.fail("micro-op", line, drop, "micro-operation %d: unknown function %s (want :append or :r for list-append; :w or :r for rw-register, with :insert, :delete and :rp for rows)", j+1, m.elems[0].describe())
	case f == "append" && p.workload == RWRegister, (f == "w" || rowFunc(f)) && p.workload == ListAppend:
		return p.fail("micro-op", line, drop, "micro-operation %d: :%s in a %s history%s", j+1, f, p.workload, p.workloadHow())
	case f == "rp":
		return p.predicateRead(t, j, m, line, reads)
	}
	key, ok, err := p.key(m.elems[1], j, line)
	if err != nil || !ok {
		return err
	}
	if f == "delete" {
		p.b.DeleteID(t, key)
		return nil
	}
	arg := m.elems[2]
	if f != "r" {
		x, ok, err := p.value(key, m.elems[1], arg, j, line, "the value written")
		if err != nil || !ok {
			return err
		}
		vk := history.Version{Key: key, Value: x}
		if p.writes.add(vk) == 2 {
			p.dupWrites = append(p.dupWrites, vk)
			p.dupText = append(p.dupText, [2]string{m.elems[1].describe(), arg.describe()})
			p.dupPos = append(p.dupPos, p.pos(line))
		}
		switch f {
		case "append":
			p.b.AppendID(t, key, x)
		case "insert":
			p.b.InsertID(t, key, x)
		default:
			p.b.WriteID(t, key, x)
		}
		return nil
	}
	if !reads {
		return nil
	}
	empty := p.emptyOf(key)
	if p.workload == RWRegister {
		if arg.k == vNil {
			p.b.ReadID(t, key, empty)
			return nil
		}
		x, ok, err := p.value(key, m.elems[1], arg, j, line, "the value read")
		if err != nil || !ok {
			return err
		}
		p.b.ReadID(t, key, x)
		return nil
	}
	var list []history.ValueID
	switch arg.k {
	case vNil:
	case vVec:
		list = make([]history.ValueID, 0, len(arg.elems))
		for _, e := range arg.elems {
			x, ok, err := p.value(key, m.elems[1], e, j, line, "a list element")
			if err != nil || !ok {
				return err
			}
			list = append(list, x)
		}
	case vInt, vBig:
		return p.fail("micro-op", line, drop, "micro-operation %d: an integer read in a list-append history%s", j+1, p.workloadHow())
	default:
		return p.fail("micro-op", line, drop, "micro-operation %d: a list read must return nil or a vector of values, found %s", j+1, arg.describe())
	}
	p.b.ReadListID(t, key, list, empty)
	return nil
}

// emptyOf is ValueID(key, EmptyList), interned at key's first read as
// before, looked up in empties after.
func (p *parser) emptyOf(key history.KeyID) history.ValueID {
	if int(key) < len(p.empties) && p.empties[key] > 0 {
		return p.empties[key] - 1
	}
	v := p.b.ValueID(key, history.EmptyList)
	if n := int(key) + 1 - len(p.empties); n > 0 {
		p.empties = append(p.empties, make([]history.ValueID, n)...)
	}
	p.empties[key] = v + 1
	return v
}

func (p *parser) workloadHow() string {
	if p.workloadLine > 0 {
		return fmt.Sprintf(" (recognised from line %d; the workload can be forced)", p.workloadLine)
	}
	return ""
}

// key converts a micro-operation's key; ok false without error means
// dropped.
func (p *parser) key(v val, j, line int) (k history.KeyID, ok bool, err error) {
	const drop = "micro-operation dropped"
	switch v.k {
	case vInt:
		return p.b.KeyID(v.n), true, nil
	case vBig:
		return 0, false, p.fail("micro-op", line, drop, "micro-operation %d: key %s does not fit in 64 bits", j+1, v.s)
	}
	if name, ok := p.ednName(v); ok {
		k := p.b.KeyNamed(name)
		if !p.namedSeen[k] {
			if p.named == 0 {
				p.firstName, p.firstLine = name, line
				p.namedSeen = map[history.KeyID]bool{}
			}
			p.namedSeen[k] = true
			p.named++
		}
		return k, true, nil
	}
	return 0, false, p.fail("micro-op", line, drop, "micro-operation %d: the key must be an integer or an EDN scalar or vector (a keyword, string, …), found %s", j+1, v.describe())
}

// value interns a written value, a register's value read or a list
// element of key k (kv as read): an integer, or any EDN scalar or vector,
// kept by name. ok false without error means dropped.
func (p *parser) value(k history.KeyID, kv, v val, j, line int, what string) (x history.ValueID, ok bool, err error) {
	const drop = "micro-operation dropped"
	switch v.k {
	case vInt:
		if v.n == history.EmptyList {
			return 0, false, p.fail("micro-op", line, drop, "micro-operation %d: %s %d is reserved for the empty list (nil)", j+1, what, v.n)
		}
		if kv.k == vInt {
			return p.b.ValueIDOf(k, kv.n, v.n), true, nil
		}
		return p.b.ValueID(k, v.n), true, nil
	case vBig:
		return 0, false, p.fail("micro-op", line, drop, "micro-operation %d: %s %s does not fit in 64 bits", j+1, what, v.s)
	}
	if name, ok := p.ednName(v); ok {
		return p.b.ValueNamed(k, name), true, nil
	}
	return 0, false, p.fail("micro-op", line, drop, "micro-operation %d: %s must be an integer or an EDN scalar or vector, found %s", j+1, what, v.describe())
}

// ednName renders a key or value that is not an integer as its name: the
// EDN text of a keyword, symbol, boolean, number, character or vector, and
// of a string in EDN (quoted); a string of Elle-JSON is its text. ok is
// false for nil, maps, sets and tagged values (and integers, which are not
// names).
func (p *parser) ednName(v val) (string, bool) {
	if v.k == vString && p.syntax != EDN {
		return v.s, v.s != ""
	}
	if v.k == vInt || v.k == vNil {
		return "", false
	}
	var b strings.Builder
	ok := writeEDN(&b, v, 0)
	return b.String(), ok
}

// writeEDN writes v as canonical EDN text (vectors with single spaces,
// strings with EDN's escapes).
func writeEDN(b *strings.Builder, v val, depth int) bool {
	switch v.k {
	case vNil:
		b.WriteString("nil")
	case vInt:
		b.WriteString(strconv.FormatInt(v.n, 10))
	case vBig, vSymbol:
		b.WriteString(v.s)
	case vKeyword:
		b.WriteString(":")
		b.WriteString(v.s)
	case vString:
		b.WriteString(EDNString(v.s))
	case vVec:
		if depth > 32 {
			return false
		}
		b.WriteString("[")
		for i, e := range v.elems {
			if i > 0 {
				b.WriteString(" ")
			}
			if !writeEDN(b, e, depth+1) {
				return false
			}
		}
		b.WriteString("]")
	default:
		lit := v.literal()
		if lit == "" {
			return false
		}
		b.WriteString(lit)
	}
	return true
}

// EDNString quotes s as an EDN string.
func EDNString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mopShape returns the function name and parts of a well-formed [f k v].
func mopShape(m val) (f string, key, arg val, ok bool) {
	if m.k == vVec && len(m.elems) == 2 {
		if f, ok = m.elems[0].name(); ok && f == "delete" {
			return f, m.elems[1], val{}, true
		}
	}
	if m.k != vVec || len(m.elems) != 3 {
		return "", val{}, val{}, false
	}
	f, ok = m.elems[0].name()
	return f, m.elems[1], m.elems[2], ok
}

// compare warns when an :ok completion's micro-operations do not match its
// invocation's functions and keys.
func (p *parser) compare(a, b val, invLine, okLine int) {
	if a.k != vVec || b.k != vVec {
		return
	}
	same := len(a.elems) == len(b.elems)
	for i := 0; same && i < len(a.elems); i++ {
		fa, ka, _, oka := mopShape(a.elems[i])
		fb, kb, _, okb := mopShape(b.elems[i])
		same = oka == okb && fa == fb && sameKey(ka, kb)
	}
	if !same {
		p.warn("mismatch", p.pos(okLine), fmt.Sprintf("the completion's micro-operations differ from those of its :invoke at line %d; the completion's are used", invLine))
	}
}

// sameKey compares two keys as the reader maps them.
func sameKey(a, b val) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case vInt:
		return a.n == b.n
	case vKeyword, vString, vSymbol, vBig:
		return a.s == b.s
	}
	return a.describe() == b.describe()
}
