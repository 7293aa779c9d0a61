package oracle

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/history"
)

// tx describes a transaction of a hand-written history: its session, its
// status and its operations, e.g. "rx0 wy1" (keys x, y, z are 0, 1, 2).
type tx struct {
	s   int64
	st  history.Status
	ops string
}

func c(s int64, ops string) tx { return tx{s, history.Committed, ops} }
func a(s int64, ops string) tx { return tx{s, history.Aborted, ops} }
func u(s int64, ops string) tx { return tx{s, history.Unknown, ops} }

// build makes a history whose T⊥ writes 0 to x, y and z; transaction i of
// txs gets TxnID i+1.
func build(t testing.TB, txs ...tx) *history.History {
	t.Helper()
	return buildInit(t, "xyz", txs...)
}

func buildInit(t testing.TB, initKeys string, txs ...tx) *history.History {
	t.Helper()
	b := history.NewBuilder("test", "test")
	b.SetInit(history.InitImplicit, 0)
	for _, k := range initKeys {
		b.InitWrite(int64(k-'x'), 0)
	}
	for i, x := range txs {
		id := b.Begin(b.Session(x.s), int64(i+1), x.st, history.Pos{})
		for _, f := range strings.Fields(x.ops) {
			key := int64(f[1] - 'x')
			val, err := strconv.ParseInt(f[2:], 10, 64)
			if err != nil || key < 0 || key > 2 {
				t.Fatalf("bad op %q", f)
			}
			switch f[0] {
			case 'r':
				b.Read(id, key, val)
			case 'w':
				b.Write(id, key, val)
			default:
				t.Fatalf("bad op %q", f)
			}
		}
	}
	return b.Finish()
}

// expect checks every level: exactly the levels named in sat hold.
func expect(t *testing.T, h *history.History, sat string) {
	t.Helper()
	want := map[history.Level]bool{}
	for _, f := range strings.Fields(sat) {
		l, ok := history.ParseLevel(f)
		if !ok {
			t.Fatalf("bad level %q", f)
		}
		want[l] = true
	}
	for _, l := range Levels {
		w, err := Find(h, l)
		if err != nil {
			t.Fatalf("%v: %v", l, err)
		}
		if (w != nil) != want[l] {
			t.Errorf("%v: got %v, want %v", l, w != nil, want[l])
		}
		if w != nil && !witnessOK(h, w) {
			t.Errorf("%v: bad witness %+v", l, w)
		}
		if got := bruteCheck(h, l); got != want[l] {
			t.Errorf("%v: brute force says %v, want %v", l, got, want[l])
		}
	}
}

func TestKnownHistories(t *testing.T) {
	cases := []struct {
		name string
		txs  []tx
		sat  string
	}{
		{"lost update", []tx{c(1, "rx0 wx1"), c(2, "rx0 wx2")}, "rc ra cc"},
		{"write skew", []tx{c(1, "rx0 ry0 wx1"), c(2, "rx0 ry0 wy1")}, "rc ra cc si"},
		{"long fork", []tx{c(1, "wx1"), c(2, "wy1"), c(3, "rx1 ry0"), c(4, "rx0 ry1")}, "rc ra cc"},
		{"fractured read", []tx{c(1, "wx1 wy1"), c(2, "ry0 rx1")}, "rc"},
		// Having seen T1, RC may not read a version older than T1's.
		{"fractured read after the newer one", []tx{c(1, "wx1 wy1"), c(2, "rx1 ry0")}, ""},
		{"causality violation", []tx{c(1, "wx1"), c(2, "rx1 wy1"), c(3, "ry1 rx0")}, "rc ra"},
		{"causality violation through session", []tx{c(1, "wx1"), c(1, "wy1"), c(2, "ry1 rx0")}, "rc ra"},
		{"G1c", []tx{c(1, "wx1 ry1"), c(2, "wy1 rx1")}, ""},
		{"thin-air read", []tx{c(1, "rx5")}, ""},
		{"aborted read", []tx{a(1, "wx1"), c(2, "rx1")}, ""},
		{"intermediate read", []tx{c(1, "wx1 wx2"), c(2, "rx1")}, ""},
		{"future read", []tx{c(1, "rx1 wx1")}, ""},
		{"non-repeatable read", []tx{c(1, "wx1"), c(2, "rx0 rx1")}, "rc"},
		{"non-repeatable read around own write", []tx{c(1, "wx1"), c(2, "rx0 wy1 rx1")}, "rc"},
		{"non-monotonic reads", []tx{c(1, "wx1"), c(2, "wx2"), c(3, "rx1 rx2 rx1")}, ""},
		{"monotonic changing reads", []tx{c(1, "wx1"), c(2, "wx2"), c(3, "rx1 rx2")}, "rc"},
		{"not latest own write", []tx{c(1, "wx1 rx0")}, ""},
		{"own writes", []tx{c(1, "rx0 wx1 rx1 wx2 rx2")}, "rc ra cc si ser"},
		{"not read my writes", []tx{c(1, "wx1"), c(1, "rx0")}, "rc"},
		{"duplicate values, one choice works", []tx{c(1, "wx1 wy1"), c(2, "wx1"), c(3, "rx1 ry0")}, "rc ra cc si ser"},
		{"duplicate of the initial value", []tx{c(1, "wx0 wy1"), c(2, "rx0 ry0")}, "rc ra cc si ser"},
		{"unknown must commit", []tx{u(1, "wx1"), c(2, "rx1")}, "rc ra cc si ser"},
		{"aborted instead", []tx{a(1, "wx1"), c(2, "rx1")}, ""},
		{"unknown would break SER", []tx{u(1, "rx0 wx1"), c(2, "rx0 wx2"), c(3, "rx2")}, "rc ra cc si ser"},
		{"committed does break SER", []tx{c(1, "rx0 wx1"), c(2, "rx0 wx2"), c(3, "rx2")}, "rc ra cc"},
		{"unknown needed and harmful", []tx{u(1, "wx1 wy1"), c(2, "ry0 rx1")}, "rc"},
		{"aborted transactions are not checked", []tx{a(1, "rx7 wy1 ry0")}, "rc ra cc si ser"},
		{"serial chain", []tx{c(1, "rx0 wx1"), c(2, "rx1 wx2"), c(1, "rx2 wy1")}, "rc ra cc si ser"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expect(t, build(t, tc.txs...), tc.sat)
		})
	}
}

