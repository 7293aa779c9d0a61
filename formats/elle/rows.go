package elle

import (
	"math"

	"github.com/hyperiso/hyperiso/history"
)

// Rows, as Elle's closed-predicate workload writes them (elle.closed-
// predicate, docs/formats.md): beside rw-register's [:r k v] and [:w k v],
//
//	[:insert k v]            insert row k with value v
//	[:delete k]              delete row k
//	[:rp pred {k v, …}]      a predicate read: the rows that matched pred
//	{:f :init, :value {k v, …}}  the operation that creates the universe
//
// A read of nil reads an unborn or dead row: the empty value, which T⊥
// writes to every key and a delete writes (docs/predicates.md). Elle's
// predicate reads range over every key of the history (its closed
// universe), which is the model's predicate read over the whole integer
// key range, with Elle's predicate as its value test (elleTest).
// Elle's :init gives the initial state: T⊥ writes its map (takeInit).

// rowFunc reports whether f is one of the row micro-operations.
func rowFunc(f string) bool { return f == "insert" || f == "delete" || f == "rp" }

// isInit reports whether op is an :f :init operation.
func (op *rawOp) isInit() bool { return op.odd != nil && op.odd.init }

// takeInit takes the :f :init operations out of keep: the map of the one
// that completed :ok is the initial state, T⊥'s writes, as Elle trusts it
// ("the database will not return prior (e.g. unborn) states"); keys it does
// not name start absent. An :init that failed changed nothing; one of
// unknown outcome, or a second :ok one, leaves the initial state unknown.
func (p *parser) takeInit(keep []int) ([]int, error) {
	out := keep[:0]
	var inits []int
	for _, i := range keep {
		if p.ops[i].isInit() {
			inits = append(inits, i)
		} else {
			out = append(out, i)
		}
	}
	if len(inits) == 0 {
		return out, nil
	}
	okAt, pending := -1, 0
	for _, i := range inits {
		op := &p.ops[i]
		switch op.typ {
		case tInvoke:
			pending++
		case tFail:
			pending--
			p.warn("init", p.pos(op.line), "an :init operation failed: it changed nothing")
		case tInfo:
			pending--
			if err := p.fail("init", op.line, "map skipped", "an :init operation of unknown outcome (:info): the initial state is unknown"); err != nil {
				return nil, err
			}
		case tOK:
			pending--
			if okAt >= 0 {
				if err := p.fail("init", op.line, "map skipped", "a second :init operation completed :ok (the first at line %d)", p.ops[okAt].line); err != nil {
					return nil, err
				}
				continue
			}
			okAt = i
		}
	}
	if okAt < 0 && pending > 0 {
		if err := p.fail("init", p.ops[inits[0]].line, "map skipped", "an :init operation never completed: the initial state is unknown"); err != nil {
			return nil, err
		}
	}
	if okAt < 0 {
		return out, nil
	}
	op := &p.ops[okAt]
	p.scratch.reset()
	v := p.opValue(op)
	if v.k != vMap {
		return out, p.fail("init", op.line, "value ignored", "the :value of an :f :init operation must be a map of keys to values, found %s", v.describe())
	}
	p.b.SetInitPos(p.pos(op.line))
	for i := 0; i+1 < len(v.elems); i += 2 {
		kv, vv := v.elems[i], v.elems[i+1]
		key, ok, err := p.key(kv, i/2, op.line)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if vv.k == vNil {
			if err := p.fail("init", op.line, "value ignored", "the :init gives key %s the value nil", kv.describe()); err != nil {
				return nil, err
			}
			continue
		}
		x, ok, err := p.value(key, kv, vv, i/2, op.line, "the initial value")
		if err != nil {
			return nil, err
		}
		if ok {
			p.b.InitWriteID(key, x)
		}
	}
	return out, nil
}

