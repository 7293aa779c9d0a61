package weak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/verdict"
)

var weakLevels = []history.Level{history.RC, history.RA, history.CC}

// uniqueGenOptions are oracle.DefaultGenOptions with values drawn from a
// large range and no writes of the initial value, so that reads rarely
// have several candidate writers.
func uniqueGenOptions() oracle.GenOptions {
	o := oracle.DefaultGenOptions()
	o.Values = 1 << 20
	o.PZero = 0
	return o
}

// smallGenOptions also makes the smallest shapes: one session, one
// transaction, one key.
func smallGenOptions() oracle.GenOptions {
	o := uniqueGenOptions()
	o.MinSessions, o.MinTxns, o.MinOps, o.MinKeys = 1, 1, 1, 1
	o.Keys = 4
	o.MaxOps = 6
	return o
}

// TestAgreesWithOracle compares Check with the brute-force oracle on random
// small histories at RC, RA and CC. Undecided verdicts (reads that could
// come from unknown-status transactions no read needs) are counted and
// skipped; choose_test.go covers duplicate values in depth.
func TestAgreesWithOracle(t *testing.T) {
	n := 12000
	if testing.Short() {
		n = 2000
	}
	type source struct {
		name string
		opt  oracle.GenOptions
		n    int
	}
	sources := []source{
		{"unique", uniqueGenOptions(), n},
		{"small", smallGenOptions(), n / 4},
		{"default", oracle.DefaultGenOptions(), n / 4},
	}
	for _, level := range weakLevels {
		counts := map[string]int{}
		for si, src := range sources {
			rng := rand.New(rand.NewPCG(uint64(level), uint64(si)+1))
			for i := range src.n {
				h := oracle.Generate(rng, src.opt)
				res, want := checkAndOracle(t, h, level)
				if res.Verdict == verdict.Unknown {
					counts["undecided"]++
					if res.Duplicates == nil || res.Duplicates.Reads == 0 {
						t.Fatalf("%s %s #%d: undecided without duplicates", level, src.name, i)
					}
					continue
				}
				got := res.Verdict == verdict.Satisfied
				if got != want {
					t.Fatalf("%s %s #%d: got %s, oracle says satisfied=%v\n%s\nfindings %v\nviolations %s",
						level, src.name, i, res.Verdict, want, oracle.Format(h), res.Findings, describeAll(h, res))
				}
				checkResult(t, h, res)
				counts[fmt.Sprintf("%v", res.Verdict)]++
				if len(res.Included) > 0 {
					counts["with-unknown-taken"]++
				}
				if res.Duplicates != nil {
					counts["violated-despite-duplicates"]++
				}
				if !got {
					switch {
					case len(res.Findings) > 0:
						counts["violated:finding"]++
					default:
						counts["violated:"+res.Violations[0].Kind.String()]++
					}
				}
			}
		}
		decided := counts["satisfied"] + counts["violated"]
		t.Logf("%s: %d decided, verdicts %v", level, decided, counts)
		if decided < 10000 && !testing.Short() {
			t.Errorf("%s: only %d histories decided", level, decided)
		}
	}
}

func describeAll(h *history.History, res *Result) string {
	s := ""
	for _, v := range res.Violations {
		s += "\n  " + v.Kind.String() + ": " + v.Describe(h)
		for _, e := range v.Cycle {
			s += "\n    " + e.Rel.String() + ": " + e.Reason(h)
		}
	}
	return s
}

// checkResult checks the shape of every reported cycle: consecutive edges
// meet, the last closes it, so and wr edges are real, and the kind matches
// the premises.
func checkResult(t *testing.T, h *history.History, res *Result) {
	t.Helper()
	for _, v := range res.Violations {
		if len(v.Cycle) < 2 {
			t.Fatalf("cycle of %d edges", len(v.Cycle))
		}
		for i, e := range v.Cycle {
			next := v.Cycle[(i+1)%len(v.Cycle)]
			if e.To != next.From {
				t.Fatalf("cycle does not close at edge %d: %+v then %+v", i, e, next)
			}
			switch e.Rel {
			case history.SO:
				if e.From != history.InitTxn && (h.Txns[e.From].Session != h.Txns[e.To].Session || h.Txns[e.From].Index >= h.Txns[e.To].Index) {
					t.Fatalf("bad so edge %+v", e)
				}
			case history.WR:
				if finalWrite(h, e.From, e.Key) < 0 {
					t.Fatalf("wr edge from a non-writer %+v", e)
				}
			case history.CO:
				if finalWrite(h, e.From, e.Key) < 0 || finalWrite(h, e.To, e.Key) < 0 {
					t.Fatalf("co edge between non-writers of its key %+v", e)
				}
			}
			_ = e.Reason(h)
		}
		if classify(v.Cycle) != v.Kind {
			t.Fatalf("kind %v, premises say %v", v.Kind, classify(v.Cycle))
		}
		_ = v.Describe(h)
	}
}

// checkAndOracle returns Check's result on h at level and the brute-force
// oracle's verdict, failing t on an error of either.
func checkAndOracle(t *testing.T, h *history.History, level history.Level) (*Result, bool) {
	t.Helper()
	res, err := Check(context.Background(), h, level, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := oracle.Check(h, level)
	if err != nil {
		t.Fatal(err)
	}
	return res, want
}
