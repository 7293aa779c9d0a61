package jsonl

// Rows (docs/predicates.md): the scan of a predicate read (["select", P,
// rows]) and its predicate object, and how the parser hands inserts,
// deletes and predicate reads to the builder.

import (
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// selectOp parses the rest of a predicate read, after its name:
// , {"keys": [lo, hi]}, [[k, v], ...]] (docs/predicates.md). The
// predicate's only field so far is the key range; a value test ("in",
// "values") is refused by name, and so is any other field, so that a
// predicate this reader does not know is never read as a wider one.
func (p *lineScanner) selectOp(n int) bool {
	sc, f := &p.sc, &p.f
	const shape = `["select", {"keys": [lo, hi]}, [[key, value], ...]]`
	sc.ws()
	if !sc.expect(',', fmt.Sprintf("ops[%d]: %s: ','", n, shape)) {
		return false
	}
	sc.ws()
	if !sc.expect('{', fmt.Sprintf("ops[%d]: the predicate, an object {\"keys\": [lo, hi]}", n)) {
		return false
	}
	op := rawOp{kind: history.OpRead, src: history.SrcSelect}
	hasKeys := false
	var test *history.ValueTest
	sc.ws()
	for sc.peek() != '}' {
		start := sc.i
		name, ok := sc.str(fmt.Sprintf("ops[%d] predicate field name", n))
		if !ok {
			return false
		}
		field := string(name)
		sc.ws()
		if !sc.expect(':', "':' after a field name") {
			return false
		}
		sc.ws()
		switch field {
		case "keys":
			if hasKeys {
				sc.i = start
				return sc.fail(`ops[%d] predicate: duplicate field "keys"`, n)
			}
			hasKeys = true
			at := sc.i
			if !sc.expect('[', fmt.Sprintf(`ops[%d] predicate field "keys": [lo, hi], two integers`, n)) {
				return false
			}
			sc.ws()
			if op.key, ok = sc.integer(fmt.Sprintf(`ops[%d] predicate field "keys" lo`, n)); !ok {
				return false
			}
			sc.ws()
			if !sc.expect(',', fmt.Sprintf(`ops[%d] predicate field "keys": [lo, hi], two integers`, n)) {
				return false
			}
			sc.ws()
			if op.val, ok = sc.integer(fmt.Sprintf(`ops[%d] predicate field "keys" hi`, n)); !ok {
				return false
			}
			sc.ws()
			if !sc.expect(']', fmt.Sprintf(`ops[%d] predicate field "keys": [lo, hi], two integers`, n)) {
				return false
			}
			if op.key > op.val {
				sc.i = at
				return sc.fail(`ops[%d] predicate field "keys": [%d, %d] is not a range (lo <= hi; keys lo <= k < hi)`, n, op.key, op.val)
			}
		case "in", "values", "mod":
			if test == nil {
				test = &history.ValueTest{}
			}
			if !p.valueTest(n, field, start, test) {
				return false
			}
		default:
			sc.i = start
			return sc.fail(`ops[%d] predicate: unknown field %q (a predicate is {"keys": [lo, hi]}, with "in": [values], "values": [lo, hi] and "mod": [m, r] as value tests)`, n, field)
		}
		sc.ws()
		if sc.peek() == ',' {
			sc.i++
			sc.ws()
			continue
		}
		if sc.peek() != '}' {
			return sc.fail(`ops[%d] predicate: expected ',' or '}', found %s`, n, sc.found())
		}
	}
	sc.i++
	if !hasKeys {
		return sc.fail(`ops[%d] predicate: missing field "keys" (a predicate is {"keys": [lo, hi]})`, n)
	}
	if test != nil {
		f.tests = append(f.tests, test)
		op.kname = int32(len(f.tests))
	}
	sc.ws()
	if !sc.expect(',', fmt.Sprintf("ops[%d]: %s: ',' after the predicate", n, shape)) {
		return false
	}
	sc.ws()
	op.lo = int32(len(f.rows))
	ok := p.array(fmt.Sprintf("ops[%d] rows", n), func(i int) bool {
		at := sc.i
		what := func() string { return fmt.Sprintf("ops[%d] row %d", n, i) }
		// A row of two integers is read without messages; anything else
		// again by the path that names what it expected.
		k, v, fast := p.intPair()
		var vname int32
		if !fast && !p.pair(what()+": a pair [key, value]", what()+": ','", what()+": ']' (a row is [key, value])",
			func() (ok bool) {
				k, ok = sc.integer(what() + " key (a row of a key range has an integer key)")
				return ok
			},
			func() (ok bool) { v, vname, ok = p.scalar(what() + " value"); return ok }) {
			return false
		}
		switch {
		case k < op.key || k >= op.val:
			sc.i = at
			return sc.fail("%s: key %d is outside the predicate's range [%d, %d)", what(), k, op.key, op.val)
		case vname == 0 && v == history.EmptyList:
			sc.i = at
			return sc.fail("%s: value %d stands for an absent row; a predicate read returns live rows only", what(), v)
		case test != nil && vname != 0:
			sc.i = at
			return sc.fail("%s: a value test matches integer values only, and the row's value is a string", what())
		case !test.Match(v):
			sc.i = at
			return sc.fail("%s: value %d does not pass the predicate's value test (%s): a predicate read returns matching rows only", what(), v, test)
		}
		if i < smallRows {
			for _, r := range f.rows[op.lo:] {
				if r.key == k {
					sc.i = at
					return sc.fail("%s: key %d is returned twice", what(), k)
				}
			}
		}
		f.rows = append(f.rows, selRow{k, v, vname})
		return true
	})
	if !ok {
		return false
	}
	op.hi = int32(len(f.rows))
	if op.hi-op.lo > smallRows {
		p.rowKeys = p.rowKeys[:0]
		for _, r := range f.rows[op.lo:] {
			p.rowKeys = append(p.rowKeys, r.key)
		}
		slices.Sort(p.rowKeys)
		for i := 1; i < len(p.rowKeys); i++ {
			if p.rowKeys[i] == p.rowKeys[i-1] {
				return sc.fail("ops[%d]: key %d is returned twice", n, p.rowKeys[i])
			}
		}
	}
	sc.ws()
	if sc.peek() != ']' {
		if sc.peek() == ',' {
			return sc.fail(`ops[%d]: too many elements (a predicate read is %s)`, n, shape)
		}
		return sc.fail(`ops[%d]: expected ']' after the rows, found %s`, n, sc.found())
	}
	sc.i++
	f.ops = append(f.ops, op)
	return true
}

// rowOp adds an insert, a delete or a predicate read to t. Under "zero"
// each row it names starts absent (the empty value), as do the keys of a
// predicate read's range (Builder.InitSelected).
func (p *parser) rowOp(t history.TxnID, op rawOp, track bool) {
	b := p.b
	switch op.src {
	case history.SrcInsert:
		k := p.keyID(op.key, op.kname)
		b.InsertID(t, k, p.valID(k, op.val, op.vname))
		if track {
			p.markListish(k)
		}
	case history.SrcDelete:
		k := p.keyID(op.key, op.kname)
		b.DeleteID(t, k)
		if track {
			p.markListish(k)
		}
	case history.SrcSelect:
		rows := p.rows[:0]
		for _, r := range p.f.rows[op.lo:op.hi] {
			k := b.KeyID(r.key)
			rows = append(rows, history.Version{Key: k, Value: p.valID(k, r.val, r.vname)})
			if track {
				p.markListish(k)
			}
		}
		p.rows = rows
		var test *history.ValueTest
		if op.kname > 0 {
			test = p.f.tests[op.kname-1]
		}
		b.SelectWhereID(t, op.key, op.val, test, rows)
		if track {
			b.InitSelected(history.EmptyList)
		}
	}
}

// valueTest parses the value test field ("in", "values" or "mod") of predicate
// read n into test; start is where the field's name began.
func (p *lineScanner) valueTest(n int, field string, start int, test *history.ValueTest) bool {
	sc := &p.sc
	if field == "in" {
		if test.HasIn {
			sc.i = start
			return sc.fail(`ops[%d] predicate: duplicate field "in"`, n)
		}
		test.HasIn = true
		test.In = []int64{}
		ok := p.array(fmt.Sprintf(`ops[%d] predicate field "in": [values], integers`, n), func(i int) bool {
			v, ok := sc.integer(fmt.Sprintf(`ops[%d] predicate field "in" value %d (a value test takes integers)`, n, i))
			test.In = append(test.In, v)
			return ok
		})
		slices.Sort(test.In)
		test.In = slices.Compact(test.In)
		return ok
	}
	has, a, b := &test.HasRange, &test.VLo, &test.VHi
	what := `predicate field "values": [lo, hi], two integers`
	if field == "mod" {
		has, a, b = &test.HasMod, &test.Mod, &test.Rem
		what = `predicate field "mod": [m, r], two integers`
	}
	if *has {
		sc.i = start
		return sc.fail(`ops[%d] predicate: duplicate field %q`, n, field)
	}
	*has = true
	at := sc.i
	var ok bool
	if !sc.expect('[', fmt.Sprintf(`ops[%d] %s`, n, what)) {
		return false
	}
	sc.ws()
	if *a, ok = sc.integer(fmt.Sprintf(`ops[%d] %s, the first`, n, what)); !ok {
		return false
	}
	sc.ws()
	if !sc.expect(',', fmt.Sprintf(`ops[%d] %s`, n, what)) {
		return false
	}
	sc.ws()
	if *b, ok = sc.integer(fmt.Sprintf(`ops[%d] %s, the second`, n, what)); !ok {
		return false
	}
	sc.ws()
	if !sc.expect(']', fmt.Sprintf(`ops[%d] %s`, n, what)) {
		return false
	}
	switch {
	case field == "mod" && test.Mod == 0:
		sc.i = at
		return sc.fail(`ops[%d] predicate field "mod": [0, %d] takes values modulo 0 (value mod m = r, m != 0)`, n, test.Rem)
	case field == "values" && test.VLo > test.VHi:
		sc.i = at
		return sc.fail(`ops[%d] predicate field "values": [%d, %d] is not a range (lo <= hi; values lo <= v < hi)`, n, test.VLo, test.VHi)
	}
	return true
}

// intPair reads "[int, int]" without formatting any message; it reports
// false, and leaves the scanner where it was, on anything else.
func (p *lineScanner) intPair() (a, b int64, ok bool) {
	sc := &p.sc
	at := sc.i
	if sc.peek() != '[' || sc.err != nil {
		return 0, 0, false
	}
	sc.i++
	sc.ws()
	if c := sc.peek(); c == '-' || c >= '0' && c <= '9' {
		a, ok = sc.integer("")
	}
	if ok {
		sc.ws()
		ok = sc.peek() == ','
	}
	if ok {
		sc.i++
		sc.ws()
		ok = false
		if c := sc.peek(); c == '-' || c >= '0' && c <= '9' {
			b, ok = sc.integer("")
		}
	}
	if ok {
		sc.ws()
		ok = sc.peek() == ']'
	}
	if !ok {
		sc.i, sc.err = at, nil
		return 0, 0, false
	}
	sc.i++
	return a, b, true
}
