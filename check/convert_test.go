package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/awdit"
	"github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// historyPaths lists the histories under root: each file or directory that
// format detection recognises, a recognised directory as one history.
func historyPaths(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.Contains(p, "fuzz") {
			return filepath.SkipDir
		}
		if _, err := formats.Detect(p); err != nil {
			return nil
		}
		out = append(out, p)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// noFinalNewline is what the AWDIT reader says of a file that does not end
// with a newline, as AWDIT's own hand-written tests do not.
const noFinalNewline = "does not end with a newline: the file may have been cut inside its last number; if it is complete, add a final newline, or read it with --lenient"

// readHistory reads the history at p, failing the test if it cannot: the
// shared and testdata histories are all readable. An AWDIT file without
// its final newline is refused strictly with the message that says what
// to do, and read with Lenient, which warns.
func readHistory(t *testing.T, p string) *history.History {
	t.Helper()
	h, err := formats.Read(p, formats.Options{})
	if err == nil {
		return h
	}
	format, _ := formats.Detect(p)
	require.Equal(t, "awdit", format, "%s is unreadable: %v", p, err)
	require.ErrorContains(t, err, noFinalNewline, p)
	h, err = formats.Read(p, formats.Options{Lenient: true})
	require.NoError(t, err, p)
	require.Contains(t, fmt.Sprint(h.Warnings), "does not end with a newline", p)
	return h
}

// outcome checks h at level; nil when it is refused.
func outcome(t *testing.T, h *history.History, level history.Level) *Result {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Check(ctx, h, level, Options{})
	if errors.Is(err, ErrInput) {
		return nil
	}
	require.NoError(t, err, "%s at %v", h.Source, level)
	return res
}

// same is what two readings of a history must share: the verdict, and
// whether anomalies back a violation. Which anomaly a check names first may
// depend on the order in which a reader interned values (both are true of
// the history), so the types are not compared.
func same(res *Result) string {
	if res == nil {
		return "refused"
	}
	return fmt.Sprintf("%s (anomalies: %v)", res.Verdict, len(res.Anomalies) > 0)
}

// checkHierarchy checks that a level satisfied implies every level it is
// at least as strong as satisfied or unknown (strict-ser ⇒ SER ⇒ SI ⇒ PC,
// PSI ⇒ CC ⇒ RA ⇒ RC), and that a G0 or G1c found at SER is found at RC
// too.
func checkHierarchy(t *testing.T, name string, res map[history.Level]*Result) {
	for a, ra := range res {
		for b, rb := range res {
			if a != b && a.AtLeast(b) && ra != nil && rb != nil && ra.Verdict == Satisfied {
				require.NotEqual(t, Violated, rb.Verdict, "%s: %v satisfied, %v violated", name, a, b)
			}
		}
	}
	ser, rc := res[history.SER], res[history.RC]
	if ser == nil || rc == nil || rc.Verdict == Unknown {
		return
	}
	for _, a := range ser.Anomalies {
		if a.Class == "G0" || a.Class == "G1c" {
			found := false
			for _, b := range rc.Anomalies {
				found = found || b.Class == "G0" || b.Class == "G1c"
			}
			require.True(t, found, "%s: SER reports %s, RC does not (%s)", name, a.Class, rc.Verdict)
		}
	}
}

// levelsOf are the levels h can be checked at: all of them, strict-ser
// only with timing, PC and PSI (PSI's lazy search can take seconds on a
// thousand transactions that are not serializable) only on histories of
// at most 60 transactions that may have committed (a count every writer
// keeps), and mixed on those when every transaction declares its level.
func levelsOf(h *history.History) []history.Level {
	ls := []history.Level{history.SER, history.SI, history.CC, history.RA, history.RC}
	if s := h.Stats(); s.Committed+s.Unknown <= 60 {
		ls = append(ls, history.PC, history.PSI)
		declared := true
		for t := 1; t < len(h.Txns); t++ {
			declared = declared && h.Txns[t].Level != history.LevelNone
		}
		if declared && len(h.Txns) > 1 {
			ls = append(ls, history.Mixed)
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Timed {
			return append(ls, history.StrictSER)
		}
	}
	return ls
}

// TestConvertKeepsVerdicts: every shared history and every testdata
// history, converted to JSONL and read back, gets the same verdict at every
// level it can be checked at, and its verdicts obey the hierarchy of levels
// (the 10k bench histories and those over 5,000 transactions only with
// -large). Every one of them must read (readHistory): none is skipped for
// being unreadable.
func TestConvertKeepsVerdicts(t *testing.T) {
	paths := historyPaths(t, shared.Datasets(t))
	paths = append(paths, historyPaths(t, filepath.Join("..", "testdata"))...)
	checked, skipped := 0, 0
	for _, p := range paths {
		h := readHistory(t, p)
		if !*large && (strings.Contains(p, "-10k") || len(h.Txns) > 5000) {
			skipped++
			continue
		}
		var buf bytes.Buffer
		require.NoError(t, jsonl.Write(&buf, h), p)
		h2, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), p+".jsonl", jsonl.Options{})
		require.NoError(t, err, p)
		require.Equal(t, levelsOf(h), levelsOf(h2), p)
		results := map[history.Level]*Result{}
		for _, l := range levelsOf(h) {
			results[l] = outcome(t, h, l)
			require.Equal(t, same(results[l]), same(outcome(t, h2, l)), "%s at %v, before and after convert", p, l)
			checked++
		}
		checkHierarchy(t, p, results)
	}
	t.Logf("%d histories, %d checks compared, %d big histories skipped", len(paths), checked, skipped)
	require.Greater(t, checked, 3000)
}

