package execoracle

import (
	"slices"
	"strings"
	"testing"
)

// predLevels are the levels the predicate examples state a verdict at;
// strict-ser is checked too and must agree with SER (no example is timed).
var predLevels = []Level{RC, RA, CC, RR, PC, PSI, SI, SER}

// predExamples are the oracle's acceptance test for rows and predicates:
// tiny histories whose verdict at every level is derived by hand from the
// definitions in doc.go, the derivation in the comment. Unless said, every
// transaction is committed and in a session of its own, and all is the
// predicate "key in [0,10)", which covers every row.
func predExamples() []example {
	all := Range(0, 10)
	in := func(vs ...int64) *Predicate { return &Predicate{Lo: 0, Hi: 10, In: vs} }
	notSER := []Level{RC, RA, CC, RR, PC, PSI, SI}
	return []example{
		// Phantom. T1's second read returns the row T2 inserted, its first
		// did not. From RA up T1 has one visible set, so its two reads
		// agree. At RC each read has its own set: ∅, then {T2}. At RR the
		// returned row (5,1) is read at its AR-latest version (AR T2, T1),
		// and a row a predicate read does not return may be observed at an
		// older version (here unborn): allowed (a predicate
		// anti-dependency T1→T2 closes the cycle with T2→T1, no item one).
		{"phantom", hist(tx(1, P(all), P(all, 5, 1)), tx(2, I(5, 1))), []Level{RC, RR}},

		// A predicate read sees at least what an earlier read of the same
		// transaction saw. T1 read row 5 as T2 inserted it, then its range
		// misses it: at RC the range's set contains the point read's; RR is
		// RC's reads with serializable items; RA and up have one set.
		{"phantom after a point read", hist(tx(1, R(5, 1), P(all)), tx(2, I(5, 1))), nil},

		// The other order: T1's range misses row 5, then T1 reads it. At RC
		// the range observes row 5 with ∅ (unborn), the point read with
		// {T2}. At RR the point read is an item read (AR T2, T1: it sees
		// T2's insert) and the row the range did not return may be older.
		// From RA up one set cannot give both.
		{"phantom, then a point read", hist(tx(1, P(all), R(5, 1)), tx(2, I(5, 1))), []Level{RC, RR}},

		// Returned rows are item reads. T2 moves row 1 from value 10 to 20;
		// T1 (after T0 in its session) returns it under each predicate in
		// turn. RC allows it (the second read sees T2); at RR both returned
		// rows are read at their AR-latest version, which cannot be 10 and
		// 20; from RA up one set cannot give both.
		{"update moves a row between predicates", hist(
			tx(1, I(1, 10)),
			tx(2, W(1, 20)),
			tx(1, P(in(10), 1, 10), P(in(20), 1, 20))), []Level{RC}},

		// Write skew through predicates (G2, not G2-item): each reads the
		// range empty and inserts into it. At SER the later of the two sees
		// the other's row. Every other level lets both see nothing (SI and
		// PSI: they write different keys; RR: a row not returned may be
		// unborn).
		{"write skew via predicates", hist(tx(1, P(all), I(1, 1)), tx(2, P(all), I(2, 1))), notSER},

		// Hermitage's G2 with a value predicate (value % 3 = 0 among the
		// values used): the rows T0 inserted do not match, so whether a
		// reader sees T0 changes nothing. Same verdicts as above.
		{"G2 via a value predicate", hist(
			tx(1, I(1, 10), I(2, 20)),
			tx(2, P(in(30, 42)), I(3, 30)),
			tx(3, P(in(30, 42)), I(4, 42))), notSER},

		// Write skew through point reads of absent rows (G2-item): the same
		// as the register write skew; RR forbids it because the item reads
		// of the later transaction in AR see the earlier one's insert. So
		// RR and SI are incomparable (phantom: RR yes, SI no; here the
		// reverse).
		{"write skew via absent reads (G2-item)", hist(
			tx(1, N(1), N(2), I(1, 1)), tx(2, N(1), N(2), I(2, 1))), []Level{RC, RA, CC, PC, PSI, SI}},

		// One item and one predicate anti-dependency: T1 read row 1 absent
		// and T2 inserts it (item T1→T2); T2's range [2,3) misses row 2,
		// which T1 inserts (predicate T2→T1). Read literally, Adya's G2-item
		// ("a cycle with one or more item anti-dependency edges") forbids it
		// at PL-2.99; lock-based repeatable read (long item locks, short
		// predicate locks) allows it, and so does RR here (doc.go): AR
		// T1, T2, T2's range observes row 2 unborn.
		{"G2 with an item and a predicate anti-dependency", hist(
			tx(1, N(1), I(2, 1)), tx(2, P(Range(2, 3)), I(1, 1))), notSER},

		// A fractured predicate read: T2 returns row 1 of T1 but not its row
		// 2. From RA up T2 sees T1 whole or not at all. At RC and RR each
		// key of a predicate read is observed as by a point read of its own
		// (row 1 with {T1}, row 2 with ∅), as a lock-based scan does.
		{"fractured predicate read", hist(tx(1, I(1, 1), I(2, 1)), tx(2, P(all, 1, 1))), []Level{RC, RR}},

		// Hermitage "PMP" (predicate-many-preceders) on read predicates: T0
		// and T1 share a session. T1's first read (value = 30) misses the
		// row T2 inserts, its second returns it. As for the phantom: one
		// visible set from RA up; RC and RR allow it (AR T0, T2, T1).
		{"PMP", hist(
			tx(1, I(1, 10), I(2, 20)),
			tx(1, P(in(30)), P(all, 1, 10, 2, 20, 3, 30)),
			tx(2, I(3, 30))), []Level{RC, RR}},

		// The same where T1's second read does not see T2 either (what a
		// snapshot gives): AR T0, T1, T2 satisfies SER.
		{"PMP prevented", hist(
			tx(1, I(1, 10), I(2, 20)),
			tx(1, P(in(30)), P(all, 1, 10, 2, 20)),
			tx(2, I(3, 30))), predLevels},

		// Hermitage "PMP for write predicates" as PostgreSQL's read
		// committed runs it: T1 adds 10 to every row; T2's "delete where
		// value = 20", blocked by T1, re-checks only the rows it found
		// matching once T1 commits, so it sees row 1 before T1 (10) and row
		// 2 after (30), and deletes nothing. T2 also read row 1 (10) first,
		// so its sets contain T0. At RC the predicate read observes row 1
		// with {T0} and row 2 with {T0, T1}. From RA up one set cannot see
		// 10 in row 1 and 30 in row 2. At RR the item read r(1)=10 puts T2
		// before T1 in AR, and then row 2 can only be 20 (it matches).
		{"PMP for write predicates, PostgreSQL read committed", hist(
			tx(2, I(1, 10), I(2, 20)),
			tx(1, P(all, 1, 10, 2, 20), W(1, 20), W(2, 30)),
			tx(2, R(1, 10), P(in(20)))), []Level{RC}},

		// Reads of an absent row: T1 inserts and deletes row 1, so every
		// version a reader can see is absent (unborn, or T1's deleted one).
		{"read of an absent row", hist(tx(1, I(1, 1), D(1)), tx(2, N(1))), predLevels},

		// A row read after its deletion in the same session: RC's reads need
		// not see the session; RA and up, and RR (AR contains the session
		// order, items are read at their AR-latest version), see the delete.
		{"read after a delete in session", hist(tx(1, I(1, 1)), tx(1, D(1)), tx(1, R(1, 1))), []Level{RC}},

		// Insert after delete, with the value repeated: session 1 inserts 7,
		// deletes, inserts 7 again; session 2 reads 7, absent, 7. The two 7s
		// are two versions (T1's, T3's); AR T1, T4, T2, T5, T3, T6 is
		// serial.
		{"insert after delete", hist(
			tx(1, I(1, 7)), tx(1, D(1)), tx(1, I(1, 7)),
			tx(2, R(1, 7)), tx(2, N(1)), tx(2, R(1, 7))), predLevels},

		// Without the re-insert the second 7 is T1's version again, after
		// the reader's session saw the delete: RC allows it (no session), RA
		// too (T6 sees T5, not what T5 saw); CC and PSI carry T2 from T5 to
		// T6 (TRANSVis), PC and SI the prefix, and SER and RR read items in
		// AR order.
		{"resurrection without a re-insert", hist(
			tx(1, I(1, 7)), tx(1, D(1)),
			tx(2, R(1, 7)), tx(2, N(1)), tx(2, R(1, 7))), []Level{RC, RA}},

		// A predicate read sees its transaction's own earlier writes: row 1
		// deleted, row 3 inserted, row 2 from T0 in the store.
		{"predicate read sees its own insert and delete", hist(
			tx(1, I(1, 1), I(2, 2)),
			tx(1, D(1), I(3, 3), P(all, 2, 2, 3, 3))), predLevels},

		// ... and must: a range that misses an own insert fails at every
		// level, like a register read that misses an own write.
		{"predicate read misses its own insert", hist(tx(1, I(5, 1), P(all))), nil},

		// An own insert that does not match is not returned.
		{"own insert outside the predicate", hist(tx(1, I(5, 1), P(in(2)))), predLevels},

		// A returned row that does not match the predicate, or a row nobody
		// wrote, can be returned by no execution.
		{"returned row does not match", hist(tx(1, I(5, 1)), tx(2, P(in(2), 5, 1))), nil},
		{"returned row nobody wrote", hist(tx(1, P(all, 4, 4))), nil},

		// A key in a predicate's range is a row and starts unborn (a
		// register would start at 0): r(3)=0 needs a writer of 0.
		{"a key in a range starts unborn", hist(tx(1, R(3, 0), P(Range(0, 5)))), nil},

		// An unknown transaction's insert returned by a range read: it
		// committed.
		{"unknown insert seen", hist(Txn{Session: 1, Status: Unknown, Ops: []Op{I(1, 1)}}, tx(2, P(all, 1, 1))), predLevels},

		// An aborted transaction's insert is never seen.
		{"aborted insert seen", hist(Txn{Session: 1, Status: Aborted, Ops: []Op{I(1, 1)}}, tx(2, P(all, 1, 1))), nil},
	}
}

