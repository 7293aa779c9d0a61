package check_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/execoracle"
)

// TestListOracle compares the checker with execoracle, which decides tiny
// list-append (and register) histories by enumerating abstract executions,
// on random histories at every level: the verdicts must agree, none may be
// unknown, and a satisfied verdict's witness order must replay. The
// histories go through JSONL and formats, as a user's do. HYPERISO_LIST_N
// sets how many per level.
func TestListOracle(t *testing.T) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("HYPERISO_LIST_N")); err == nil && v > 0 {
		n = v
	}
	levels := []execoracle.Level{execoracle.SER, execoracle.SI, execoracle.PC, execoracle.PSI,
		execoracle.CC, execoracle.RA, execoracle.RC, execoracle.StrictSER, execoracle.Mixed}
	// The second profile repeats values and leaves outcomes unknown more
	// often, where list semantics are hardest.
	profiles := []struct {
		name string
		tune func(*execoracle.GenOptions)
	}{
		{"plain", func(*execoracle.GenOptions) {}},
		{"dups", func(o *execoracle.GenOptions) { o.PDup, o.PUnknown, o.MaxOps = 0.4, 0.25, 5 }},
		// Transactions that append to and read several lists, where a
		// read shows part of what a transaction did (fractured reads).
		{"multikey", func(o *execoracle.GenOptions) {
			o.ListKeys, o.RegisterKeys, o.MinTxns, o.MaxOps, o.PPerturb = 2, 0, 3, 6, 0.7
		}},
	}
	for pi, prof := range profiles {
		for li, l := range levels {
			t.Run(prof.name+"/"+l.String(), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(1000 + 100*pi + li)))
				var fails []listFailure
				counts := map[string]int{}
				for len(fails) < 1000 && counts["checked"] < n {
					o := execoracle.DefaultGenOptions(l)
					prof.tune(&o)
					h := execoracle.Generate(rng, o)
					f, skip := listCompare(t, h, l)
					if skip != "" {
						counts["refused: "+refusalShape.ReplaceAllString(skip, "T")]++
						continue
					}
					counts["checked"]++
					if sat, _ := execoracle.Satisfies(h, l, execoracle.SER); sat {
						counts["oracle satisfied"]++
					}
					if f != nil {
						counts[f.kind]++
						fails = append(fails, *f)
					}
				}
				t.Logf("%s/%v: %v", prof.name, l, counts)
				reportFailures(t, prof.name, l, fails, counts["checked"])
			})
		}
	}
}

// refusalShape matches the transaction names in a refusal, left out so
// that refusals of one kind are counted together.
var refusalShape = regexp.MustCompile(`T\d+\(s\d+#\d+\)(?: at \w+)?|\d+ transactions`)

// reportFailures fails t with the smallest disagreement of each kind,
// shrunk while it keeps its kind.
func reportFailures(t *testing.T, prof string, l execoracle.Level, fails []listFailure, checked int) {
	t.Helper()
	slices.SortFunc(fails, func(a, b listFailure) int { return a.size - b.size })
	shown := map[string]bool{}
	for _, f := range fails {
		if shown[f.kind] {
			continue
		}
		shown[f.kind] = true
		small := shrinkList(t, f.h, l)
		g, _ := listCompare(t, small, l)
		if g == nil || g.kind != f.kind {
			g, small = &f, f.h
		}
		t.Errorf("%s/%v: %d of %d histories disagree; smallest of kind %q, shrunk: %s\n%s", prof, l, len(fails), checked, f.kind, g.msg, small.JSONL())
	}
}

type listFailure struct {
	h    *execoracle.History
	kind string
	msg  string
	size int
}

