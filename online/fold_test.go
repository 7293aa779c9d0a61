package online

import (
	"context"
	"errors"
	"maps"
	"math/rand"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/internal/execoracle"
)

// fenceKey is the fence key of the generated fenced histories.
const fenceKey = 9

// fencedGen builds a small history with fence rounds, independently of the
// checker: sessions run segments of transactions, serially but each
// reading, now and then, from an older snapshot (so that some histories
// violate SER or SI and satisfy weaker levels); between segments every
// session runs a fence (a read-modify-write of the fence key), and then
// a fence read (a transaction that reads it, with other operations or
// not). Values are unique. Then a read or two may be changed.
type fencedGen struct {
	rng    *rand.Rand
	h      execoracle.History
	store  map[int64]int64
	states []map[int64]int64
	next   int64
	phase  []int // per transaction: its block of arrival (arrive)
	cur    int
}

func (g *fencedGen) value() int64 { g.next++; return g.next }

// txn runs one transaction of session s: ops random operations on keys
// 1..3, before it pre (fence operations, run on the current state).
func (g *fencedGen) txn(s int, nops int, fence, fenceRead bool) {
	snap := g.store
	if g.rng.Intn(4) == 0 && len(g.states) > 0 {
		snap = g.states[g.rng.Intn(len(g.states))]
	}
	own := map[int64]int64{}
	var ops []execoracle.Op
	if fenceRead {
		ops = append(ops, execoracle.R(fenceKey, g.store[fenceKey]))
	}
	for range nops {
		k := int64(1 + g.rng.Intn(3))
		if g.rng.Intn(2) == 0 {
			v, ok := own[k]
			if !ok {
				v = snap[k]
			}
			ops = append(ops, execoracle.R(k, v))
		} else {
			v := g.value()
			own[k] = v
			ops = append(ops, execoracle.W(k, v))
		}
	}
	st := execoracle.Committed
	if fence {
		// Now and then a fence reads an older fence value (two fences
		// then read one value: the chain forks), which weak levels allow.
		read := g.store[fenceKey]
		if g.rng.Intn(6) == 0 && len(g.states) > 0 {
			read = g.states[g.rng.Intn(len(g.states))][fenceKey]
		}
		v := g.value()
		ops = append(ops, execoracle.R(fenceKey, read), execoracle.W(fenceKey, v))
		own[fenceKey] = v
	} else if !fenceRead {
		switch r := g.rng.Intn(20); {
		case r < 2:
			st = execoracle.Aborted
		case r < 3:
			st = execoracle.Unknown
		}
	}
	if st == execoracle.Committed || st == execoracle.Unknown && g.rng.Intn(2) == 0 {
		g.store = maps.Clone(g.store)
		maps.Copy(g.store, own)
		g.states = append(g.states, g.store)
	}
	g.h.Txns = append(g.h.Txns, execoracle.Txn{Session: s, Status: st, Ops: ops})
	g.phase = append(g.phase, g.cur)
}