// TestConvertKeepsStatedHints: version orders stated outside any list (as
// explain's counterexamples carry them) survive JSONL.
func TestConvertKeepsStatedHints(t *testing.T) {
	b := history.NewBuilder("mem", "test")
	s := b.Session(1)
	t1 := b.Begin(s, 1, history.Committed, history.Pos{})
	b.Write(t1, 7, 1)
	t2 := b.Begin(b.Session(2), 2, history.Committed, history.Pos{})
	b.Write(t2, 7, 2)
	b.VersionHint(7, 2, 1)
	h := b.Finish()
	var buf bytes.Buffer
	require.NoError(t, jsonl.Write(&buf, h))
	require.Contains(t, buf.String(), `{"version_order":[[7,2,1]]}`)
	h2, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), "rt.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, h.HintsAt(history.RC), h2.HintsAt(history.RC))
}

// writer is one target of convert: how to write a history and read it back
// the way a user would (format detection included).
type writer struct {
	name  string
	write func(t *testing.T, h *history.History) (string, error)
}

func streamWriter(name, file string, w func(io.Writer, *history.History) error) writer {
	return writer{name, func(t *testing.T, h *history.History) (string, error) {
		p := filepath.Join(t.TempDir(), file)
		var buf bytes.Buffer
		if err := w(&buf, h); err != nil {
			return "", err
		}
		require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
		return p, nil
	}}
}

var writers = []writer{
	streamWriter("dbcop", "history.bincode", dbcop.Write),
	streamWriter("text", "h.txt", text.Write),
	streamWriter("edn", "history.edn", elle.Write),
	streamWriter("awdit", "h.awdit", awdit.Write),
	{"cobra", func(t *testing.T, h *history.History) (string, error) {
		dir := filepath.Join(t.TempDir(), "logs")
		return dir, cobra.Write(dir, h, cobra.WriteOptions{})
	}},
	{"viper", func(t *testing.T, h *history.History) (string, error) {
		dir := filepath.Join(t.TempDir(), "json")
		return dir, viper.Write(dir, h)
	}},
	{"cobra-universal", func(t *testing.T, h *history.History) (string, error) {
		dir := filepath.Join(t.TempDir(), "logs")
		return dir, cobra.Write(dir, h, cobra.WriteOptions{Flavour: cobra.Universal})
	}},
}

