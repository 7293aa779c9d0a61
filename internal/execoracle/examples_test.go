package execoracle

import (
	"math"
	"testing"
)

var allLevels = []Level{RC, RA, CC, PC, PSI, SI, SER, StrictSER}

// tx builds a committed transaction of session s.
func tx(s int, ops ...Op) Txn { return Txn{Session: s, Ops: ops} }

func hist(ts ...Txn) *History { return &History{Txns: ts} }

// expectation lists the levels a history satisfies; the others it violates.
type example struct {
	name string
	h    *History
	sat  []Level
}

func examples() []example {
	unknown := func(t Txn) Txn { t.Status = Unknown; return t }
	timed := func(t Txn, a, b int64) Txn { t.Timed, t.Start, t.End = true, a, b; return t }
	const x, y = 1, 2
	return []example{
		{"1 own appends then a read without them", hist(tx(1, A(1, 1), A(1, 2), L(1, 2))), nil},
		{"2 a read of half a block", hist(tx(1, A(1, 1), A(1, 2)), tx(2, L(1, 2))), nil},
		{"3 session sees the appender's effect transitively", hist(
			tx(2, A(1, 1)), tx(1, L(1, 1)), tx(1, A(1, 1), L(1, 1))), []Level{RC, RA}},
		{"4 duplicate element in a later list", hist(
			tx(1, L(1), L(1), A(1, 1)), tx(1, A(1, 2)), tx(1, L(1, 1, 2), A(1, 2), A(1, 1)), tx(1, L(1, 1, 2, 1))), nil},
		{"5 unknown transaction's append seen without its prefix", hist(
			tx(1, A(1, 7)), tx(2, A(1, 1)), unknown(tx(2, L(1, 7, 1), A(1, 3))), tx(3, L(1, 1, 3))), nil},
		{"6 own session's append unseen", hist(tx(1, A(1, 1)), tx(1, A(1, 2), L(1, 2))), []Level{RC}},
		{"7 a later read sees less", hist(tx(1, A(1, 1)), tx(2, A(1, 2), L(1, 1, 2), L(1, 2))), nil},
		{"8 two orders of one key", hist(tx(1, A(1, 1)), tx(2, A(1, 2), L(1, 1, 2)), tx(3, L(1, 2, 1))), nil},
		{"9 fractured read through the list prefix", hist(
			tx(1, A(x, 1), A(y, 1)), tx(2, A(x, 2)), tx(3, L(x, 1, 2), L(y))), nil},

		{"long fork", hist(tx(1, A(x, 1)), tx(2, A(y, 1)), tx(3, L(x, 1), L(y)), tx(4, L(x), L(y, 1))),
			[]Level{RC, RA, CC, PSI}},
		{"write skew", hist(tx(1, L(x), L(y), A(x, 1)), tx(2, L(x), L(y), A(y, 1))),
			[]Level{RC, RA, CC, PC, PSI, SI}},
		{"write skew on registers", hist(tx(1, R(x, 0), R(y, 0), W(x, 1)), tx(2, R(x, 0), R(y, 0), W(y, 1))),
			[]Level{RC, RA, CC, PC, PSI, SI}},
		{"lost update", hist(tx(1, L(x), A(x, 1)), tx(2, L(x), A(x, 2)), tx(3, L(x, 1, 2))),
			[]Level{RC, RA, CC, PC}},
		{"lost update on registers", hist(tx(1, R(x, 0), W(x, 1)), tx(2, R(x, 0), W(x, 2)), tx(3, R(x, 2))),
			[]Level{RC, RA, CC, PC}},
		{"fractured read, monotone at RC", hist(tx(1, A(x, 1), A(y, 1)), tx(2, L(x, 1), L(y))), nil},
		{"non-repeatable read", hist(tx(1, A(x, 1)), tx(2, L(x), L(x, 1))), []Level{RC}},
		{"fractured read", hist(tx(1, A(x, 1), A(y, 1)), tx(2, L(y), L(x, 1))), []Level{RC}},
		{"causality violation", hist(tx(1, A(x, 1)), tx(2, L(x, 1), A(y, 1)), tx(3, L(y, 1), L(x))),
			[]Level{RC, RA}},
		{"stale read after real time", hist(timed(tx(1, A(x, 1)), 0, 1), timed(tx(2, L(x)), 2, 3)),
			[]Level{RC, RA, CC, PC, PSI, SI, SER}},
		{"overlapping in real time", hist(timed(tx(1, A(x, 1)), 0, 2), timed(tx(2, L(x)), 1, 3)), allLevels},
		{"unknown precedes nothing in real time", hist(
			timed(unknown(tx(1, A(x, 1))), 0, math.MaxInt64), timed(tx(2, L(x)), 2, 3), timed(tx(3, L(x, 1)), 4, 5)), allLevels},
		{"unknown needed", hist(unknown(tx(1, A(x, 1))), tx(2, L(x, 1))), allLevels},
		{"aborted read", hist(Txn{Session: 1, Status: Aborted, Ops: []Op{A(x, 1)}}, tx(2, L(x, 1))), nil},
		{"aborted reads mean nothing", hist(Txn{Session: 1, Status: Aborted, Ops: []Op{L(x, 5, 5)}}, tx(2, L(x))), allLevels},
		{"serial", hist(tx(1, A(x, 1)), tx(2, L(x, 1), A(x, 2)), tx(1, L(x, 1, 2), W(3, 4)), tx(3, R(3, 4), L(x, 1, 2))), allLevels},
		{"duplicate values", hist(tx(1, A(x, 1)), tx(2, A(x, 1)), tx(3, L(x, 1)), tx(4, L(x, 1, 1))), allLevels},
		{"register internal read", hist(tx(1, W(x, 1), R(x, 2))), nil},
	}
}