func genFenced(rng *rand.Rand) *fencedGen {
	g := &fencedGen{rng: rng, store: map[int64]int64{}}
	nS := 2
	rounds := rng.Intn(4)
	if rng.Intn(4) == 0 {
		nS, rounds = 3, rng.Intn(2)
	}
	for r := 0; r <= rounds; r++ {
		var order []int
		for s := range nS {
			for range rng.Intn(3) {
				order = append(order, s)
			}
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, s := range order {
			g.txn(s, 1+rng.Intn(3), false, false)
		}
		if r == rounds {
			break
		}
		for _, s := range rng.Perm(nS) {
			g.txn(s, rng.Intn(2), true, false)
		}
		g.cur++
		for _, s := range rng.Perm(nS) {
			g.txn(s, rng.Intn(2), false, true)
		}
	}
	if len(g.h.Txns) > execoracle.MaxTxns {
		g.h.Txns = g.h.Txns[:execoracle.MaxTxns]
		g.phase = g.phase[:execoracle.MaxTxns]
	}
	if rng.Intn(3) == 0 {
		for range 1 + rng.Intn(2) {
			perturb(rng, &g.h)
		}
	}
	return g
}

// arrive is an arrival order of g's transactions as collect's stream
// would give it: each session's in order, and the fences of a round all
// before any fence read of that round (the fence reads wait for every
// session's fence), so that every session has shown up before the first
// cut. The blocks between are interleaved at random.
func (g *fencedGen) arrive(rng *rand.Rand) *execoracle.History {
	out := &execoracle.History{}
	for b := 0; b <= g.cur; b++ {
		block := &execoracle.History{}
		for i, t := range g.h.Txns {
			if g.phase[i] == b {
				block.Txns = append(block.Txns, t)
			}
		}
		out.Txns = append(out.Txns, interleave(rng, block).Txns...)
	}
	return out
}

// perturb changes one read to another value of its key (one written, or
// 0), which often makes a violation.
func perturb(rng *rand.Rand, h *execoracle.History) {
	type at struct{ t, o int }
	var reads []at
	vals := map[int64][]int64{}
	for t, tx := range h.Txns {
		for o, op := range tx.Ops {
			switch op.Kind {
			case execoracle.Read:
				reads = append(reads, at{t, o})
			case execoracle.Write:
				vals[op.Key] = append(vals[op.Key], op.Value)
			}
		}
	}
	if len(reads) == 0 {
		return
	}
	r := reads[rng.Intn(len(reads))]
	op := &h.Txns[r.t].Ops[r.o]
	choices := append([]int64{0}, vals[op.Key]...)
	op.Value = choices[rng.Intn(len(choices))]
}

// TestFoldedVerdictsMatchOracle: fenced histories streamed in a random
// interleaving; at every prefix the running verdict of the folded window
// is the oracle's verdict of the whole prefix, a certain violation stays
// one, and folding happens (the test would not fail otherwise).
func TestFoldedVerdictsMatchOracle(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	all := []string{"cc", "pc", "psi", "si", "ser"}
	ctx := context.Background()
	foldedStreams, afterFold, compared, broken := 0, 0, 0, 0
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(seed)))
		// A third of the streams are checked at CC and PC only, which
		// allow a forked fence chain (no cut) where the others do not.
		names := all
		if seed%3 == 1 {
			names = all[:2]
		}
		levels := levelsOf(t, names)
		fg := genFenced(rng)
		// A fifth of the streams arrive in any order that keeps sessions:
		// a session may show up after a fold, which makes the verdicts
		// not yet certain unknown (FoldBroken).
		anyOrder := seed%5 == 0
		gen := fg.arrive(rng)
		if anyOrder {
			gen = interleave(rng, &fg.h)
		}
		if len(gen.Txns) == 0 {
			continue
		}
		data := gen.JSONL()
		want := make([][]bool, len(gen.Txns)+1)
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
		c, err := New(Options{Name: "stream", Levels: levels, Unique: true, FenceKey: fenceKey, FenceKeySet: true})
		if err != nil {
			t.Fatal(err)
		}
		certainAt := make([]int, len(levels))
		folded := false
		compare := func(st Status, i int) {
			if st.FoldBroken != "" && !anyOrder {
				t.Fatalf("seed %d: fold broken: %s\n%s", seed, st.FoldBroken, data)
			}
			for j, lv := range st.Levels {
				res := lv.Result
				if res.Verdict == check.Unknown && strings.HasPrefix(res.Reason, "not checkable yet") {
					continue
				}
				if res.Verdict == check.Unknown && st.FoldBroken != "" {
					broken++
					continue
				}
				compared++
				if folded {
					afterFold++
				}
				if got := res.Verdict == check.Satisfied; got != want[i][j] {
					t.Errorf("seed %d, prefix %d, %s (folded %d): online %v, oracle satisfied=%v\n%s", seed, i, lv.Level, st.Folded, res.Verdict, want[i][j], data)
				}
				if lv.Certain != nil && certainAt[j] == 0 {
					certainAt[j] = i
				}
			}
			if st.Folded > 0 {
				folded = true
			}
		}
		feed(rng, c, data, func(i int) {
			st, err := c.Check(ctx)
			if err != nil {
				t.Fatalf("seed %d, prefix %d: %v\n%s", seed, i, err, data)
			}
			compare(st, i)
		})
		st, err := c.Finish(ctx)
		if errors.Is(err, check.ErrInput) {
			continue // nothing committed: not checkable, offline neither
		}
		if err != nil {
			t.Fatalf("seed %d: finish: %v", seed, err)
		}
		compare(st, len(gen.Txns))
		if folded {
			foldedStreams++
		}
		for j, at := range certainAt {
			for i := at; at > 0 && i <= len(gen.Txns); i++ {
				if want[i][j] {
					t.Errorf("seed %d, %s: a violation certain at prefix %d, yet prefix %d satisfies it\n%s", seed, levels[j], at, i, data)
					break
				}
			}
		}
	}
	if foldedStreams < n/10 {
		t.Errorf("only %d of %d streams were folded: the test does not exercise folding", foldedStreams, n)
	}
	t.Logf("%d streams, %d folded; %d prefix verdicts compared, %d after a fold; %d unknown after a session came too late", n, foldedStreams, compared, afterFold, broken)
}