func TestPredicateExamples(t *testing.T) {
	for _, ex := range predExamples() {
		for _, l := range append(slices.Clone(predLevels), StrictSER) {
			want := slices.Contains(ex.sat, l) || l == StrictSER && slices.Contains(ex.sat, SER)
			e, err := Decide(ex.h, l, LevelNone)
			if err != nil {
				t.Fatalf("%s at %v: %v", ex.name, l, err)
			}
			if (e != nil) != want {
				t.Errorf("%s at %v: satisfied = %v, want %v\n%s", ex.name, l, e != nil, want, ex.h.JSONL())
				continue
			}
			if e != nil {
				if err := Replay(ex.h, l, LevelNone, e.Order); err != nil {
					t.Errorf("%s at %v: own witness %v fails replay: %v", ex.name, l, e.Order, err)
				}
			}
			// The literal enumeration (brute_test.go) agrees, where it
			// finishes (five transactions or fewer).
			if got, done := literalSatisfies(ex.h, l, LevelNone, 2000000); !done {
				if len(ex.h.Txns) <= 5 {
					t.Errorf("%s at %v: too large for the literal enumeration", ex.name, l)
				}
			} else if got != want {
				t.Errorf("%s at %v: literal enumeration says %v, want %v", ex.name, l, got, want)
			}
		}
	}
}

