package weak

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/verdict"
)

// TestCoreBruteForce checks the read-from core of violated histories with
// duplicate values against naive saturation (independent of Check): every
// choice of writers for the core's reads, with the other reads that have
// several candidates left out, has a cycle (unsatisfiable), and with any
// one core read left out too some choice has none (minimal).
func TestCoreBruteForce(t *testing.T) {
	n := 3000
	opt := oracle.DupGenOptions()
	opt.PUnknown, opt.PAbort, opt.PNoise = 0, 0, 0
	opt.PDuplicate = 0.5
	verified, certain, sizes := 0, 0, map[int]int{}
	for _, level := range weakLevels {
		rng := rand.New(rand.NewPCG(uint64(level)+901, 5))
		for i := range n {
			h := oracle.Generate(rng, opt)
			res, err := Check(context.Background(), h, level, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != verdict.Violated || len(res.Findings) > 0 {
				continue
			}
			if res.Core == nil {
				// The cycles need no choice: they close with every read
				// with several candidates left out.
				if naiveWith(h, level, dropAmbiguous(h)) {
					t.Fatalf("%s #%d: violated without a core, acyclic without the ambiguous reads\n%s", level, i, oracle.Format(h))
				}
				certain++
				continue
			}
			if ok, err := oracle.Check(h, level); err != nil || ok {
				t.Fatalf("%s #%d: violated, oracle %v %v\n%s", level, i, ok, err, oracle.Format(h))
			}
			verifyCore(t, h, level, res.Core)
			verified++
			sizes[len(res.Core.Reads)]++
		}
	}
	t.Logf("%d cores verified (sizes: counts %v), %d violations needing no choice", verified, sizes, certain)
	if verified < 100 || len(sizes) < 2 {
		t.Errorf("only %d cores verified (sizes %v)", verified, sizes)
	}
}

// candidates are the transactions other than t whose final write of k is
// v (every transaction is committed here).
func candidates(h *history.History, t int, k history.KeyID, v history.ValueID) []history.TxnID {
	var out []history.TxnID
	for u := range h.Txns {
		if u == t {
			continue
		}
		fv, ok := history.ValueID(0), false
		for _, op := range h.Txns[u].Ops {
			if op.Key == k && op.Kind.IsWrite() {
				fv, ok = op.Value, true
			}
		}
		if ok && fv == v {
			out = append(out, history.TxnID(u))
		}
	}
	return out
}

// dropAmbiguous leaves out the read events with several candidates.
func dropAmbiguous(h *history.History) func(t, op int) int {
	return func(t, op int) int {
		o := h.Txns[t].Ops[op]
		if len(candidates(h, t, o.Key, o.Value)) > 1 {
			return -1
		}
		return -2
	}
}

func verifyCore(t *testing.T, h *history.History, level history.Level, core *Core) {
	t.Helper()
	fail := func(msg string, args ...any) {
		t.Helper()
		args = append(args, core.Describe(h, 100), oracle.Format(h))
		t.Fatalf("%s: "+msg+"\ncore: %s\n%s", append([]any{level}, args...)...)
	}
	if !core.Minimal {
		fail("core not minimised")
	}
	if len(core.Reads) == 0 {
		fail("empty core")
	}
	type ref struct{ t, op int }
	idx := map[ref]int{}
	for k, r := range core.Reads {
		op := h.Txns[r.Txn].Ops[r.Op]
		want := candidates(h, int(r.Txn), op.Key, op.Value)
		if op.Key != r.Key || op.Value != r.Value || !slices.Equal(want, r.Writers) || len(want) < 2 {
			fail("core read %+v: candidates %v", r, want)
		}
		idx[ref{int(r.Txn), int(r.Op)}] = k
	}
	if core.Cycle == nil {
		fail("no cycle")
	}
	for _, c := range core.Cycle.Choices {
		if _, ok := idx[ref{int(c.Txn), int(c.Op)}]; !ok {
			fail("the cycle depends on %+v, not in the core", c)
		}
	}
	// acyclicSome reports whether some choice for the core reads other
	// than skip (left out) gives an acyclic co′.
	choice := make([]int, len(core.Reads))
	acyclicSome := func(skip int) bool {
		pick := func(t, op int) int {
			if k, ok := idx[ref{t, op}]; ok {
				if k == skip {
					return -1
				}
				return int(core.Reads[k].Writers[choice[k]])
			}
			return dropAmbiguous(h)(t, op)
		}
		var rec func(k int) bool
		rec = func(k int) bool {
			if k == len(choice) {
				return naiveWith(h, level, pick)
			}
			if k == skip {
				return rec(k + 1)
			}
			for j := range core.Reads[k].Writers {
				choice[k] = j
				if rec(k + 1) {
					return true
				}
			}
			return false
		}
		return rec(0)
	}
	if acyclicSome(-1) {
		fail("a choice of writers for the core's reads is acyclic: %v", choice)
	}
	for k := range core.Reads {
		if !acyclicSome(k) {
			fail("not minimal: without read %d still unsatisfiable", k)
		}
	}
}
