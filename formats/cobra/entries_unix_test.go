//go:build unix

package cobra

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// requireFileError checks an error about a whole file: an *InputError at
// path, without a byte offset, whose message has every part of contains.
func requireFileError(t *testing.T, err error, path string, contains ...string) {
	t.Helper()
	var ie *history.InputError
	require.True(t, errors.As(err, &ie), "want *history.InputError, got %T: %v", err, err)
	require.Equal(t, path, ie.Pos.File, "%v", err)
	require.NotContains(t, err.Error(), "byte")
	for _, c := range contains {
		require.Contains(t, err.Error(), c)
	}
}

// TestUnreadableLogEntries: an entry named *.log that cannot be read as a
// log is an error naming it, never skipped (its transactions would be
// missing), and a FIFO is not opened (that would block).
func TestUnreadableLogEntries(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"dangling-link", func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "gone"), p) }, "a symbolic link to "},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "a directory, not a regular file"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a named pipe (FIFO), not a regular file"},
		{"link-to-fifo", func(p string) error {
			fifo := p + ".fifo" // not a *.log name: ignored
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				return err
			}
			return os.Symlink(fifo, p)
		}, "a named pipe (FIFO), not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "T1.log"), logOf(S(5), W(1, 2, 3), C(5)), 0o644))
			// Named to sort first as well as last: neither the reader nor
			// detection (which reads the first log's head) may open it.
			for _, name := range []string{"A.log", "T9.log"} {
				bad := filepath.Join(dir, name)
				require.NoError(t, c.make(bad))
				_, err := Read(dir, Options{})
				requireFileError(t, err, bad, c.want, "every *.log file of a Cobra history must be a client log")
				requireFileError(t, CheckLogFile(bad), bad, c.want)
				require.NoError(t, os.Remove(bad))
			}
			h, err := Read(dir, Options{})
			require.NoError(t, err)
			require.Equal(t, counts{sessions: 1, committed: 1, writes: 1}, count(h))
		})
	}
}

// nobodyEnv, set to a directory, makes TestPermissionDenied read that
// directory: root reads every file, so the test runs again as nobody.
const nobodyEnv = "HYPERISO_COBRA_TEST_NOBODY_DIR"

// TestPermissionDenied: a log the reader may not read is an error naming it.
func TestPermissionDenied(t *testing.T) {
	if dir := os.Getenv(nobodyEnv); dir != "" {
		_, err := Read(dir, Options{})
		bad := filepath.Join(dir, "T2.log")
		requireFileError(t, err, bad, "cannot read this log: permission denied")
		return
	}
	// World-readable, so that nobody can run the copied test binary.
	dir, err := os.MkdirTemp("", "cobra-perm")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "T1.log"), logOf(S(5), W(1, 2, 3), C(5)), 0o644))
	bad := filepath.Join(dir, "T2.log")
	require.NoError(t, os.WriteFile(bad, logOf(S(6), C(6)), 0o644))
	require.NoError(t, os.Chmod(bad, 0))
	if os.Geteuid() != 0 {
		_, err := Read(dir, Options{})
		requireFileError(t, err, bad, "cannot read this log: permission denied")
		return
	}
	bin := filepath.Join(dir, "cobra.test")
	require.NoError(t, copyFile(os.Args[0], bin))
	cmd := exec.Command(bin, "-test.run=^TestPermissionDenied$", "-test.v")
	cmd.Env = append(os.Environ(), nobodyEnv+"="+dir)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) {
		t.Skip("cannot run as nobody:", err)
	}
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestPermissionDenied")
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