func TestWitnessDetails(t *testing.T) {
	// Only the second writer of x=1 works for RA.
	h := build(t, c(1, "wx1 wy1"), c(2, "wx1"), c(3, "rx1 ry0"))
	w, err := Find(h, history.RA)
	if err != nil || w == nil {
		t.Fatalf("RA: %v %v", w, err)
	}
	want := []ReadFrom{{Txn: 3, Op: 0, Writer: 2}, {Txn: 3, Op: 1, Writer: history.InitTxn}}
	if !reflect.DeepEqual(w.ReadsFrom, want) {
		t.Errorf("ReadsFrom = %v, want %v", w.ReadsFrom, want)
	}

	// The unknown transaction must be left out for SER and may be for RC.
	h = build(t, u(1, "rx0 wx1"), c(2, "rx0 wx2"), c(3, "rx2"))
	w, err = Find(h, history.SER)
	if err != nil || w == nil {
		t.Fatalf("SER: %v %v", w, err)
	}
	if !reflect.DeepEqual(w.Committed, []history.TxnID{0, 2, 3}) {
		t.Errorf("Committed = %v, want [0 2 3]", w.Committed)
	}
	if !reflect.DeepEqual(w.Order, []history.TxnID{0, 2, 3}) {
		t.Errorf("Order = %v, want [0 2 3]", w.Order)
	}

	// The unknown transaction must be included.
	h = build(t, u(1, "wx1"), c(2, "rx1"))
	w, err = Find(h, history.SI)
	if err != nil || w == nil {
		t.Fatalf("SI: %v %v", w, err)
	}
	if !reflect.DeepEqual(w.Committed, []history.TxnID{0, 1, 2}) || !reflect.DeepEqual(w.Snapshot, []int{0, 1, 2}) {
		t.Errorf("witness = %+v", w)
	}
}

func TestNoInitialValue(t *testing.T) {
	// T⊥ writes only x: a read of y=0 has no writer, a read of x=0 has.
	expect(t, buildInit(t, "x", c(1, "ry0")), "")
	expect(t, buildInit(t, "x", c(1, "rx0")), "rc ra cc si ser")
	expect(t, buildInit(t, "", c(1, "wy1"), c(2, "ry1")), "rc ra cc si ser")
}

func TestErrors(t *testing.T) {
	var txs []tx
	for i := range MaxTxns {
		txs = append(txs, c(int64(i%3), "wx1"), a(1, "wy2"))
	}
	h := build(t, txs...)
	if _, err := Check(h, history.SER); err != nil {
		t.Errorf("%d committed and %d aborted transactions: %v", MaxTxns, MaxTxns, err)
	}
	h = build(t, append(txs, u(2, "rx1"))...)
	for _, l := range Levels {
		if _, err := Check(h, l); err == nil {
			t.Errorf("%v: no error for %d transactions", l, MaxTxns+1)
		}
	}
	if _, err := Check(build(t, c(1, "rx0")), history.LevelNone); err == nil {
		t.Errorf("no error for LevelNone")
	}
}

