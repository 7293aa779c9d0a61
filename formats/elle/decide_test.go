package elle_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// verdict is the outcome of hintDecide.
type verdict struct {
	ok      bool
	decided bool
	// cycle is a cycle that rules out the last choice tried (nil when a
	// validation or Analyze finding decided).
	cycle []hyperpolygraph.Edge
	// why names the finding that decided, if one did.
	why string
}

// maxBrute bounds the resolutions hintDecide enumerates after pruning.
const maxBrute = 1 << 16

// hintDecide decides level for h as check.Check does for SER and SI, plus
// the two steps this package's hints and real time bring: validation and
// Analyze's findings; then for every choice of the unknown transactions,
// Build → ApplyVersionHints → (AddRealTime) → Prune → an exhaustive search
// of the constraints pruning left. It is the reference the differential
// tests compare check.Check against once check applies the hints.
func hintDecide(t testing.TB, h *history.History, level history.Level, realtime bool) verdict {
	t.Helper()
	if !h.HasLists() {
		return registerDecide(t, h, level, realtime)
	}
	out := verdict{decided: true}
	for x, err := range h.ListExplanations(history.ListOptions{}) {
		require.NoError(t, err)
		found := ""
		for _, f := range x.Findings {
			if f.ForbiddenAt(level) && found == "" {
				found = f.Kind.String()
			}
		}
		if found != "" || x.H == nil {
			if out.why == "" && out.cycle == nil {
				out.why = found
			}
			continue
		}
		v := registerDecide(t, x.H, level, realtime)
		switch {
		case !v.decided:
			return v
		case v.ok:
			return v
		case out.cycle == nil && out.why == "":
			out.cycle, out.why = v.cycle, v.why
		}
	}
	return out
}

// registerDecide is hintDecide for a history without lists (a list
// history's register view).
func registerDecide(t testing.TB, h *history.History, level history.Level, realtime bool) verdict {
	t.Helper()
	for _, f := range h.Validate() {
		if f.Kind.ForbiddenAt(level) {
			return verdict{decided: true, why: f.Kind.String()}
		}
	}
	var unknown []history.TxnID
	for tx := range h.Txns {
		if h.Txns[tx].Status == history.Unknown {
			unknown = append(unknown, history.TxnID(tx))
		}
	}
	if len(unknown) > 10 {
		return verdict{}
	}
	out := verdict{decided: true}
	for mask := 0; mask < 1<<len(unknown); mask++ {
		in := map[history.TxnID]bool{}
		for i, u := range unknown {
			if mask&(1<<i) != 0 {
				in[u] = true
			}
		}
		include := func(tx history.TxnID) bool { return in[tx] }
		bad := false
		for _, f := range h.ValidateTxns(func(tx history.TxnID) bool { return in[tx] }) {
			bad = bad || f.Kind.ForbiddenAt(level)
		}
		if bad {
			continue
		}
		g, viol := hyperpolygraph.Build(h, level, include)
		if viol != nil {
			continue
		}
		if c := g.ApplyVersionHints(h.HintsAt(level)); c != nil {
			out.cycle = c
			continue
		}
		var rt []hyperpolygraph.Edge
		if realtime {
			rt = g.AddRealTime()
		}
		_, _, c, err := prune.Prune(context.Background(), g, prune.Options{})
		require.NoError(t, err)
		if c != nil {
			out.cycle = c.Cycle
			continue
		}
		total := 1
		for range g.WW {
			total *= 2
			if total > maxBrute {
				return verdict{}
			}
		}
		for _, s := range g.WR {
			total *= len(s.Cands)
			if total > maxBrute {
				return verdict{}
			}
		}
		a := hyperpolygraph.Assignment{Forward: make([]bool, len(g.WW)), Choice: make([]int32, len(g.WR))}
		for n := range total {
			x := n
			for i := range a.Forward {
				a.Forward[i] = x%2 == 1
				x /= 2
			}
			for i, s := range g.WR {
				a.Choice[i] = int32(x % len(s.Cands))
				x /= len(s.Cands)
			}
			comp := g.Resolve(a)
			// Resolve keeps SO and WR; real-time edges join like SO.
			for _, e := range rt {
				comp.Edges = append(comp.Edges, e)
				comp.Prov = append(comp.Prov, hyperpolygraph.Prov{WW: -1, WR: -1})
			}
			cycles := comp.FindCycles(1)
			if len(cycles) == 0 {
				return verdict{ok: true, decided: true}
			}
			out.cycle = nil
			for _, i := range cycles[0] {
				out.cycle = append(out.cycle, comp.Edges[i])
			}
		}
	}
	return out
}

// checkVerdict runs check.Check.
func checkVerdict(t testing.TB, h *history.History, level history.Level) *check.Result {
	t.Helper()
	res, err := check.Check(context.Background(), h, level, check.Options{})
	if errors.Is(err, check.ErrInput) && h.Stats().Committed+h.Stats().Unknown == 0 {
		// Refused as nothing to check; the references call it vacuously
		// satisfied.
		res.Verdict = check.Satisfied
		return res
	}
	require.NoError(t, err)
	return res
}

var (
	hintsOnce sync.Once
	hintsUsed bool
)

// checkUsesHints reports whether check.Check applies version hints yet
// (the lead wires ApplyVersionHints into the strong pipeline): it is the
// case iff the Elle paper's example is a violation for it.
func checkUsesHints(t testing.TB) bool {
	hintsOnce.Do(func() {
		h, err := elle.Read(shared.Path(t, "elle", "paper-example.edn"), elle.Options{})
		require.NoError(t, err)
		hintsUsed = checkVerdict(t, h, history.SER).Verdict == check.Violated
	})
	return hintsUsed
}

func readTestdata(t testing.TB, name string) *history.History {
	t.Helper()
	h, err := elle.Read(filepath.Join("..", "..", "testdata", "elle", name), elle.Options{})
	require.NoError(t, err)
	return h
}

// listView returns the first explanation of h's lists: its register view
// and findings (the only explanation when appended values are unique).
func listView(t testing.TB, h *history.History) (*history.History, []history.ListFinding) {
	t.Helper()
	for x, err := range h.ListExplanations(history.ListOptions{}) {
		require.NoError(t, err)
		if x.H == nil {
			return h, x.Findings
		}
		return x.H, x.Findings
	}
	return h, nil
}

func listViewH(t testing.TB, h *history.History) *history.History {
	v, _ := listView(t, h)
	return v
}
