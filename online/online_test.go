package online

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/execoracle"
)

// oracleLevels are the levels the differential tests compare, by name in
// both vocabularies.
var oracleLevels = []string{"rc", "ra", "cc", "pc", "psi", "si", "ser"}

// interleave returns h's transactions in a random arrival order that
// keeps each session's order.
func interleave(rng *rand.Rand, h *execoracle.History) *execoracle.History {
	queues := map[int][]execoracle.Txn{}
	var sessions []int
	for _, t := range h.Txns {
		if _, ok := queues[t.Session]; !ok {
			sessions = append(sessions, t.Session)
		}
		queues[t.Session] = append(queues[t.Session], t)
	}
	out := &execoracle.History{}
	for len(out.Txns) < len(h.Txns) {
		s := sessions[rng.Intn(len(sessions))]
		if q := queues[s]; len(q) > 0 {
			out.Txns = append(out.Txns, q[0])
			queues[s] = q[1:]
		}
	}
	return out
}

// feed writes data to c in random pieces, cutting lines anywhere, and
// calls each after every whole transaction line.
func feed(rng *rand.Rand, c *Checker, data []byte, each func(txns int)) {
	seen := 0
	for len(data) > 0 {
		n := 1 + rng.Intn(40)
		if n > len(data) {
			n = len(data)
		}
		c.Write(data[:n])
		data = data[n:]
		if t := c.Txns(); t > seen {
			seen = t
			each(t)
		}
	}
}

func levelsOf(t *testing.T, names []string) []history.Level {
	var out []history.Level
	for _, n := range names {
		l, ok := history.ParseLevel(n)
		if !ok {
			t.Fatalf("level %q", n)
		}
		out = append(out, l)
	}
	return out
}

// TestPrefixVerdictsMatchOracle: on random histories streamed in a random
// interleaving, the running verdict of every prefix is the oracle's
// verdict of that prefix, the final one the oracle's of the whole, and a
// violation reported certain is a violation of every later prefix (the
// oracle's), with values unique as the certainty needs.
func TestPrefixVerdictsMatchOracle(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 150
	}
	ctx := context.Background()
	early, prefixes := 0, 0
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(seed)))
		var gopt execoracle.GenOptions
		names := oracleLevels
		switch seed % 4 {
		case 0, 2:
			gopt = execoracle.RegisterGenOptions(execoracle.SER)
		case 1:
			gopt = execoracle.DefaultGenOptions(execoracle.SI)
		case 3: // timed: strict-ser too
			gopt = execoracle.DefaultGenOptions(execoracle.StrictSER)
			names = append(names[:len(names):len(names)], "strict-ser")
		}
		levels := levelsOf(t, names)
		unique := seed%3 != 0
		if unique {
			gopt.PDup = 0
		}
		gopt.MinTxns, gopt.MaxTxns = 3, 7
		gen := interleave(rng, execoracle.Generate(rng, gopt))
		data := gen.JSONL()
		want := make([][]bool, len(gen.Txns)+1) // [prefix][level]
		for i := 1; i <= len(gen.Txns); i++ {
			p := &execoracle.History{Txns: gen.Txns[:i]}
			for _, name := range names {
				l, _ := execoracle.ParseLevel(name)
				ok, err := execoracle.Satisfies(p, l, execoracle.SER)
				if err != nil {
					t.Fatalf("seed %d: oracle: %v", seed, err)
				}
				want[i] = append(want[i], ok)
			}
		}
		c, err := New(Options{Name: "stream", Levels: levels, Unique: unique})
		if err != nil {
			t.Fatal(err)
		}
		certainAt := make([]int, len(levels))
		compare := func(st Status, i int) {
			for j, lv := range st.Levels {
				res := lv.Result
				if res.Verdict == check.Unknown && strings.HasPrefix(res.Reason, "not checkable yet") {
					continue
				}
				prefixes++
				if got := res.Verdict == check.Satisfied; got != want[i][j] {
					t.Errorf("seed %d, prefix %d, %s: online %v, oracle satisfied=%v\n%s", seed, i, lv.Level, res.Verdict, want[i][j], data)
				}
				if lv.Certain != nil && certainAt[j] == 0 {
					certainAt[j] = i
				}
			}
		}
		feed(rng, c, data, func(i int) {
			st, err := c.Check(ctx)
			if err != nil {
				t.Fatalf("seed %d, prefix %d: %v", seed, i, err)
			}
			compare(st, i)
		})
		st, err := c.Finish(ctx)
		if err != nil {
			t.Fatalf("seed %d: finish: %v", seed, err)
		}
		if !st.Final {
			t.Fatalf("seed %d: not final after Finish", seed)
		}
		compare(st, len(gen.Txns))
		for j, at := range certainAt {
			if at == 0 {
				continue
			}
			if at < len(gen.Txns) {
				early++
			}
			for i := at; i <= len(gen.Txns); i++ {
				if want[i][j] {
					t.Errorf("seed %d, %s: a violation certain at prefix %d, yet prefix %d satisfies it\n%s", seed, levels[j], at, i, data)
					break
				}
			}
			if !unique && at < len(gen.Txns) {
				t.Errorf("seed %d: certain before the end without the promise of unique values", seed)
			}
		}
	}
	if early == 0 {
		t.Errorf("no violation was certain before the end of its stream: the test does not exercise certainty")
	}
	t.Logf("%d prefix verdicts compared; %d violations certain before the end of their stream", prefixes, early)
}

