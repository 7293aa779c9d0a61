package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWorkerDiesWithParent: a parent killed by SIGTERM (or SIGKILL) while
// its worker runs takes the worker with it. The parent and the worker are
// this test binary, re-run in the roles below.
func TestWorkerDiesWithParent(t *testing.T) {
	switch os.Getenv("HYPERISO_BENCH_ROLE") {
	case "parent":
		// Start a worker that never answers, and wait for it.
		self, _ := os.Executable()
		runChild(context.Background(), Config{
			Command: []string{self, "-test.run=^TestWorkerDiesWithParent$"},
			Env:     []string{"HYPERISO_BENCH_ROLE=worker"},
		}, Job{})
		return
	case "worker":
		require.NoError(t, os.WriteFile(os.Getenv("HYPERISO_BENCH_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o644))
		time.Sleep(time.Minute)
		return
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "worker.pid")
			parent := exec.Command(os.Args[0], "-test.run=^TestWorkerDiesWithParent$")
			parent.Env = append(os.Environ(), "HYPERISO_BENCH_ROLE=parent", "HYPERISO_BENCH_PIDFILE="+pidfile)
			require.NoError(t, parent.Start())
			var worker int
			deadline := time.Now().Add(20 * time.Second)
			for worker == 0 {
				if b, err := os.ReadFile(pidfile); err == nil && len(b) > 0 {
					worker, _ = strconv.Atoi(string(b))
				}
				if time.Now().After(deadline) {
					_ = parent.Process.Kill()
					t.Fatal("the worker did not start")
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.NoError(t, parent.Process.Signal(sig))
			_ = parent.Wait()
			deadline = time.Now().Add(5 * time.Second)
			for alive(worker) {
				if time.Now().After(deadline) {
					_ = syscall.Kill(worker, syscall.SIGKILL)
					t.Fatalf("worker %d still runs after its parent got %v", worker, sig)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