// sampled keeps every n-th history of the big dbcop groups (all of them
// with -large) and every other history.
func sampled(paths []string, n int) []string {
	var out []string
	i := 0
	for _, p := range paths {
		if strings.Contains(p, "hist-") && !*large {
			if i++; i%n != 0 {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// TestWritersKeepVerdicts: a sample of the shared histories and every
// testdata history, written in each format that can hold it and read back
// with format detection, gets the same verdict at every level; a format
// that cannot hold a history refuses it with ErrCannotHold and says what.
func TestWritersKeepVerdicts(t *testing.T) {
	every := 6
	if testing.Short() {
		every = 12
	}
	paths := sampled(historyPaths(t, shared.Datasets(t)), every)
	paths = append(paths, historyPaths(t, filepath.Join("..", "testdata"))...)
	held := map[string]int{}
	refused := map[string]int{}
	for _, p := range paths {
		h := readHistory(t, p)
		if strings.Contains(p, "-10k") || len(h.Txns) > 2000 {
			continue // big histories are TestConvertKeepsVerdicts' (-large)
		}
		want := map[history.Level]string{}
		for _, w := range writers {
			out, err := w.write(t, h)
			if err != nil {
				require.ErrorIs(t, err, formats.ErrCannotHold, "%s to %s", p, w.name)
				require.Contains(t, err.Error(), "cannot hold this history: ", "%s to %s", p, w.name)
				refused[w.name]++
				continue
			}
			h2, err := formats.Read(out, formats.Options{})
			require.NoError(t, err, "%s written as %s", p, w.name)
			require.Equal(t, levelsOf(h), levelsOf(h2), "%s as %s", p, w.name)
			for _, l := range levelsOf(h) {
				if _, ok := want[l]; !ok {
					want[l] = same(outcome(t, h, l))
				}
				require.Equal(t, want[l], same(outcome(t, h2, l)), "%s at %v, before and after writing %s", p, l, w.name)
			}
			held[w.name]++
		}
	}
	t.Logf("%d histories; held %v; refused %v", len(paths), held, refused)
	for _, w := range writers {
		require.Greater(t, held[w.name], 3, "%s holds almost nothing", w.name)
	}
}

// TestConvertKeepsNames: a history whose keys and values are strings
// converts to JSONL and EDN and back with its names and verdicts; every
// format that holds only integers refuses it, naming the names.
func TestConvertKeepsNames(t *testing.T) {
	// A G-single (read skew) over string keys and values: RC satisfied,
	// SI and SER violated.
	src := `{"session":1,"ops":[["append","x","a"],["append","y","b"]]}
{"session":2,"ops":[["r","x",[]],["r","y",["b"]]]}`
	p := filepath.Join(t.TempDir(), "h.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	h, err := formats.Read(p, formats.Options{})
	require.NoError(t, err)
	want := map[history.Level]string{}
	for _, l := range levelsOf(h) {
		want[l] = same(outcome(t, h, l))
	}
	require.Equal(t, "satisfied (anomalies: false)", want[history.RC])
	require.Equal(t, "violated (anomalies: true)", want[history.SI])
	require.Equal(t, "violated (anomalies: true)", want[history.SER])
	for _, w := range append([]writer{streamWriter("jsonl", "back.jsonl", jsonl.Write)}, writers...) {
		out, err := w.write(t, h)
		if w.name != "jsonl" && w.name != "edn" {
			require.ErrorIs(t, err, formats.ErrCannotHold, w.name)
			require.ErrorContains(t, err, "2 keys that are names, not integers (first: x)", w.name)
			require.ErrorContains(t, err, "values that are names, not integers", w.name)
			continue
		}
		require.NoError(t, err, w.name)
		h2, err := formats.Read(out, formats.Options{})
		require.NoError(t, err, w.name)
		names := func(h *history.History) []string {
			var s []string
			for t := 1; t < len(h.Txns); t++ {
				for _, op := range h.Txns[t].Ops {
					s = append(s, h.KeyString(op.Key)+"="+h.ValueString(op.Key, op.Value))
				}
			}
			return s
		}
		// In EDN, x, a and b are symbols: written and read back as such.
		require.Equal(t, names(h), names(h2), w.name)
		for _, l := range levelsOf(h) {
			require.Equal(t, want[l], same(outcome(t, h2, l)), "%s at %v", w.name, l)
		}
	}
}