// The closed part of a prefix leaves out a reader whose writer has not
// come and the readers of its writes (not its session successors), and a
// violation among the others is certain at once.
func TestClosedPartCertain(t *testing.T) {
	lines := []string{
		`{"hyperiso":1,"init":"zero"}`,
		`{"session":1,"ops":[["r",1,0],["w",2,10]]}`,
		`{"session":2,"ops":[["r",2,0],["w",1,20]]}`,  // with 1: write skew at SER, not at SI
		`{"session":3,"ops":[["r",5,50]]}`,            // its writer has not come
		`{"session":3,"ops":[["w",6,60]]}`,            // after it in its session: kept
		`{"session":4,"ops":[["r",7,70],["w",8,80]]}`, // its writer has not come
		`{"session":5,"ops":[["r",8,80]]}`,            // reads from the one before
	}
	c, _ := New(Options{Name: "s", Levels: levelsOf(t, []string{"ser", "si"}), Unique: true})
	c.Write([]byte(strings.Join(lines, "\n") + "\n"))
	st, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Open != 3 {
		t.Errorf("open = %d, want 3", st.Open)
	}
	ser, si := st.Levels[0], st.Levels[1]
	if ser.Result.Verdict != check.Violated || ser.Certain == nil {
		t.Errorf("ser: %v, certain %v; want a certain violation", ser.Result.Verdict, ser.Certain != nil)
	}
	if si.Result.Verdict != check.Violated || si.Certain != nil {
		t.Errorf("si: %v, certain %v; want a violation (the thin-air read) not yet certain", si.Result.Verdict, si.Certain != nil)
	}
	// The writer comes: the thin-air read is explained.
	c.Write([]byte(`{"session":6,"ops":[["w",5,50],["w",7,70]]}` + "\n"))
	if st, err = c.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := st.Levels[1].Result.Verdict; v != check.Satisfied || st.Open != 0 {
		t.Errorf("si after the writer came: %v, open %d; want satisfied, 0", v, st.Open)
	}
	// A second writer of a value breaks the promise.
	c.Write([]byte(`{"session":6,"ops":[["w",5,50]]}` + "\n"))
	if st, err = c.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st.Broken == "" {
		t.Errorf("a value written twice did not break the promise")
	}
}

// Ids of the closed part are those of the whole stream, where a line
// gives none.
func TestClosedLinesKeepIDs(t *testing.T) {
	src := `{"hyperiso":1,"init":"zero"}
{"session":3,"ops":[["r",5,50]]}
{"session":1,"ops":[["r",1,0],["w",2,10]]}
{"session":2,"id":77,"ops":[["r",2,0],["w",1,20]]}
`
	c, _ := New(Options{Name: "s", Levels: levelsOf(t, []string{"ser"}), Unique: true})
	c.Write([]byte(src))
	st, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cert := st.Levels[0].Certain
	if cert == nil {
		t.Fatalf("no certain violation: %+v", st.Levels[0].Result)
	}
	ids := map[int64]bool{}
	for _, a := range cert.Anomalies {
		for _, tx := range a.Txns {
			ids[tx.ID] = true
		}
	}
	if !ids[2] || !ids[77] || ids[1] {
		t.Errorf("the explanation names %v; want transactions 2 (its place in the stream) and 77", ids)
	}
}
