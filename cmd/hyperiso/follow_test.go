package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// collectArgs run the memory store at snapshot isolation with its
// lost-update bug: write skews and lost updates on 20 keys, unique values,
// far more transactions than a test waits for.
var collectArgs = []string{"collect", "--isolation", "snapshot", "--bug", "lost-update", "--unique", "--keys", "20", "--txns", "100000", "-q"}

// The acceptance test of issue 30: collect streams into check --follow,
// and the injected violation is reported while collect still runs.
func TestFollowCollectReportsViolationBeforeRunEnds(t *testing.T) {
	pr, pw := io.Pipe()
	collectDone := make(chan int, 1)
	var cerr bytes.Buffer
	go func() {
		code := runIn(append(collectArgs, "-o", "-"), nil, pw, &cerr)
		pw.Close()
		collectDone <- code
	}()
	code, out, errs := pipeRun(t, pr, "check", "--follow", "--fail-fast", "--unique-values", "--every", "100ms", "--level", "ser,si", "-")
	running := true
	select {
	case <-collectDone:
		running = false
	default:
	}
	pr.CloseWithError(errors.New("the checker stopped reading")) // collect's next write fails: it stops
	<-collectDone
	require.True(t, running, "collect ended before the violation was reported:\n%s%s", out, errs)
	require.Equal(t, exitViolated, code, out+errs)
	require.Contains(t, out, "VIOLATED, certain after")
	require.Contains(t, out, "SER:  VIOLATED", "the report after fail-fast gives the certain violation")
}

// collect --check --stop-on-violation ends the run at the first certain
// violation, keeps the history recorded so far, and says so.
func TestCollectCheckStopsOnViolation(t *testing.T) {
	h := filepath.Join(t.TempDir(), "run.jsonl")
	code, out, errs := runWithCollect(t, append(collectArgs, "--check", "ser", "--stop-on-violation", "-o", h)...)
	require.Equal(t, exitViolated, code, out+errs)
	require.Contains(t, out, "check: SER VIOLATED, certain after")
	require.Contains(t, out, "check: ser VIOLATED")
	require.Contains(t, errs, "stopped on a violation: wrote")
	code, _, errs = runCLI(t, "check", "--level", "ser", h)
	require.Equal(t, exitViolated, code, errs)
	data, err := os.ReadFile(h)
	require.NoError(t, err)
	require.Less(t, bytes.Count(data, []byte("\n")), 20*100000, "the run went to its end")

	// Without a violation the run goes to its end, and the summary says
	// so.
	code, out, errs = runWithCollect(t, "collect", "--sessions", "3", "--txns", "20", "--unique", "--check", "ser,si", "-o", h)
	require.Equal(t, exitSatisfied, code, out+errs)
	require.Contains(t, out, "check: ser SATISFIED, si SATISFIED")

	code, _, errs = runWithCollect(t, "collect", "--stop-on-violation", "-o", h)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "--stop-on-violation goes with --check")
}

// A growing file is followed until its end line comes, and its final
// verdict is the file's.
func TestFollowGrowingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grow.jsonl")
	head := `{"hyperiso":1,"init":"zero","trailer":true}
{"session":1,"id":1,"ops":[["r",1,0],["w",2,10]]}
`
	rest := `{"session":2,"id":2,"ops":[["r",2,0],["w",1,20]]}
{"end":{"transactions":2,"operations":4,"lines":3}}
`
	require.NoError(t, os.WriteFile(path, []byte(head), 0o644))
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runCLI(t, "check", "--follow", "--every", "50ms", "--level", "ser,si", path)
		done <- result{code, out, errs}
	}()
	select {
	case r := <-done:
		t.Fatalf("follow ended before the end line came: %d\n%s%s", r.code, r.out, r.errs)
	case <-time.After(400 * time.Millisecond):
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(rest)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("follow did not end after the end line")
	}
	require.Equal(t, exitViolated, r.code, r.out+r.errs)
	require.Contains(t, r.out, "SER:  VIOLATED")
	require.Contains(t, r.out, "SI:   SATISFIED")
	// The same verdicts as the offline check of the whole file.
	code, out, _ := runCLI(t, "check", "--level", "ser,si", path)
	require.Equal(t, r.code, code)
	require.Equal(t, out, strings.ReplaceAll(r.out, "<stdin>", path))
}

func TestFollowUsageErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"session":1,"ops":[["w",1,1]]}`+"\n"), 0o644))
	for args, want := range map[string]string{
		"--follow " + path:                           "--follow needs --level",
		"--follow --level all " + path:               "--follow needs --level L[,L...], not all",
		"--follow --level ser " + path + " " + path:  "--follow reads one stream",
		"--follow --level ser --format elle " + path: "--follow reads JSONL",
		"--fail-fast --level ser " + path:            "go with --follow",
		"--unique-values --level ser " + path:        "go with --follow",
	} {
		code, _, errs := runCLI(t, append([]string{"check"}, strings.Fields(args)...)...)
		require.Equal(t, exitBadInput, code, args)
		require.Contains(t, errs, want, args)
	}
	code, out, errs := runCLI(t, "check", "--follow", "--level", "ser", path)
	require.Equal(t, exitSatisfied, code, out+errs)
}

// With --json a certain violation is one JSON line the moment it is found,
// then the report; the progress line says the rate, what is held and each
// level's verdict so far.
func TestFollowJSONAndProgress(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["r",1,0],["w",2,10]]}
{"session":2,"id":2,"ops":[["r",2,0],["w",1,20]]}
`)) // and the stream stays open
	}()
	defer pw.Close()
	var out, errb, progress bytes.Buffer
	root := newRoot(&out, new(int))
	root.SetIn(pr)
	levels, err := parseLevelRequest("ser,si")
	require.NoError(t, err)
	fr := &followRun{levels: levels.levels, unique: true, failFast: true, every: 50 * time.Millisecond, asJSON: true,
		stdout: &out, stderr: &errb, progress: &progress}
	code, err := fr.run(t.Context(), root, "-")
	require.NoError(t, err)
	require.Equal(t, exitViolated, code)
	first, rest, _ := strings.Cut(out.String(), "\n")
	var ev struct {
		Certain   bool `json:"certain"`
		AfterTxns int  `json:"after_transactions"`
		Report    struct {
			Level, Verdict string
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(first), &ev), first)
	require.True(t, ev.Certain)
	require.Equal(t, 2, ev.AfterTxns)
	require.Equal(t, "ser", ev.Report.Level)
	require.Equal(t, "violated", ev.Report.Verdict)
	require.Contains(t, rest, `"weakest_violated"`)
	require.Contains(t, rest, `"reason": "the stream was not read to its end`, "SI, satisfied so far, is unknown after fail-fast")
	require.Regexp(t, `following: 2 tx \([0-9]+ tx/s\), held 2, open 0, heap [0-9]+ MB, ser VIOLATED, si satisfied`, progress.String())
}

// collect --fence-every streams fences into check --follow, which folds
// the history as it grows: the final verdict is check's of the file, and
// standard error says what was folded.
func TestFollowFoldsFencedStream(t *testing.T) {
	h := filepath.Join(t.TempDir(), "run.jsonl")
	code, out, errs := runWithCollect(t, "collect", "--sessions", "6", "--txns", "400", "--ops", "4", "--keys", "30", "--unique", "--fence-every", "50", "-q", "-o", h)
	require.Equal(t, exitSatisfied, code, out+errs)
	data, err := os.ReadFile(h)
	require.NoError(t, err)
	require.Contains(t, string(data), `"fence_key":"0"`)
	pr, pw := io.Pipe()
	go func() {
		// A few hundred lines at a time, so that the checker sees cuts
		// come and folds at them.
		for len(data) > 0 {
			n := min(len(data), 20000)
			_, _ = pw.Write(data[:n])
			data = data[n:]
			time.Sleep(30 * time.Millisecond)
		}
		pw.Close()
	}()
	code, out, errs = pipeRun(t, pr, "check", "--follow", "--unique-values", "--every", "20ms", "--level", "ser,si", "-")
	require.Equal(t, exitSatisfied, code, out+errs)
	require.Contains(t, errs, "transactions were folded away at")
	code, _, errs = runCLI(t, "check", "--level", "ser,si", h)
	require.Equal(t, exitSatisfied, code, errs)

	code, _, errs = runCLI(t, "collect", "--workload", "append", "--fence-every", "1s", "-o", h)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "fences go with the generated register workloads")
	code, _, errs = runCLI(t, "collect", "--fence-every", "0", "-o", h)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, errs, "at least 1")
}

// A stream served on a Unix socket is read until the producer closes the
// connection, a check running meanwhile, and its verdict is the offline
// one.
func TestFollowUnixSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "hsock") // short: socket paths are limited to about 100 bytes
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "h.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ln.Close()
	first := `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["r",1,0],["w",2,10]]}
`
	second := `{"session":2,"id":2,"ops":[["r",2,0],["w",1,20]]}
`
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, first)
		time.Sleep(300 * time.Millisecond) // a check of the first part runs
		_, _ = io.WriteString(conn, second)
	}()
	code, out, errs := runCLI(t, "check", "--follow", "--every", "50ms", "--level", "ser,si", sock)
	require.Equal(t, exitViolated, code, out+errs)
	require.Contains(t, out, "SER:  VIOLATED")
	require.Contains(t, out, "SI:   SATISFIED")
	whole := filepath.Join(dir, "h.jsonl")
	require.NoError(t, os.WriteFile(whole, []byte(first+second), 0o644))
	offline, _, _ := runCLI(t, "check", "--level", "ser,si", whole)
	require.Equal(t, offline, code)
}