// verdictString renders the verdicts of all levels, e.g. "rc ra -cc -si -ser".
func verdictString(v map[history.Level]bool) string {
	var parts []string
	for _, l := range Levels {
		if v[l] {
			parts = append(parts, l.String())
		} else {
			parts = append(parts, "-"+l.String())
		}
	}
	return strings.Join(parts, " ")
}

// TestHierarchy checks SER ⇒ SI ⇒ CC ⇒ RA ⇒ RC and every witness on random
// histories, and reports the verdicts and the time each level takes.
func TestHierarchy(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	opt := DefaultGenOptions()
	sat := map[history.Level]int{}
	elapsed := map[history.Level]time.Duration{}
	patterns := map[string]int{}
	var slowest time.Duration
	for i := range n {
		h := Generate(rng, opt)
		v := map[history.Level]bool{}
		for _, l := range Levels {
			start := time.Now()
			w, err := Find(h, l)
			d := time.Since(start)
			elapsed[l] += d
			slowest = max(slowest, d)
			if err != nil {
				t.Fatalf("history %d: %v", i, err)
			}
			v[l] = w != nil
			if w != nil {
				sat[l]++
				if !witnessOK(h, w) {
					t.Fatalf("history %d, %v: bad witness %+v\n%s", i, l, w, Format(h))
				}
			}
		}
		for j := 1; j < len(Levels); j++ {
			if v[Levels[j]] && !v[Levels[j-1]] {
				t.Fatalf("history %d satisfies %v but not %v\n%s", i, Levels[j], Levels[j-1], Format(h))
			}
		}
		patterns[verdictString(v)]++
	}
	for _, l := range Levels {
		t.Logf("%-3v satisfied %5d / %d (%4.1f%%), %v per 10,000 histories",
			l, sat[l], n, 100*float64(sat[l])/float64(n), elapsed[l]*time.Duration(10000)/time.Duration(n))
		if sat[l] < n/20 || sat[l] > n-n/20 {
			t.Errorf("%v: %d of %d satisfied: too lopsided", l, sat[l], n)
		}
	}
	for _, p := range []string{
		"-rc -ra -cc -si -ser", "rc -ra -cc -si -ser", "rc ra -cc -si -ser",
		"rc ra cc -si -ser", "rc ra cc si -ser", "rc ra cc si ser",
	} {
		t.Logf("%-22s %5d", p, patterns[p])
		if patterns[p] == 0 {
			t.Errorf("no history with verdicts %s", p)
		}
	}
	t.Logf("slowest single check: %v", slowest)
}

// TestModes reports the verdicts per simulation mode.
func TestModes(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	for m := SimSerial; m < numSimModes; m++ {
		rng := rand.New(rand.NewPCG(3, uint64(m)))
		opt := DefaultGenOptions()
		opt.Mode = m
		sat := map[history.Level]int{}
		for range n {
			h := Generate(rng, opt)
			v, err := CheckAll(h)
			if err != nil {
				t.Fatal(err)
			}
			for l, ok := range v {
				if ok {
					sat[l]++
				}
			}
		}
		var parts []string
		for _, l := range Levels {
			parts = append(parts, fmt.Sprintf("%v %4.1f%%", l, 100*float64(sat[l])/float64(n)))
		}
		t.Logf("%-8v %s", m, strings.Join(parts, "  "))
	}
}

// TestBruteForce compares the pruned searches with the literal enumeration,
// on the smallest shapes and on denser ones.
func TestBruteForce(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	small := DefaultGenOptions()
	small.MinSessions, small.MinTxns, small.MinOps, small.MinKeys = 1, 1, 1, 1
	small.Txns = 5
	small.MaxOps = 3
	small.PUnknown = 0.2
	dense := DefaultGenOptions()
	dense.Txns = 5
	dense.MaxOps = 3
	dense.PUnknown = 0.2
	for ci, opt := range []GenOptions{small, dense} {
		rng := rand.New(rand.NewPCG(5, uint64(ci)))
		for i := range n {
			h := Generate(rng, opt)
			for _, l := range Levels {
				got, err := Check(h, l)
				if err != nil {
					t.Fatal(err)
				}
				if want := bruteCheck(h, l); got != want {
					t.Fatalf("options %d, history %d, %v: oracle %v, brute force %v\n%s", ci, i, l, got, want, Format(h))
				}
			}
		}
	}
}

