package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// oneKeyHistory writes a history of n transactions on one key with five
// values, each reading a value and writing one, in the given sessions
// (JSONL): the shape of a 156 KB history (n=3000) that once grew to 19.7 GB.
// serial makes every read return the value the previous transaction wrote,
// the lines grouped by session (a satisfiable history whose order the
// history-order probe cannot use); otherwise the values are random.
func oneKeyHistory(t *testing.T, n, sessions int, serial bool) string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, uint64(n)))
	lines := make([][]string, sessions)
	cur := 0
	for i := 1; i <= n; i++ {
		v, w, s := r.IntN(5), r.IntN(5), r.IntN(sessions)
		if serial {
			v, cur = cur, w
		}
		lines[s] = append(lines[s], fmt.Sprintf(`{"session":%d,"id":%d,"ops":[["r",1,%d],["w",1,%d]]}`, s+1, i, v, w))
	}
	var b strings.Builder
	b.WriteString(`{"hyperiso":1,"init":"zero"}` + "\n")
	if serial {
		for _, ls := range lines {
			for _, l := range ls {
				b.WriteString(l + "\n")
			}
		}
	} else {
		// Random values: keep the order they were made in.
		all := make([]string, n+1)
		for _, ls := range lines {
			for _, l := range ls {
				var id int
				_, err := fmt.Sscanf(l[strings.Index(l, `"id":`)+5:], "%d", &id)
				require.NoError(t, err)
				all[id] = l
			}
		}
		for _, l := range all[1:] {
			b.WriteString(l + "\n")
		}
	}
	p := filepath.Join(t.TempDir(), fmt.Sprintf("onekey-%d.jsonl", n))
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

// peakPrefix starts the line reportPeak writes.
const peakPrefix = "test-peak-rss-bytes: "

// The child's own peak, VmHWM: the resource usage wait4 reports counts,
// for a child started by vfork and exec (as Go starts processes), the
// parent's peak as well, and this test process grows to several hundred
// MiB over the package's tests.
func init() {
	reportPeak = func() {
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				if f := strings.Fields(v); len(f) == 2 && f[1] == "kB" {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						fmt.Fprintf(os.Stderr, "%s%d\n", peakPrefix, kb<<10)
					}
				}
			}
		}
	}
}

// checkProcess runs "hyperiso check --level ser ARGS" as a process (the
// test binary acting as hyperiso) and returns its exit status, its
// output, its peak resident size, and how long after its start the verdict
// line came.
func checkProcess(t *testing.T, args ...string) (code int, out string, maxRSS int64, verdictAt time.Duration) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, append([]string{"check", "--level", "ser"}, args...)...)
	cmd.Env = append(os.Environ(), mainEnv+"=1", peakEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb strings.Builder
	cmd.Stderr = &errb
	start := time.Now()
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var b strings.Builder
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "SER:") && verdictAt == 0 {
			verdictAt = time.Since(start)
		}
		b.WriteString(sc.Text() + "\n")
	}
	_ = cmd.Wait()
	errs := errb.String()
	maxRSS = -1
	if i := strings.LastIndex(errs, peakPrefix); i >= 0 {
		n, err := strconv.ParseInt(strings.TrimSpace(errs[i+len(peakPrefix):]), 10, 64)
		require.NoError(t, err, errs)
		maxRSS, errs = n, errs[:i]
	}
	require.GreaterOrEqual(t, maxRSS, int64(0), "the child did not report its peak: %s", errs)
	return cmd.ProcessState.ExitCode(), b.String() + errs, maxRSS, verdictAt
}

// TestMemoryBudgetHolds: a one-key history whose CNF grows much faster
// than the history ends with verdict unknown and the figures, its peak
// resident size within 10% of --max-memory (it once went 40% over: the
// width-two clauses' list and the solver's arena grew unasked).
func TestMemoryBudgetHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("a check of a few seconds")
	}
	const budget = 300 << 20
	hist := oneKeyHistory(t, 800, 3, false)
	// no-probe: the pipeline alone (the default strategy settles one-key
	// histories by the value-sequence search, docs/valueseq.md).
	code, out, rss, _ := checkProcess(t, "--strategy", "no-probe", "--max-memory", "300MiB", "--timeout", "60s", hist)
	require.Equal(t, exitUnknown, code, out)
	require.Contains(t, out, "SER: UNKNOWN (not enough memory: ")
	require.LessOrEqual(t, rss, int64(budget*11/10), "peak RSS %d MiB over 300 MiB: %s", rss>>20, out)
	t.Logf("peak RSS %d MiB: %s", rss>>20, strings.SplitN(out, "\n", 4)[2])
}

// TestTimeoutPromptInEveryStage: --timeout gives the verdict within 100 ms
// of the deadline in the long stages of the one-key histories (prune,
// encode); the issue saw 0.37 s in prune and 1 s in encode on a busy
// machine, where the timer that closes the context's Done runs late
// (TestDeadlineSeenByTheClock tests the remedy as such). The median of
// three runs is judged, for the machine's noise.
func TestTimeoutPromptInEveryStage(t *testing.T) {
	if testing.Short() {
		t.Skip("checks of a few seconds")
	}
	for _, c := range []struct {
		stage, timeout string
		hist           string
		args           []string
	}{
		// no-probe: the pipeline's stages, which the default strategy's
		// value-sequence search skips on one key (docs/valueseq.md).
		{"prune", "300ms", oneKeyHistory(t, 3000, 10, true), []string{"--strategy", "no-probe", "--max-memory", "300MiB"}},
		{"encode", "700ms", oneKeyHistory(t, 600, 3, false), []string{"--strategy", "no-probe", "--max-memory", "1GiB"}},
	} {
		d, err := time.ParseDuration(c.timeout)
		require.NoError(t, err)
		var late []time.Duration
		for range 3 {
			code, out, _, at := checkProcess(t, append(c.args, "--timeout", c.timeout, c.hist)...)
			require.Equal(t, exitUnknown, code, out)
			require.Contains(t, out, "SER: UNKNOWN (timeout after "+c.timeout+" during "+c.stage+")")
			late = append(late, at-d)
		}
		slices.Sort(late)
		allowed := promptness()
		t.Logf("%s: verdict %v after the deadline (of %v; %v allowed)", c.stage, late[1], late, allowed)
		require.Less(t, late[1], allowed, "%s: verdict %v after the deadline", c.stage, late[1])
	}
}

// promptness is how late a verdict may come after its deadline: 100 ms on
// a machine with a core free, more as the load average exceeds the cores
// (a child process then waits for its turn; every engineer's run of the
// suite beside other work saw 100–200 ms). A stage that ignored the
// deadline would run seconds past it.
func promptness() time.Duration {
	allowed := 100 * time.Millisecond
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return allowed
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return allowed
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return allowed
	}
	if per := load / float64(runtime.NumCPU()); per > 1 {
		allowed = time.Duration(float64(allowed) * per)
	}
	return allowed
}

// TestDeadlineSeenByTheClock: the check's context says its deadline has
// passed as soon as the clock says so, before the timer that closes Done
// has run (with one processor, busy here, that timer waits; on a busy
// machine it waited hundreds of milliseconds, and the verdict with it).
func TestDeadlineSeenByTheClock(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx, cancel := withDeadline(context.Background(), 3*time.Millisecond)
	defer cancel()
	dl, ok := ctx.Deadline()
	require.True(t, ok)
	for time.Now().Before(dl) {
	}
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	<-ctx.Done()
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	ctx, cancel = withDeadline(context.Background(), time.Hour)
	require.NoError(t, ctx.Err())
	cancel()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
}
