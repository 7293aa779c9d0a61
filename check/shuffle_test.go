package check

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// shuffleSessions rewrites the JSONL text of a history with its
// transactions interleaved at random, each session's order kept: the
// order a file need not be in. Header, init and end lines stay in place.
func shuffleSessions(t *testing.T, text string, rng *rand.Rand) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var head, tail []string
	bySession := map[string][]string{}
	var sessions []string
	for _, l := range lines {
		var probe struct {
			Session json.RawMessage `json:"session"`
			End     json.RawMessage `json:"end"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &probe), l)
		switch {
		case probe.End != nil:
			tail = append(tail, l)
		case probe.Session == nil:
			head = append(head, l)
		default:
			s := string(probe.Session)
			if _, ok := bySession[s]; !ok {
				sessions = append(sessions, s)
			}
			bySession[s] = append(bySession[s], l)
		}
	}
	var bag []string
	for _, s := range sessions {
		for range bySession[s] {
			bag = append(bag, s)
		}
	}
	rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
	out := append([]string(nil), head...)
	next := map[string]int{}
	for _, s := range bag {
		out = append(out, bySession[s][next[s]])
		next[s]++
	}
	out = append(out, tail...)
	return strings.Join(out, "\n") + "\n"
}

// TestSharedDatasetsShuffled: every shared history with a known verdict
// gets that verdict again when its transactions come in another order
// (sessions interleaved at random, each session's order kept), as a file
// without a commit order does: the verdict must not depend on the order of
// the file, only the speed may.
func TestSharedDatasetsShuffled(t *testing.T) {
	if testing.Short() {
		t.Skip("re-checks the shared datasets")
	}
	dir := shared.Datasets(t)
	rng := rand.New(rand.NewPCG(17, 4))
	checked := 0
	texts := map[string]string{}
	for _, e := range readExpected(t) {
		if e.verdict == "unknown" || strings.Contains(e.path, "-10k") {
			continue
		}
		text, ok := texts[e.path]
		if !ok {
			h, err := formats.Read(filepath.Join(dir, e.path), formats.Options{})
			require.NoError(t, err, e.path)
			var b bytes.Buffer
			require.NoError(t, jsonl.Write(&b, h), e.path)
			text = shuffleSessions(t, b.String(), rng)
			texts[e.path] = text
		}
		h, err := jsonl.Parse(strings.NewReader(text), e.path+" (shuffled)", jsonl.Options{})
		require.NoError(t, err, e.path)
		level, ok := history.ParseLevel(e.level)
		require.True(t, ok, e.level)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := Check(ctx, h, level, Options{})
		cancel()
		require.NoError(t, err, "%s at %s", e.path, e.level)
		want := map[string]Verdict{"accept": Satisfied, "reject": Violated}[e.verdict]
		require.Equal(t, want, res.Verdict, "%s at %s, shuffled: %s", e.path, e.level, res.Reason)
		checked++
	}
	require.Greater(t, checked, 20)
	t.Logf("%d shuffled histories checked", checked)
}
