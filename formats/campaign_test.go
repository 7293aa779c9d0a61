package formats_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/awdit"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// campaignRounds scales the mutation campaign: random mutations per
// sample, and truncation points per file beyond its line boundaries. CI
// runs the default (a few seconds); the longer run in the notes is
// go test ./formats -run TestMutationCampaign -campaign.rounds=100 -v.
var campaignRounds = flag.Int("campaign.rounds", 1, "scale of TestMutationCampaign")

// endRule says which cuts of a file a reader must refuse.
type endRule int

const (
	// anyCut: every proper prefix is refused (a stated end: JSONL's end
	// line, dbcop's length prefixes, VeriStrong's record count with a
	// final newline).
	anyCut endRule = iota
	// insideLine: a cut strictly inside a line is refused (each line is
	// closed: text's ")", a JSON or EDN object, AWDIT's final newline);
	// a cut at a line boundary is invisible.
	insideLine
	// noRule: only "no panic" (Cobra's binary logs).
	noRule
)

type sample struct {
	name   string // for messages and extension-based detection
	format string
	data   []byte
	rule   endRule
}

// campaignSamples: the shared samples of every format (Cobra's logs one
// by one through the Viper-free stream path is not possible, so a Cobra
// log is read from a directory), and the same histories as hyperiso
// writes them in each format it can.
func campaignSamples(t *testing.T) []sample {
	ds := shared.Datasets(t)
	var out []sample
	add := func(rel, format string, rule endRule) {
		data, err := os.ReadFile(filepath.Join(ds, rel))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sample{filepath.Base(rel), format, data, rule})
	}
	add("samples/dbcop/galera-polysi/history.bincode", "dbcop", anyCut)
	add("samples/dbcop/roachdb-cut/history.bincode", "dbcop", anyCut)
	add("samples/text/pg_ser_bug.txt", "text", insideLine)
	add("samples/text/galera.txt", "text", insideLine)
	add("samples/viper-json/J24.log", "viper", insideLine)
	add("elle/paper-example.edn", "elle", insideLine)
	add("elle/rw-register.edn", "elle", insideLine)
	add("weak-labelled/read-atomic/generated/l4e10sqrt.txt", "awdit", insideLine)
	for _, dir := range []string{"cock-blog", "yuga-G2-a-cut"} {
		logs, _ := filepath.Glob(filepath.Join(ds, "samples/cobra", dir, "*.log"))
		sort.Strings(logs)
		data, err := os.ReadFile(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sample{"T0.log", "cobra", data, noRule})
	}
	// hyperiso's own output, in every format it writes as a stream.
	var hs []*history.History
	for _, rel := range []string{"samples/text/pg_ser_bug.txt", "samples/dbcop/roachdb-cut/history.bincode", "elle/list-append-gh-30.edn"} {
		h, err := formats.Read(filepath.Join(ds, rel), formats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	bank, err := formats.Read(filepath.Join("..", "testdata", "bank.jsonl"), formats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs = append(hs, bank)
	writers := []struct {
		format, name string
		rule         endRule
		w            func(io.Writer, *history.History) error
	}{
		{"jsonl", "h.jsonl", anyCut, jsonl.Write},
		{"dbcop", "history.bincode", anyCut, dbcop.Write},
		{"text", "h.txt", insideLine, text.Write},
		{"awdit", "h.awdit", insideLine, awdit.Write},
		{"elle", "h.edn", insideLine, elle.Write},
	}
	for i, h := range hs {
		for _, w := range writers {
			var buf bytes.Buffer
			if w.w(&buf, h) != nil {
				continue // the format cannot hold it
			}
			out = append(out, sample{fmt.Sprintf("written%d-%s", i, w.name), w.format, buf.Bytes(), w.rule})
		}
	}
	// Viper, written as a directory: its logs one by one.
	for i, h := range hs {
		dir := filepath.Join(t.TempDir(), "v")
		if viper.Write(dir, h) != nil {
			continue
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "J*.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			out = append(out, sample{fmt.Sprintf("written%d-%s", i, filepath.Base(l)), "viper", data, insideLine})
		}
	}
	// VeriStrong's text, by hand: a record count, then records.
	out = append(out, sample{"veristrong.txt", "elle", []byte("4\n1 1 A 7 11\n2 2 R 7 1 11\n1 3 A 7 12\n2 4 R 7 2 11 12\n"), anyCut})
	return out
}

// read reads data as the sample's format (and as detection decides, for
// the panics only), turning a panic into a test failure with the input.
func read(t *testing.T, s sample, data []byte, what string) (ok bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			dump := filepath.Join(os.TempDir(), fmt.Sprintf("campaign-panic-%d", time.Now().UnixNano()))
			_ = os.WriteFile(dump, data, 0o644)
			t.Fatalf("%s, %s: panic: %v (input in %s)\n%s", s.name, what, r, dump, debug.Stack())
		}
	}()
	if s.format == "cobra" {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, s.name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := formats.Read(dir, formats.Options{Format: "cobra"})
		_, _ = formats.Read(dir, formats.Options{Format: "cobra", Lenient: true})
		return err == nil
	}
	_, err := formats.ReadStream(bytes.NewReader(data), s.name, formats.Options{Format: s.format})
	_, _ = formats.ReadStream(bytes.NewReader(data), s.name, formats.Options{Format: s.format, Lenient: true})
	_, _ = formats.ReadStream(bytes.NewReader(data), s.name, formats.Options{})
	return err == nil
}