// TestGraphs compares SER and SI with their dependency-graph
// characterisations.
func TestGraphs(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	rng := rand.New(rand.NewPCG(7, 8))
	opt := DefaultGenOptions()
	opt.PUnknown = 0.15
	compared, skipped := map[history.Level]int{}, 0
	sat := map[history.Level]int{}
	for i := range n {
		h := Generate(rng, opt)
		for _, l := range []history.Level{history.SER, history.SI} {
			want, big := graphCheck(h, l, 20000)
			if big {
				skipped++
				break
			}
			got, err := Check(h, l)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("history %d, %v: oracle %v, dependency graphs %v\n%s", i, l, got, want, Format(h))
			}
			compared[l]++
			if got {
				sat[l]++
			}
		}
	}
	t.Logf("compared SER %d (%d satisfied), SI %d (%d satisfied); %d too big", compared[history.SER], sat[history.SER], compared[history.SI], sat[history.SI], skipped)
}

func TestGenerateDeterministic(t *testing.T) {
	opt := DefaultGenOptions()
	for seed := range uint64(50) {
		h1 := Generate(rand.New(rand.NewPCG(seed, 9)), opt)
		h2 := Generate(rand.New(rand.NewPCG(seed, 9)), opt)
		if !reflect.DeepEqual(h1, h2) {
			t.Fatalf("seed %d: different histories\n%s\n%s", seed, Format(h1), Format(h2))
		}
	}
}

func TestGenerateShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	opt := DefaultGenOptions()
	var aborted, unknown, dupVals, internal int
	for range 2000 {
		h := Generate(rng, opt)
		if len(h.Txns)-1 > opt.Txns || len(h.Sessions) > opt.Sessions || h.NumKeys() > opt.Keys {
			t.Fatalf("too big:\n%s", Format(h))
		}
		p, err := prepare(h)
		if err != nil {
			t.Fatal(err)
		}
		for ti, x := range h.Txns[1:] {
			if len(x.Ops) == 0 || len(x.Ops) > opt.MaxOps {
				t.Fatalf("transaction %d has %d operations", ti+1, len(x.Ops))
			}
			switch x.Status {
			case history.Aborted:
				aborted++
			case history.Unknown:
				unknown++
			}
			reads := 0
			for _, op := range x.Ops {
				if op.Kind.IsRead() {
					reads++
				}
			}
			internal += reads - len(p.ext[ti+1])
		}
		ix := h.Index()
		for k := range h.NumKeys() {
			for v := range h.Values[k] {
				if len(ix.Writers(history.KeyID(k), history.ValueID(v))) > 1 {
					dupVals++
				}
			}
		}
	}
	t.Logf("2000 histories: %d aborted, %d unknown transactions, %d internal reads, %d versions with several writers", aborted, unknown, internal, dupVals)
	if aborted == 0 || unknown == 0 || internal == 0 || dupVals == 0 {
		t.Errorf("the generator lacks variety")
	}
}

func BenchmarkCheck(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	hs := make([]*history.History, 1000)
	for i := range hs {
		hs[i] = Generate(rng, DefaultGenOptions())
	}
	for _, l := range Levels {
		b.Run(l.String(), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := Check(hs[i%len(hs)], l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBruteForceDuplicates compares the pruned search with the literal
// enumeration on histories where reads have several candidate writers
// (DupGenOptions), and checks that the generator makes them.
func TestBruteForceDuplicates(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	opt := DupGenOptions()
	opt.Txns = 5
	opt.MaxOps = 3
	rng := rand.New(rand.NewPCG(21, 22))
	ambiguous, sat := 0, map[history.Level]int{}
	for i := range n {
		h := Generate(rng, opt)
		if severalWriters(h) {
			ambiguous++
		}
		for _, l := range Levels {
			got, err := Check(h, l)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteCheck(h, l); got != want {
				t.Fatalf("history %d, %v: oracle %v, brute force %v\n%s", i, l, got, want, Format(h))
			}
			if got {
				sat[l]++
			}
		}
	}
	t.Logf("%d histories, %d with a read of several candidate writers; satisfied %v", n, ambiguous, sat)
	if ambiguous < n/3 {
		t.Errorf("only %d of %d histories have a read with several candidate writers", ambiguous, n)
	}
	for _, l := range []history.Level{history.RC, history.RA, history.CC} {
		if sat[l] == 0 || sat[l] == n {
			t.Errorf("%v: %d of %d satisfied, want a mix", l, sat[l], n)
		}
	}
}

// severalWriters reports whether some read of a committed transaction
// returns a value that several other committed or unknown transactions
// (T⊥ included) wrote last to its key.
func severalWriters(h *history.History) bool {
	p, err := prepare(h)
	if err != nil {
		panic(err)
	}
	for t, tx := range h.Txns {
		if t == int(history.InitTxn) || tx.Status != history.Committed {
			continue
		}
		for _, r := range p.rcReads[t] {
			n := 0
			for w, wt := range h.Txns {
				if w != t && wt.Status != history.Aborted && p.final[w][r.key] == r.val {
					n++
				}
			}
			if n > 1 {
				return true
			}
		}
	}
	return false
}
