package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// TestCollectKilledLeavesIncompleteHistory: collect killed with SIGKILL
// mid-run leaves the history recorded so far beside -o, readable and
// marked incomplete; -o is untouched.
func TestCollectKilledLeavesIncompleteHistory(t *testing.T) {
	bin := binary(t, t.TempDir())
	dir := t.TempDir()
	out := filepath.Join(dir, "h.jsonl")
	require.NoError(t, os.WriteFile(out, []byte("an earlier history\n"), 0o644))
	cmd := exec.Command(bin, "collect", "--workload", "lost-update", "--think", "2ms",
		"--sessions", "4", "--txns", "1000000", "-o", out)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tmp := collect.TempName(out, cmd.Process.Pid)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if data, err := os.ReadFile(tmp); err == nil && strings.Count(string(data), "\n") > 20 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no transactions written to %s", tmp)
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	<-done

	old, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "an earlier history\n", string(old), "-o untouched")
	data, err := os.ReadFile(tmp)
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(data), "\n")
	require.Contains(t, header, `"incomplete":true`)
	require.Contains(t, header, jsonl.TrailerField)
	require.NotContains(t, string(data), `{"end":`, "killed before the end line")
	const msg = "history incomplete: its recording was cut short (killed or out of disk)"
	_, err = jsonl.Read(tmp, jsonl.Options{})
	require.EqualError(t, err, tmp+":1: "+msg+"; the transactions recorded so far can be read with --lenient", "never checked as if whole")
	h, err := jsonl.Read(tmp, jsonl.Options{Lenient: true})
	require.NoError(t, err)
	require.Positive(t, h.Stats().Transactions)
	require.Equal(t, history.Dropped{Other: 1}, h.Dropped)

	// check refuses it; with --lenient its verdict says it was reached
	// without the rest.
	var stdout, stderr strings.Builder
	c := exec.Command(bin, "check", "--level", "rc", tmp)
	c.Stdout, c.Stderr = &stdout, &stderr
	err = c.Run()
	require.Equal(t, exitBadInput, c.ProcessState.ExitCode(), "%v %s", err, stderr.String())
	require.Contains(t, stderr.String(), tmp+":1: "+msg+"; the transactions recorded so far can be read with --lenient")
	stdout.Reset()
	stderr.Reset()
	c = exec.Command(bin, "check", "--level", "rc", "--lenient", tmp)
	c.Stdout, c.Stderr = &stdout, &stderr
	_ = c.Run()
	require.Contains(t, []int{exitSatisfied, exitViolated}, c.ProcessState.ExitCode(), stderr.String())
	require.Contains(t, stdout.String()+stderr.String(), tmp+":1: "+msg)
	require.Contains(t, stdout.String()+stderr.String(), "lenient reading dropped 1 other input item")
}

// TestCollectFailedRunKeepsOutput: a run that fails before it records
// anything (a mistyped --db) leaves an existing -o as it was, and no
// temporary file.
func TestCollectFailedRunKeepsOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "h.jsonl")
	require.NoError(t, os.WriteFile(out, []byte("an earlier history\n"), 0o644))
	for _, db := range []string{"postgress://127.0.0.1/test", "mariadb://root@127.0.0.1:1/test"} {
		code, _, stderr := runWithCollect(t, "collect", "--db", db, "-o", out)
		require.Equal(t, exitBadInput, code, stderr)
		old, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, "an earlier history\n", string(old), "-o untouched after %s", db)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "no temporary file left")
	}
}

// TestCollectCleanupAfterKill: collect killed with SIGKILL leaves its
// table; collect --cleanup lists it and drops it, and removes the data
// directory of an embedded etcd cluster whose process is gone, while what
// a running process owns stays.
func TestCollectCleanupAfterKill(t *testing.T) {
	bin := binary(t, t.TempDir())
	pg := postgresScratch(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmd := exec.Command(bin, "collect", "--db", pg.url, "--workload", "lost-update", "--think", "2ms",
		"--sessions", "2", "--txns", "1000000", "-o", filepath.Join(t.TempDir(), "h.jsonl"))
	require.NoError(t, cmd.Start())
	table := pg.waitForTable(t)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.Equal(t, []string{table}, pg.tables(), "SIGKILL leaves the table")

	orphanDir := filepath.Join(tmp, "hyperiso-etcd-p"+strconv.Itoa(cmd.Process.Pid)+"-123")
	liveDir := filepath.Join(tmp, "hyperiso-etcd-p"+strconv.Itoa(os.Getpid())+"-456")
	for _, d := range []string{orphanDir, liveDir} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "m1"), 0o755))
	}
	code, stdout, stderr := runWithCollect(t, "collect", "--cleanup", "--db", pg.url)
	require.Equal(t, 0, code, stderr)
	pid := strconv.Itoa(cmd.Process.Pid)
	require.Contains(t, stdout, "removed table "+table+" (process "+pid+" is gone)")
	require.Contains(t, stdout, "removed directory "+orphanDir+" (process "+pid+" is gone)")
	require.Contains(t, stdout, "left directory "+liveDir+": process "+strconv.Itoa(os.Getpid())+" still runs")
	require.Empty(t, pg.tables())
	require.NoDirExists(t, orphanDir)
	require.DirExists(t, liveDir)

	code, stdout, _ = runWithCollect(t, "collect", "--cleanup", "--db", pg.url)
	require.Equal(t, 0, code)
	require.NotContains(t, stdout, "removed")
}
