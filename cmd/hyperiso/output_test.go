package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// crafted is a key name that, printed raw, returns the cursor, clears the
// line and writes a satisfied verdict over the violated one; then it
// starts a line of its own.
const crafted = "\r\x1b[2KSER: SATISFIED\nSER: SATISFIED\u202e"

// TestTextOutputEscapesNames: control characters (and bidi controls,
// invalid UTF-8) in names reach text output escaped, in check, stats and
// explain and on standard error, and exact in JSON (issue 26).
func TestTextOutputEscapesNames(t *testing.T) {
	dir := t.TempDir()
	key, err := json.Marshal(crafted + "\xff")
	require.NoError(t, err)
	// A lost update on the crafted key: violates SER.
	src := `{"session":1,"ops":[["r",` + string(key) + `,0],["w",` + string(key) + `,1]]}
{"session":2,"ops":[["r",` + string(key) + `,0],["w",` + string(key) + `,2]]}
`
	p := filepath.Join(dir, "h\x1b[31m.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	clean := func(what, s string) {
		t.Helper()
		for _, c := range []string{"\r", "\x1b", "\u202e", "\xff"} {
			require.NotContains(t, s, c, "%s: %q", what, s)
		}
		for _, line := range strings.Split(s, "\n") {
			require.False(t, strings.HasPrefix(line, "SER: SATISFIED"), "%s: %q", what, s)
		}
	}
	code, out, errb := runCLI(t, "check", "--level", "ser", p)
	require.Equal(t, exitViolated, code, errb)
	clean("check", out)
	clean("check stderr", errb)
	require.Contains(t, out, `\r\x1b[2KSER: SATISFIED\nSER: SATISFIED\u202e`)
	require.Contains(t, out, `h\x1b[31m.jsonl`)

	code, out, errb = runCLI(t, "explain", "--level", "ser", p)
	require.Equal(t, exitViolated, code, errb)
	clean("explain", out)
	clean("explain stderr", errb)

	code, out, errb = runCLI(t, "stats", p)
	require.Equal(t, 0, code, errb)
	clean("stats", out)

	// JSON keeps the exact name (escaped as JSON escapes it).
	code, out, _ = runCLI(t, "check", "--level", "ser", "--json", p)
	require.Equal(t, exitViolated, code)
	require.True(t, json.Valid([]byte(out)))
	require.Contains(t, out, `SER: SATISFIED\nSER: SATISFIED`)

	// An error message quoting the input is escaped on standard error.
	bad := filepath.Join(dir, "bad\x1b[2J.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"session\":1,\"ops\":[[\"x\x1b[2J\",1,1]]}\n"), 0o644))
	code, _, errb = runCLI(t, "check", "--level", "ser", bad)
	require.Equal(t, exitBadInput, code)
	clean("error", errb)
}

// TestStdoutWriteError: a failed write to standard output (a full disk,
// a closed pipe) exits 2 with a message, whatever the verdict (issue 26:
// check and stats ignored it and exited 0 or 1).
func TestStdoutWriteError(t *testing.T) {
	p := filepath.Join("..", "..", "testdata", "bank.jsonl")
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	r.Close()
	defer w.Close()
	for _, out := range []*os.File{full, w} {
		for _, args := range [][]string{
			{"check", "--level", "ser", p},
			{"check", "--level", "ser", "--json", p},
			{"stats", p},
			{"stats", "--json", p},
			{"explain", "--level", "ser", p},
			{"convert", "--to", "jsonl", p},
		} {
			var errb bytes.Buffer
			code := run(args, out, &errb)
			require.Equal(t, exitBadInput, code, "%v to %s: %s", args, out.Name(), errb.String())
			require.Contains(t, errb.String(), "hyperiso: ", "%v", args)
			require.Contains(t, errb.String(), "standard output", "%v", args)
		}
	}
}
