package execoracle

import (
	"math/rand"
	"testing"
	"time"
)

var genLevels = []Level{RC, RA, CC, PC, PSI, SI, SER, StrictSER, Mixed}

func decideGen(t *testing.T, h *History, l Level) bool {
	t.Helper()
	ok, err := Satisfies(h, l, SER)
	if err != nil {
		t.Fatalf("%v: %v\n%s", l, err, h.JSONL())
	}
	return ok
}

// An unperturbed simulation is an execution, so the oracle must find one.
func TestGeneratedExecutionsSatisfy(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, l := range genLevels {
		for range 400 {
			o := DefaultGenOptions(l)
			o.PPerturb = 0
			h := Generate(rng, o)
			e, err := Decide(h, l, SER)
			if err != nil || e == nil {
				t.Fatalf("simulated at %v, oracle says %v, %v\n%s", l, e != nil, err, h.JSONL())
			}
			if err := Replay(h, l, SER, e.Order); err != nil {
				t.Fatalf("%v: own witness fails replay: %v\n%s", l, err, h.JSONL())
			}
		}
	}
}

// Stronger levels imply weaker ones on every history; and the generator
// gives a useful share of violations.
func TestHierarchyAndBalance(t *testing.T) {
	weaker := map[Level][]Level{StrictSER: {SER}, SER: {SI}, SI: {PSI, PC}, PSI: {CC}, PC: {RA}, CC: {RA}, RA: {RC}}
	rng := rand.New(rand.NewSource(2))
	for _, l := range genLevels[:8] {
		sat := 0
		const n = 300
		for range n {
			h := Generate(rng, DefaultGenOptions(l))
			v := map[Level]bool{}
			for _, m := range allLevels {
				v[m] = decideGen(t, h, m)
			}
			for s, ws := range weaker {
				for _, w := range ws {
					if v[s] && !v[w] {
						t.Fatalf("satisfies %v but not %v\n%s", s, w, h.JSONL())
					}
				}
			}
			if v[l] {
				sat++
			}
		}
		t.Logf("%v: %d of %d satisfied", l, sat, n)
		if sat < n/5 || sat > n*9/10 {
			t.Errorf("%v: %d of %d satisfied: the generator is lopsided", l, sat, n)
		}
	}
}

func TestSpeed(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, l := range []Level{RC, CC, PSI, SER} {
		o := DefaultGenOptions(l)
		o.MinTxns, o.MaxTxns = 6, 6
		const n = 200
		start := time.Now()
		var worst time.Duration
		for range n {
			h := Generate(rng, o)
			s := time.Now()
			decideGen(t, h, l)
			worst = max(worst, time.Since(s))
		}
		avg := time.Since(start) / n
		t.Logf("%v: 6 transactions, %v on average, worst %v", l, avg, worst)
		if avg > 10*time.Millisecond {
			t.Errorf("%v: %v on average", l, avg)
		}
	}
}