// In a mixed history an RR transaction reads items serializably and
// predicates as at RC, whatever the others' levels.
func TestPredicateMixed(t *testing.T) {
	lv := func(t Txn, l Level) Txn { t.Level = l; return t }
	all := Range(0, 10)
	phantom := func(a Level) *History { return hist(lv(tx(1, P(all), P(all, 5, 1)), a), tx(2, I(5, 1))) }
	cases := []struct {
		name string
		h    *History
		want bool
	}{
		{"phantom at rr", phantom(RR), true},
		{"phantom at si", phantom(SI), false},
		{"phantom at rc", phantom(RC), true},
		{"item skew rr+rr", hist(lv(tx(1, N(1), N(2), I(1, 1)), RR), lv(tx(2, N(1), N(2), I(2, 1)), RR)), false},
		{"item skew rr+si", hist(lv(tx(1, N(1), N(2), I(1, 1)), RR), lv(tx(2, N(1), N(2), I(2, 1)), SI)), true},
		{"predicate skew rr+rr", hist(lv(tx(1, P(all), I(1, 1)), RR), lv(tx(2, P(all), I(2, 1)), RR)), true},
		{"predicate skew rr+ser", hist(lv(tx(1, P(all), I(1, 1)), RR), lv(tx(2, P(all), I(2, 1)), SER)), true},
		{"predicate skew ser+ser", hist(lv(tx(1, P(all), I(1, 1)), SER), lv(tx(2, P(all), I(2, 1)), SER)), false},
	}
	for _, c := range cases {
		got, err := Satisfies(c.h, Mixed, SER)
		if err != nil {
			t.Fatal(c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: satisfied = %v, want %v\n%s", c.name, got, c.want, c.h.JSONL())
		}
		if got2, done := literalSatisfies(c.h, Mixed, SER, 2000000); !done || got2 != c.want {
			t.Errorf("%s: literal enumeration says %v (done %v), want %v", c.name, got2, done, c.want)
		}
	}
}

func TestPredicateErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		h    *History
	}{
		{"list in a range", hist(tx(1, A(1, 1)), tx(2, P(Range(0, 5))))},
		{"list inserted", hist(tx(1, A(1, 1), I(1, 2)))},
		{"no predicate", hist(tx(1, Op{Kind: PredRead}))},
	} {
		if _, err := Decide(c.h, SER, LevelNone); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

func TestPredicateJSONL(t *testing.T) {
	h := hist(
		Txn{Session: 1, Level: RR, Ops: []Op{I(1, 10), D(2), N(3), W(4, 5), R(4, 5),
			P(&Predicate{Lo: 0, Hi: 10, In: []int64{10, 20}, VLo: 5, VHi: 50}, 1, 10), P(Range(-5, 5))}})
	want := `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"level":"rr","ops":[["insert",1,10],["delete",2],["r",3,null],["w",4,5],["r",4,5],` +
		`["select",{"keys":[0,10],"in":[10,20],"values":[5,50]},[[1,10]]],["select",{"keys":[-5,5]},[]]]}
`
	if got := string(h.JSONL()); got != want {
		t.Errorf("JSONL:\n%s\nwant\n%s", got, want)
	}
	if s := h.Txns[0].Ops[5].String(); !strings.Contains(s, "select([0,10) in [10 20] values [5,50))={(1,10)}") {
		t.Errorf("String: %s", s)
	}
	c := h.Clone()
	c.Txns[0].Ops[5].Pred.In[0] = 99
	c.Txns[0].Ops[5].Rows[0].Value = 99
	if h.Txns[0].Ops[5].Pred.In[0] != 10 || h.Txns[0].Ops[5].Rows[0].Value != 10 {
		t.Error("Clone shares a predicate or its rows")
	}
}
