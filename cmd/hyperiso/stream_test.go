package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// mainEnv makes the test binary act as hyperiso itself (see TestMain), for
// tests that need a process of their own, such as reading /dev/stdin.
const mainEnv = "HYPERISO_CMD_TEST_MAIN"

// streamHistory writes a JSONL history of at least size bytes whose first
// two transactions are a lost update (violating SER) and whose rest is
// padding that violates nothing, so that a reader that loses the head of
// its input gives another verdict or another transaction count.
func streamHistory(t *testing.T, size int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"hyperiso": 1, "init": "zero"}` + "\n")
	b.WriteString(`{"session": 1, "id": 1, "ops": [["r", 1, 0], ["w", 1, 1]]}` + "\n")
	b.WriteString(`{"session": 2, "id": 2, "ops": [["r", 1, 0], ["w", 1, 2]]}` + "\n")
	for id := 3; b.Len() < size; id++ {
		fmt.Fprintf(&b, `{"session": %d, "id": %d, "ops": [["w", %d, %d], ["r", %d, %d]]}`+"\n", 3+id%5, id, 1000+id, id, 1000+id, id)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("h%d.jsonl", size))
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// outcome is what must not depend on how the history reached the checker.
type outcome struct {
	Code         int
	Verdict      check.Verdict
	Transactions int
	Operations   int
}

// runOutcome runs the CLI, with stdin as standard input, and returns the
// outcome of its --json report.
func runOutcome(t *testing.T, stdin io.Reader, args ...string) outcome {
	t.Helper()
	code, stdout, stderr := pipeRun(t, stdin, args...)
	return outcomeOf(t, code, stdout, stderr)
}

func outcomeOf(t *testing.T, code int, stdout, stderr string) outcome {
	t.Helper()
	var res check.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), "exit %d: %s%s", code, stdout, stderr)
	return outcome{code, res.Verdict, res.History.Transactions, res.History.Operations}
}

// writeAll writes data to w in a goroutine and closes w, as the other end
// of a pipe does.
func writeAll(w io.WriteCloser, data []byte) {
	go func() {
		_, _ = w.Write(data)
		w.Close()
	}()
}

// TestCheckFromStandardInput checks a history given as "-" on a pipe: the
// same verdict and transaction count as from the file, for histories larger
// than the 4 KB detection used to consume and than the readers' 64 KB buffer.
func TestCheckFromStandardInput(t *testing.T) {
	streamCases(t, func(t *testing.T, name string, data []byte, args []string, want outcome) {
		t.Run(name, func(t *testing.T) {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			writeAll(w, data)
			require.Equal(t, want, runOutcome(t, r, append(args, "-")...))
		})
	})
}

// streamCases calls run for histories of 5 KB and 100 KB, read strictly and
// leniently, with the bytes, the check arguments (the path to add) and the
// outcome the file itself gives.
func streamCases(t *testing.T, run func(t *testing.T, name string, data []byte, args []string, want outcome)) {
	for _, size := range []int{5 << 10, 100 << 10} {
		path := streamHistory(t, size)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, lenient := range []bool{false, true} {
			args := []string{"check", "--level", "ser", "--json"}
			if lenient {
				args = append(args, "--lenient")
			}
			want := runOutcome(t, nil, append(args, path)...)
			require.Equal(t, exitViolated, want.Code)
			run(t, fmt.Sprintf("%d-lenient-%v", size, lenient), data, args, want)
		}
	}
}

func pipeRun(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runIn(args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

// TestCheckFromDevStdin runs hyperiso as a process of its own whose
// standard input is a pipe, reading it as /dev/stdin and as "-".
func TestCheckFromDevStdin(t *testing.T) {
	if _, err := os.Stat("/dev/stdin"); err != nil {
		t.Skip("no /dev/stdin")
	}
	path := streamHistory(t, 100<<10)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	want := runOutcome(t, nil, "check", "--level", "ser", "--json", path)
	require.Equal(t, exitViolated, want.Code)
	for _, arg := range []string{"/dev/stdin", "-"} {
		cmd := exec.Command(os.Args[0], "check", "--level", "ser", "--json", arg)
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		// Not an *os.File, so the child's standard input is a pipe.
		cmd.Stdin = io.MultiReader(bytes.NewReader(data))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, want, outcomeOf(t, code, out.String(), errb.String()), arg)
	}
}

// TestStreamsThroughEveryReader gives samples of the streamable formats to
// check through a pipe and compares with the file.
func TestStreamsThroughEveryReader(t *testing.T) {
	ds := shared.Datasets(t)
	for _, p := range []string{
		"samples/dbcop/roachdb-cut/history.bincode",
		"samples/text/pg_ser_bug.txt",
		"elle/paper-example.edn",
		"weak-labelled/read-atomic/generated/" + firstEntry(t, filepath.Join(ds, "weak-labelled/read-atomic/generated")),
	} {
		path := filepath.Join(ds, p)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		want := runOutcome(t, nil, "check", "--level", "ser", "--json", path)
		t.Run(filepath.Base(p), func(t *testing.T) {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			writeAll(w, data)
			require.Equal(t, want, runOutcome(t, r, "check", "--level", "ser", "--json", "-"))
		})
	}
}

func firstEntry(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, es)
	return es[0].Name()
}

// TestEveryCommandReadsStandardInput: convert, stats and explain accept "-"
// and say <stdin> where they name the input.
func TestEveryCommandReadsStandardInput(t *testing.T) {
	path := streamHistory(t, 5<<10)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"convert"},
		{"stats", "--json"},
		{"explain", "--level", "ser", "--json"},
	} {
		wantCode, wantOut, _ := pipeRun(t, nil, append(args, path)...)
		code, out, errs := pipeRun(t, bytes.NewReader(data), append(args, "-")...)
		require.Equal(t, wantCode, code, "%v: %s", args, errs)
		if args[0] == "convert" {
			require.Equal(t, wantOut, out)
			continue
		}
		var a, b map[string]any
		require.NoError(t, json.Unmarshal([]byte(wantOut), &a))
		require.NoError(t, json.Unmarshal([]byte(out), &b))
		require.Equal(t, path, a["source"])
		require.Equal(t, "<stdin>", b["source"])
		if args[0] == "explain" {
			// Timings differ from run to run; the rest must not.
			for _, k := range []string{"verdict", "history", "anomalies"} {
				require.Equal(t, a[k], b[k], k)
			}
			continue
		}
		delete(a, "source")
		delete(b, "source")
		require.Equal(t, a, b, args)
	}
	code, _, errs := pipeRun(t, strings.NewReader(""), "check", "--level", "ser", "-")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "<stdin>: empty file")
}

// TestCollectPipedIntoCheck is the path of the issue that found the lost
// head: `hyperiso collect … | hyperiso check --level ser -` checks every
// transaction collect wrote, with the verdict the file gets.
func TestCollectPipedIntoCheck(t *testing.T) {
	var hist, errb bytes.Buffer
	code := runIn([]string{"collect", "--db", "memory", "--workload", "general", "--sessions", "4", "--txns", "100", "--keys", "20"}, nil, &hist, &errb)
	require.Equal(t, 0, code, errb.String())
	require.Greater(t, hist.Len(), 64<<10, "larger than the readers' buffer")
	path := filepath.Join(t.TempDir(), "h.jsonl")
	require.NoError(t, os.WriteFile(path, hist.Bytes(), 0o600))
	args := []string{"check", "--level", "ser", "--json"}
	want := runOutcome(t, nil, append(args, path)...)
	got := runOutcome(t, bytes.NewReader(hist.Bytes()), append(args, "-")...)
	require.Equal(t, want, got)
	require.Equal(t, 400, got.Transactions)
}