// mustRefuse says whether the cut data[:n] is detectably damaged.
func mustRefuse(s sample, n int) bool {
	if strings.TrimSpace(string(s.data[n:])) == "" {
		return false // only trailing blanks lost
	}
	switch s.rule {
	case anyCut:
		return true
	case insideLine:
		// Strictly inside a line: neither at its start nor just before
		// its newline (a whole last line without one is still whole for
		// text, JSON and EDN lines; AWDIT's is refused, which is more).
		return n > 0 && s.data[n-1] != '\n' && s.data[n] != '\n' && s.data[n] != '\r'
	}
	return false
}

// TestMutationCampaign mutates the shared samples of every format, and
// the same histories as hyperiso writes them: every truncation at a line
// boundary and at points inside lines, and random byte flips, inserts and
// deletes. No reader may panic, and no cut the format can show may get a
// history (issue 26: 444 of 2,086 truncated files got a verdict).
func TestMutationCampaign(t *testing.T) {
	samples := campaignSamples(t)
	rng := rand.New(rand.NewPCG(26, uint64(*campaignRounds)))
	var reads, cuts, refusedCuts, mutated, mutatedRead int
	perFile := 40 * *campaignRounds
	for _, s := range samples {
		if len(s.data) < 2 {
			continue
		}
		// Truncation: every line boundary, and perFile points at random.
		points := map[int]bool{}
		for i, c := range s.data[:len(s.data)-1] {
			if c == '\n' {
				points[i+1] = true
			}
		}
		for range perFile {
			points[1+rng.IntN(len(s.data)-1)] = true
		}
		if len(points) > 20*perFile { // big files: a sample of the boundaries
			keep := map[int]bool{}
			for p := range points {
				if len(keep) == 20*perFile {
					break
				}
				keep[p] = true
			}
			points = keep
		}
		for n := range points {
			cuts++
			reads++
			if read(t, s, s.data[:n], fmt.Sprintf("cut at byte %d of %d", n, len(s.data))) {
				if mustRefuse(s, n) {
					t.Errorf("%s (%s): cut at byte %d of %d read as a history", s.name, s.format, n, len(s.data))
				}
			} else {
				refusedCuts++
			}
		}
		// Random mutations: no panic.
		for range 2 * perFile {
			m := append([]byte(nil), s.data...)
			for range 1 + rng.IntN(3) {
				i := rng.IntN(len(m))
				switch rng.IntN(4) {
				case 0:
					m[i] ^= byte(1 << rng.IntN(8))
				case 1:
					m = append(m[:i], append([]byte{byte(rng.IntN(256))}, m[i:]...)...)
				case 2:
					if len(m) > 1 {
						m = append(m[:i], m[i+1:]...)
					}
				case 3:
					const syntax = "\n\r\t {}[]()\",:-0123456789"
					m[i] = syntax[rng.IntN(len(syntax))]
				}
			}
			mutated++
			reads++
			if read(t, s, m, "mutated") {
				mutatedRead++
			}
		}
	}
	t.Logf("%d samples, %d reads (each strict, lenient and detected): %d cuts, %d refused, %d read (at line boundaries the format cannot show); %d random mutations, %d still read",
		len(samples), reads, cuts, refusedCuts, cuts-refusedCuts, mutated, mutatedRead)
}