// predicateRead reads [:rp pred result], the j-th micro-operation of t:
// result's rows become a predicate read of every integer key, with pred's
// value test (elleTest).
func (p *parser) predicateRead(t history.TxnID, j int, m val, line int, reads bool) error {
	const drop = "micro-operation dropped"
	test, ok, err := p.elleTest(m.elems[1], j, line)
	if !ok || !reads {
		return err
	}
	res := m.elems[2]
	if res.k != vMap {
		return p.fail("micro-op", line, drop, "micro-operation %d: a predicate read returns a map of keys to values, found %s", j+1, res.describe())
	}
	rows := make([]history.Version, 0, len(res.elems)/2)
	for i := 0; i+1 < len(res.elems); i += 2 {
		kv, vv := res.elems[i], res.elems[i+1]
		switch {
		case kv.k != vInt:
			return p.fail("micro-op", line, drop, "micro-operation %d: the predicate read returns key %s: hyperiso's predicate reads cover integer keys only", j+1, kv.describe())
		case kv.n == math.MaxInt64:
			return p.fail("micro-op", line, drop, "micro-operation %d: key %d cannot be in a predicate read (hyperiso's key ranges are half-open)", j+1, kv.n)
		case i > 0 && res.elems[i-2].k == vInt && res.elems[i-2].n == kv.n:
			return p.fail("micro-op", line, drop, "micro-operation %d: the predicate read returns key %d twice", j+1, kv.n)
		case vv.k == vNil:
			return p.fail("micro-op", line, drop, "micro-operation %d: the predicate read returns key %d as nil; it returns only the rows that matched", j+1, kv.n)
		}
		key := p.b.KeyID(kv.n)
		if test != nil && (vv.k != vInt || !test.Match(vv.n)) {
			return p.fail("micro-op", line, drop, "micro-operation %d: the predicate read returns key %d = %s, which its predicate %s rejects: a predicate read returns matching rows only", j+1, kv.n, vv.describe(), m.elems[1].describe())
		}
		x, ok, err := p.value(key, kv, vv, j, line, "a value returned")
		if err != nil || !ok {
			return err
		}
		rows = append(rows, history.Version{Key: key, Value: x})
	}
	if p.preds == 0 {
		p.predLine = line
	}
	p.preds++
	p.b.SelectWhereID(t, math.MinInt64, math.MaxInt64, test, rows)
	return nil
}

// elleTest reads an Elle predicate as the model's value test: :true is no
// test (nil), [:= v] the test "value in {v}", and [:mod m r] "value mod m
// = r" with Clojure's floored modulo (history.FlooredMod), as Elle
// evaluates them. In EDN the names are keywords; elle-cli's JSON writes
// them as strings. Equal predicates share one test. ok is false for a
// predicate refused (err is nil under lenient reading, which drops it).
func (p *parser) elleTest(pred val, j, line int) (test *history.ValueTest, ok bool, err error) {
	const drop = "micro-operation dropped"
	fail := func(format string, args ...any) (*history.ValueTest, bool, error) {
		args = append([]any{j + 1, pred.describe()}, args...)
		return nil, false, p.fail("micro-op", line, drop, "micro-operation %d: the predicate %s "+format, args...)
	}
	isName := func(v val, want string) bool {
		name, ok := v.name()
		return ok && name == want && (v.k == vKeyword || p.syntax != EDN)
	}
	if isName(pred, "true") {
		return nil, true, nil
	}
	const known = "(Elle's predicates are :true, [:= v] and [:mod m r])"
	if pred.k != vVec || len(pred.elems) == 0 {
		return fail("is unknown " + known)
	}
	ints := func(n int) bool {
		if len(pred.elems) != n+1 {
			return false
		}
		for _, e := range pred.elems[1:] {
			if e.k != vInt {
				return false
			}
		}
		return true
	}
	var key [3]int64
	switch f := pred.elems[0]; {
	case isName(f, "="):
		if !ints(1) {
			return fail("is not [:= v] with an integer v: hyperiso's value tests test integers")
		}
		key = [3]int64{0, pred.elems[1].n}
	case isName(f, "mod"):
		if !ints(2) {
			return fail("is not [:mod m r] with integers m and r")
		}
		if pred.elems[1].n == 0 {
			return fail("takes a value modulo 0")
		}
		key = [3]int64{1, pred.elems[1].n, pred.elems[2].n}
	default:
		return fail("is unknown " + known)
	}
	if test, ok := p.tests[key]; ok {
		return test, true, nil
	}
	test = &history.ValueTest{In: []int64{key[1]}, HasIn: true}
	if key[0] == 1 {
		test = &history.ValueTest{Mod: key[1], Rem: key[2], HasMod: true}
	}
	if p.tests == nil {
		p.tests = map[[3]int64]*history.ValueTest{}
	}
	p.tests[key] = test
	return test, true, nil
}

// predicateUniverse refuses a history whose predicate reads would have to
// cover keys that are names: Elle's universe is every key, the model's
// predicate reads cover integer keys. Lenient reading leaves the named
// keys out of the predicate reads, counted as dropped.
func (p *parser) predicateUniverse() error {
	if p.preds == 0 || p.named == 0 {
		return nil
	}
	err := p.fail("rows", p.predLine, "the named keys are left out of the predicate reads", "a predicate read ([:rp …]) in a history with keys that are not integers (%s, line %d): Elle's predicate reads cover every key, hyperiso's the integer keys only", p.firstName, p.firstLine)
	if err == nil {
		p.dropped.Other++
	}
	return err
}
