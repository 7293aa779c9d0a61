package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// TestMaxMemory: a budget too small for the check ends it before the large
// allocations (an estimate's refusal) or as soon as the process grows over
// it (the watchdog's) with verdict unknown and the figures, not with the
// runtime's fatal "out of memory" (exit 2).
func TestMaxMemory(t *testing.T) {
	hist := shared.Path(t, "bench", "HD-10k", "hist-00000")
	for _, level := range []string{"si", "cc"} {
		code, out, errs := runCLI(t, "check", "--level", level, "--max-memory", "1MiB", "--json", hist)
		require.Equal(t, exitUnknown, code, out+errs)
		var res check.Result
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.Equal(t, check.Unknown, res.Verdict)
		require.Regexp(t, `^not enough memory: .* (needs [0-9.]+ [KMG]iB more, with|reached) [0-9.]+ [KMG]iB in use, over the budget of 1.00 MiB \(--max-memory\)$`, res.Reason)
	}
	code, out, errs := runCLI(t, "check", "--level", "si", "--max-memory", "1MiB", hist)
	require.Equal(t, exitUnknown, code, out+errs)
	require.Contains(t, out, "SI: UNKNOWN (not enough memory: ")
	code, out, errs = runCLI(t, "explain", "--level", "si", "--max-memory", "1MiB", hist)
	require.Equal(t, exitUnknown, code, out+errs)
	require.Contains(t, errs, "not enough memory: ")
	for _, bad := range []string{"lots", "0", "-1G", "4GiBs"} {
		code, _, errs := runCLI(t, "check", "--level", "si", "--max-memory", bad, hist)
		require.Equal(t, exitBadInput, code, bad)
		require.Contains(t, errs, "--max-memory", bad)
	}
	code, _, errs = runCLI(t, "check", "--level", "ser", "--max-memory", "8GiB", "../../testdata/bank.jsonl")
	require.Equal(t, exitSatisfied, code, errs)
}

// TestTimeoutStartsBeforeReading: the deadline covers reading, so a
// timeout shorter than reading ends in stage read.
func TestTimeoutStartsBeforeReading(t *testing.T) {
	hist := shared.Path(t, "bench", "HD-10k", "hist-00000")
	start := time.Now()
	code, out, errs := runCLI(t, "check", "--level", "si", "--timeout", "1ms", hist)
	require.Equal(t, exitUnknown, code, out+errs)
	require.Contains(t, out, "SI: UNKNOWN (timeout after 1ms during read)")
	require.NotContains(t, out, "history ", "the history was not read")
	require.Less(t, time.Since(start), time.Second)

	code, out, errs = runCLI(t, "explain", "--level", "si", "--timeout", "1ms", hist)
	require.Equal(t, exitUnknown, code, out+errs)
	require.Empty(t, out)
	require.Contains(t, errs, "timeout after 1ms during read")
}

// TestWithinGivesUp: work that ignores its context is given up on
// stopGrace after the context ends, reporting the stage it was in.
func TestWithinGivesUp(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	h, err := readWithin(ctx, func() int64 { return 0 }, func() (*history.History, error) {
		<-release
		return nil, errors.New("read after the deadline")
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Nil(t, h)
	require.Less(t, time.Since(start), 500*time.Millisecond)

	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	start = time.Now()
	_, finished, err := within(ctx2, func() (int, error) {
		<-release
		return 1, nil
	})
	require.False(t, finished)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 500*time.Millisecond)

	// Work that returns within the grace is not given up on.
	v, finished, err := within(ctx2, func() (int, error) { return 2, nil })
	require.True(t, finished)
	require.NoError(t, err)
	require.Equal(t, 2, v)
}

// TestSignalStopsCheck runs the built binary on a history whose check takes
// minutes (HD-10k at SI without pruning), signals it after 300 ms and
// expects exit status 3, one line naming the stage, within a second.
func TestSignalStopsCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	hist := shared.Path(t, "bench", "HD-10k", "hist-00000")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "hyperiso")
	build := exec.Command(gobin, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "check", "--level", "si", "--strategy", "no-prune", hist)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			time.Sleep(300 * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(sig))
			sent := time.Now()
			err := cmd.Wait()
			took := time.Since(sent)
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stdout %s\nstderr %s", stdout.String(), stderr.String())
			require.Equal(t, exitUnknown, ee.ExitCode(), stderr.String())
			// The reader's warnings (this history repeats values) come
			// first; the interruption is one line, the last.
			require.Regexp(t, regexp.MustCompile(`(^|\n)hyperiso: interrupted during (read|validate|build|encode|solve) after \d+\.\d s\n$`), stderr.String())
			require.Equal(t, 1, strings.Count(stderr.String(), "interrupted"), stderr.String())
			require.Empty(t, stdout.String())
			require.Less(t, took, time.Second, "stopped %s after the signal", took)
			t.Logf("%s: %q, exit %s after the signal", sig, stderr.String(), took)
		})
	}
}

// TestAddressSpaceTooSmall: under an address-space limit too small for the
// Go runtime (which reserves about 1.1 GiB at start) or for a check beside
// it, hyperiso says so and exits 3, instead of dying of a fatal error,
// SIGSEGV or SIGABRT in the runtime's start-up (exit 2 or a signal).
func TestAddressSpaceTooSmall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_AS is Linux's")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	for _, mib := range []int{1024, 1200, 1600} {
		cmd := exec.Command(prlimit, fmt.Sprintf("--as=%d", mib<<20), self, "check", "--level", "ser", "../../testdata/bank.jsonl")
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		out, _ := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		require.Equal(t, exitUnknown, code, "%d MiB: %s", mib, out)
		require.Regexp(t, `^hyperiso: the address-space limit \(RLIMIT_AS, ulimit -v\) of .* (is too small|leaves)`, string(out), "%d MiB", mib)
	}
}