// A forked fence chain (two fences read one value) makes no cut: session
// B's read of key 1's initial value after its fence is not preceded by
// A's write, which a fold at that cut would assume. CC allows the fork.
func TestForkedFenceChainDoesNotFold(t *testing.T) {
	r, w := execoracle.R, execoracle.W
	h := &execoracle.History{Txns: []execoracle.Txn{
		{Session: 1, Ops: []execoracle.Op{w(1, 1)}},
		{Session: 1, Ops: []execoracle.Op{r(9, 0), w(9, 10)}},
		{Session: 2, Ops: []execoracle.Op{r(9, 0), w(9, 20)}},
		{Session: 1, Ops: []execoracle.Op{r(9, 20)}},
		{Session: 2, Ops: []execoracle.Op{r(9, 20)}},
		{Session: 2, Ops: []execoracle.Op{r(1, 0)}},
		{Session: 1, Ops: []execoracle.Op{r(9, 20), w(9, 30)}},
		{Session: 2, Ops: []execoracle.Op{r(9, 30), w(9, 40)}},
		{Session: 1, Ops: []execoracle.Op{r(9, 40)}},
		{Session: 2, Ops: []execoracle.Op{r(9, 40)}},
	}}
	ok, err := execoracle.Satisfies(h, execoracle.CC, execoracle.SER)
	if err != nil || !ok {
		t.Fatalf("the oracle: satisfied %v, %v; want satisfied", ok, err)
	}
	c, _ := New(Options{Name: "s", Levels: levelsOf(t, []string{"cc"}), Unique: true, FenceKey: fenceKey, FenceKeySet: true})
	c.Write(h.JSONL())
	st, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Folded != 0 || st.Levels[0].Result.Verdict != check.Satisfied {
		t.Errorf("folded %d, %v; want nothing folded, satisfied", st.Folded, st.Levels[0].Result.Verdict)
	}
}

// After a fold, errors name lines by their number in the whole stream.
func TestFoldedErrorsNameStreamLines(t *testing.T) {
	src := `{"hyperiso":1,"init":"zero"}
{"session":1,"ops":[["w",1,1]]}
{"session":1,"ops":[["r",9,0],["w",9,10]]}
{"session":2,"ops":[["r",9,10],["w",9,20]]}
{"session":1,"ops":[["r",9,20]]}
{"session":2,"ops":[["r",9,20],["r",1,1]]}
{"session":1,"ops":[["r",9,20],["w",9,30],["w",1,2]]}
{"session":2,"ops":[["r",9,30],["w",9,40]]}
{"session":1,"ops":[["r",9,40]]}
{"session":2,"ops":[["r",9,40],["r",1,2]]}
`
	c, _ := New(Options{Name: "s", Levels: levelsOf(t, []string{"ser"}), Unique: true, FenceKey: fenceKey, FenceKeySet: true})
	c.Write([]byte(src))
	st, err := c.Check(context.Background())
	if err != nil || st.Folded == 0 {
		t.Fatalf("folded %d, %v (%s); want a fold", st.Folded, err, st.Keeping)
	}
	c.Write([]byte(`{"session":1,"ops":[["x",1,1]]}` + "\n"))
	if _, err = c.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "s:11") {
		t.Errorf("error %v; want one naming s:11", err)
	}
}