func TestExamples(t *testing.T) {
	for _, ex := range examples() {
		for _, l := range allLevels {
			want := false
			for _, s := range ex.sat {
				want = want || s == l
			}
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
		}
	}
}

func TestMixedExamples(t *testing.T) {
	lv := func(t Txn, l Level) Txn { t.Level = l; return t }
	const x, y = 1, 2
	skew := func(a, b Level) *History {
		return hist(lv(tx(1, L(x), L(y), A(x, 1)), a), lv(tx(2, L(x), L(y), A(y, 1)), b))
	}
	cases := []struct {
		name string
		h    *History
		def  Level
		want bool
	}{
		{"write skew ser+ser", skew(SER, SER), SI, false},
		{"write skew ser+si", skew(SER, SI), SER, true},
		{"write skew default ser", skew(LevelNone, LevelNone), SER, false},
		{"write skew default si", skew(LevelNone, LevelNone), SI, true},
		// Long fork: the readers at PSI allow it, at PC they do not.
		{"long fork psi readers", hist(tx(1, A(x, 1)), tx(2, A(y, 1)), lv(tx(3, L(x, 1), L(y)), PSI), lv(tx(4, L(x), L(y, 1)), PSI)), RA, true},
		{"long fork pc+psi readers", hist(tx(1, A(x, 1)), tx(2, A(y, 1)), lv(tx(3, L(x, 1), L(y)), PC), lv(tx(4, L(x), L(y, 1)), PSI)), RA, true},
		{"long fork pc readers", hist(tx(1, A(x, 1)), tx(2, A(y, 1)), lv(tx(3, L(x, 1), L(y)), PC), lv(tx(4, L(x), L(y, 1)), PC)), RA, false},
		// SER writers see each other, so TRANSVis carries one to each reader.
		{"long fork ser writers", hist(tx(1, A(x, 1)), tx(2, A(y, 1)), lv(tx(3, L(x, 1), L(y)), PSI), lv(tx(4, L(x), L(y, 1)), PSI)), SER, false},
		// An RC transaction's session predecessor is causally before it:
		// a CC reader that sees it sees the predecessor (docs/mixed.md).
		{"cc sees rc's session", hist(tx(1, A(x, 1)), lv(tx(1, A(y, 1)), RC), lv(tx(2, L(y, 1), L(x)), CC)), SER, false},
		{"ra need not", hist(tx(1, A(x, 1)), lv(tx(1, A(y, 1)), RC), lv(tx(2, L(y, 1), L(x)), RA)), SER, true},
	}
	for _, c := range cases {
		got, err := Satisfies(c.h, Mixed, c.def)
		if err != nil {
			t.Fatal(c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: satisfied = %v, want %v\n%s", c.name, got, c.want, c.h.JSONL())
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := Decide(hist(tx(1, W(1, 1)), tx(2, L(1))), SER, LevelNone); err == nil {
		t.Error("a key both register and list was accepted")
	}
	if _, err := Decide(hist(tx(1, W(1, 1))), Mixed, LevelNone); err == nil {
		t.Error("mixed without a default was accepted")
	}
	if _, err := Decide(hist(tx(1, W(1, 1))), LevelNone, LevelNone); err == nil {
		t.Error("no level was accepted")
	}
}

func TestReplayRejects(t *testing.T) {
	h := hist(tx(1, A(1, 1)), tx(2, A(1, 2), L(1, 1, 2)), tx(3, L(1, 1, 2)))
	if err := Replay(h, SER, LevelNone, []int{0, 1, 2}); err != nil {
		t.Errorf("good order refused: %v", err)
	}
	for _, o := range [][]int{{1, 0, 2}, {0, 1}, {0, 1, 1}, {2, 0, 1}} {
		if err := Replay(h, SER, LevelNone, o); err == nil {
			t.Errorf("order %v accepted", o)
		} else {
			t.Logf("order %v: %v", o, err)
		}
	}
}
