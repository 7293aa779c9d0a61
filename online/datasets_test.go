package online

import (
	"bufio"
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

var sessionField = regexp.MustCompile(`"session":(-?[0-9]+)`)

// shuffledJSONL writes h as JSONL with its transaction lines in a random
// order that keeps each session's order (every other line where it was).
func shuffledJSONL(t *testing.T, rng *rand.Rand, h *history.History) []byte {
	var b bytes.Buffer
	if err := jsonl.Write(&b, h); err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b.Bytes(), []byte("\n"))
	var slots []int
	queues := map[string][][]byte{}
	var sessions []string
	for i, ln := range lines {
		info, _ := classify(ln, i == 0)
		if info.kind != lineTxn {
			continue
		}
		if !info.hasID {
			t.Fatalf("jsonl.Write wrote a transaction without its id: %s", ln)
		}
		s := string(sessionField.FindSubmatch(ln)[1])
		if _, ok := queues[s]; !ok {
			sessions = append(sessions, s)
		}
		queues[s] = append(queues[s], ln)
		slots = append(slots, i)
	}
	for _, i := range slots {
		for {
			s := sessions[rng.Intn(len(sessions))]
			if q := queues[s]; len(q) > 0 {
				lines[i], queues[s] = q[0], q[1:]
				break
			}
		}
	}
	return bytes.Join(lines, nil)
}

// TestSharedDatasetsStreamed streams every shared dataset with a known
// verdict (converted to JSONL, sessions interleaved at random) and checks
// that the final verdict is the expected one at SER and SI, that the
// running verdict of a few prefixes is the offline verdict of those
// prefixes, and that no violation is called certain in a history that
// satisfies the level.
func TestSharedDatasetsStreamed(t *testing.T) {
	dir := shared.Datasets(t)
	f, err := os.Open(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]map[history.Level]bool{} // path → level → satisfied
	var paths []string
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 4 || strings.Contains(cols[0], "-10k") || cols[3] == "unknown" {
			continue
		}
		l, ok := history.ParseLevel(cols[2])
		if !ok {
			t.Fatalf("level %q", cols[2])
		}
		if want[cols[0]] == nil {
			want[cols[0]] = map[history.Level]bool{}
			paths = append(paths, cols[0])
		}
		want[cols[0]][l] = cols[3] == "accept"
	}
	// Every dataset takes a minute: CI streams every fourth (every
	// sixteenth with -short), HYPERISO_ONLINE_ALL=1 all of them.
	step := 4
	switch {
	case os.Getenv("HYPERISO_ONLINE_ALL") != "":
		step = 1
	case testing.Short():
		step = 16
	}
	var picked []string
	for i := 0; i < len(paths); i += step {
		picked = append(picked, paths[i])
	}
	paths = picked
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	levels := []history.Level{history.SER, history.SI}
	early := 0
	for _, p := range paths {
		h, err := formats.Read(filepath.Join(dir, p), formats.Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		data := shuffledJSONL(t, rng, h)
		c, _ := New(Options{Name: p, Levels: levels, Unique: true})
		// Check at a third and two thirds of the stream's lines, then at
		// the end.
		lines := bytes.SplitAfter(data, []byte("\n"))
		for i, ln := range lines {
			c.Write(ln)
			if i != len(lines)/3 && i != 2*len(lines)/3 {
				continue
			}
			st, err := c.Check(ctx)
			if err != nil {
				t.Fatalf("%s, line %d: %v", p, i+1, err)
			}
			prefix, err := jsonl.Parse(bytes.NewReader(bytes.Join(lines[:i+1], nil)), p, jsonl.Options{Prefix: true})
			if err != nil {
				t.Fatalf("%s: prefix: %v", p, err)
			}
			for _, lv := range st.Levels {
				off, err := check.Check(ctx, prefix, lv.Level, check.Options{})
				if err != nil {
					continue // nothing to check yet, as the online check says
				}
				if off.Verdict != lv.Result.Verdict {
					t.Errorf("%s at %s, line %d: online %v, offline %v", p, lv.Level, i+1, lv.Result.Verdict, off.Verdict)
				}
				if lv.Certain != nil {
					early++
				}
			}
		}
		st, err := c.Finish(ctx)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, lv := range st.Levels {
			sat, ok := want[p][lv.Level]
			if !ok {
				continue
			}
			if got := lv.Result.Verdict == check.Satisfied; got != sat {
				t.Errorf("%s at %s: streamed %v, expected satisfied=%v", p, lv.Level, lv.Result.Verdict, sat)
			}
			if sat && lv.Certain != nil {
				t.Errorf("%s at %s: a violation called certain after %d transactions, but the history satisfies the level", p, lv.Level, lv.CertainAt)
			}
		}
	}
	t.Logf("%d datasets streamed; %d certain violations seen before the end", len(paths), early)
}