// listCompare checks h at l both ways; skip names why h was not compared.
func listCompare(t *testing.T, h *execoracle.History, l execoracle.Level) (f *listFailure, skip string) {
	t.Helper()
	text := h.JSONL()
	hh, err := formats.ReadStream(bytes.NewReader(text), "gen.jsonl", formats.Options{})
	if err != nil {
		t.Fatalf("reading a generated history: %v\n%s", err, text)
	}
	level, ok := history.ParseLevel(l.String())
	if !ok {
		t.Fatalf("level %v", l)
	}
	exec, err := execoracle.Decide(h, l, execoracle.SER)
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, text)
	}
	res, err := check.Check(context.Background(), hh, level, check.Options{DefaultLevel: history.SER})
	if errors.Is(err, check.ErrInput) {
		return nil, err.Error()
	}
	size := 0
	for _, tx := range h.Txns {
		size += 1 + len(tx.Ops)
	}
	fail := func(kind, format string, a ...any) *listFailure {
		return &listFailure{h: h, kind: kind, size: size, msg: kind + ": " + fmt.Sprintf(format, a...)}
	}
	if err != nil {
		return fail("checker error", "%v", err), ""
	}
	want := check.Violated
	if exec != nil {
		want = check.Satisfied
	}
	switch {
	case res.Verdict == check.Unknown:
		return fail("unknown", "checker unknown (%s), oracle %s", res.Reason, want), ""
	case res.Verdict != want:
		why := ""
		if exec != nil {
			why = fmt.Sprintf("; oracle's AR %v (indices, id-1)", exec.Order)
		} else if len(res.Witness) > 0 {
			why = fmt.Sprintf("; checker's witness: %v", replayOrder(res))
		}
		return fail("checker "+res.Verdict.String()+", oracle "+want.String(), "checker %s, oracle %s%s", res.Verdict, want, why), ""
	case res.Verdict == check.Satisfied && len(res.Witness) > 0:
		if err := execoracle.Replay(h, l, execoracle.SER, replayOrder(res)); err != nil {
			return fail("witness fails replay", "witness %v: %v", replayOrder(res), err), ""
		}
	}
	return nil, ""
}

// replayOrder maps a witness to execoracle indices (JSONL id = index+1),
// leaving out T⊥.
func replayOrder(res *check.Result) []int {
	var order []int
	for _, w := range res.Witness {
		if w.Index >= 0 && w.ID > 0 {
			order = append(order, int(w.ID-1))
		}
	}
	return order
}

// shrinkList removes transactions and operations and shortens lists while
// the checker and the oracle still disagree in the same way.
func shrinkList(t *testing.T, h *execoracle.History, l execoracle.Level) *execoracle.History {
	first, _ := listCompare(t, h, l)
	if first == nil {
		return h
	}
	bad := func(c *execoracle.History) bool {
		if len(c.Txns) == 0 {
			return false
		}
		if _, err := execoracle.Decide(c, l, execoracle.SER); err != nil {
			return false
		}
		f, skip := listCompare(t, c, l)
		return skip == "" && f != nil && f.kind == first.kind
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(h.Txns); i++ {
			c := h.Clone()
			c.Txns = slices.Delete(c.Txns, i, i+1)
			if bad(c) {
				h, changed = c, true
				i--
			}
		}
		for i := range h.Txns {
			for j := 0; j < len(h.Txns[i].Ops); j++ {
				c := h.Clone()
				c.Txns[i].Ops = slices.Delete(c.Txns[i].Ops, j, j+1)
				if bad(c) {
					h, changed = c, true
					j--
					continue
				}
				if op := h.Txns[i].Ops[j]; op.Kind == execoracle.ReadList {
					for k := range op.List {
						c := h.Clone()
						c.Txns[i].Ops[j].List = slices.Delete(c.Txns[i].Ops[j].List, k, k+1)
						if bad(c) {
							h, changed = c, true
							break
						}
					}
				}
			}
			if h.Txns[i].Status != execoracle.Committed || h.Txns[i].Level != execoracle.LevelNone {
				c := h.Clone()
				c.Txns[i].Status, c.Txns[i].Level = execoracle.Committed, execoracle.LevelNone
				if c.Txns[i].Timed && h.Txns[i].Status == execoracle.Unknown {
					c.Txns[i].End = c.Txns[i].Start + 1
				}
				if bad(c) {
					h, changed = c, true
				}
			}
		}
	}
	return h
}
