package elle_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// allLevels are the levels every reading of a timed history is checked at,
// strongest first (strict-ser ⇒ SER ⇒ SI ⇒ PC, PSI ⇒ CC ⇒ RA ⇒ RC; PC and
// PSI are incomparable).
var allLevels = []history.Level{history.StrictSER, history.SER, history.SI, history.PC, history.PSI, history.CC, history.RA, history.RC}

// verdictOf checks h at level; a history with nothing left to check is
// refused, never judged.
func verdictOf(t *testing.T, h *history.History, level history.Level) *check.Result {
	t.Helper()
	res, err := check.Check(context.Background(), h, level, check.Options{})
	if errors.Is(err, check.ErrInput) {
		require.Zero(t, h.Stats().Committed+h.Stats().Unknown, "%v refused a history with transactions to check: %v", level, err)
		return nil
	}
	require.NoError(t, err)
	return res
}

// summary is a result without timings: verdict and anomaly types, sorted.
func summary(res *check.Result) string {
	if res == nil {
		return "refused"
	}
	var types []string
	for _, a := range res.Anomalies {
		types = append(types, a.Type)
	}
	slices.Sort(types)
	return fmt.Sprintf("%s %v", res.Verdict, types)
}

// hasClass reports whether res names an anomaly of one of the classes.
func hasClass(res *check.Result, classes ...string) bool {
	for _, a := range res.Anomalies {
		if slices.Contains(classes, a.Class) {
			return true
		}
	}
	return false
}

// TestReadingsAgree: the same random list-append history (duplicate
// appends, aborted, unknown and unfinished transactions, timing) read as
// Jepsen EDN, as elle-cli JSON, and as hyperiso JSONL converted from the
// EDN reading, gets the same verdict at every level; and each reading obeys
// the hierarchy of levels, with a G0 or G1c found at SER found at RC too;
// histories of a simulated serial or SI database satisfy SI and below.
func TestReadingsAgree(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(12, 2026))
	count := map[string]int{}
	for i := range n {
		mode := simMode(rng.IntN(3))
		cfg := smallCfg(rng, mode, rng.IntN(3) == 0)
		cfg.txns = 2 + rng.IntN(7)
		seed := rng.Uint64()
		ednText := generate(rand.New(rand.NewPCG(seed, 1)), cfg)
		cfg.json = true
		jsonText := generate(rand.New(rand.NewPCG(seed, 1)), cfg)

		fromEDN, err := elle.Parse(strings.NewReader(ednText), "gen.edn", elle.Options{})
		require.NoError(t, err, ednText)
		fromJSON, err := elle.Parse(strings.NewReader(jsonText), "gen.json", elle.Options{})
		require.NoError(t, err, jsonText)
		var buf bytes.Buffer
		require.NoError(t, jsonl.Write(&buf, fromEDN))
		fromJSONL, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), "gen.jsonl", jsonl.Options{})
		require.NoError(t, err, buf.String())

		results := map[history.Level]*check.Result{}
		for _, l := range allLevels {
			e := verdictOf(t, fromEDN, l)
			require.Equal(t, summary(e), summary(verdictOf(t, fromJSON, l)), "history %d at %v: EDN and JSON readings differ\n%s", i, l, ednText)
			// JSONL interns values in another order, which may make a
			// check name another of the history's anomalies first.
			if j := verdictOf(t, fromJSONL, l); e != nil {
				require.Equal(t, e.Verdict, j.Verdict, "history %d at %v: EDN and JSONL readings differ\n%s\n%s", i, l, ednText, buf.String())
			}
			results[l] = e
			if e != nil {
				count[l.String()+" "+e.Verdict.String()]++
			}
		}
		if results[history.SER] == nil {
			count["refused"]++
			continue
		}
		// A satisfied level implies every weaker one (unknown decides
		// nothing: duplicate values at the weak levels).
		for _, a := range allLevels {
			for _, b := range allLevels {
				strong, weak := results[a], results[b]
				if a != b && a.AtLeast(b) && strong.Verdict == check.Satisfied {
					require.NotEqual(t, check.Violated, weak.Verdict, "history %d: %v satisfied but %v violated: %s\n%s", i, a, b, summary(weak), ednText)
				}
			}
		}
		// A simulated serial or SI database produces histories every
		// level from SI down accepts: no false alarm from list orders.
		if mode != simBroken {
			for _, l := range []history.Level{history.SI, history.PC, history.PSI, history.CC, history.RA, history.RC} {
				require.NotEqual(t, check.Violated, results[l].Verdict, "history %d from a %v database: %v says %s\n%s", i, mode, l, summary(results[l]), ednText)
			}
		}
		if ser, rc := results[history.SER], results[history.RC]; hasClass(ser, "G0", "G1c") && rc.Verdict != check.Unknown {
			count["G0/G1c at SER"]++
			require.True(t, hasClass(rc, "G0", "G1c"), "history %d: SER reports %s, RC %s\n%s", i, summary(ser), summary(rc), ednText)
		}
	}
	t.Logf("%d histories: %v", n, count)
	require.Positive(t, count["G0/G1c at SER"])
	require.Positive(t, count["rc violated"])
	require.Positive(t, count["strict-ser satisfied"])
}
