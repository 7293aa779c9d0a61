//go:build unix

package formats

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/internal/shared"
)

// TestCobraDirectoryWithUnreadableLog: detection and reading, by --format
// auto and cobra, refuse a Cobra directory with a *.log entry that is not a
// regular file, naming it, without opening it (a FIFO would block).
func TestCobraDirectoryWithUnreadableLog(t *testing.T) {
	src := shared.Path(t, "samples", "cobra", "cock-blog")
	for _, c := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"dangling-link", func(p string) error { return os.Symlink(p+".gone", p) }, "a symbolic link to "},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "a directory, not a regular file"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a named pipe (FIFO), not a regular file"},
	} {
		for _, name := range []string{"0.log", "T99.log"} {
			dir := t.TempDir()
			entries, err := os.ReadDir(src)
			require.NoError(t, err)
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(src, e.Name()))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
			}
			bad := filepath.Join(dir, name)
			require.NoError(t, c.make(bad))
			// Run aside: a reader that opens the FIFO blocks for ever.
			done := make(chan []error, 1)
			go func() {
				_, err := Detect(dir)
				errs := []error{err}
				for _, format := range []string{"auto", "cobra"} {
					_, err = Read(dir, Options{Format: format})
					errs = append(errs, err)
				}
				done <- errs
			}()
			select {
			case errs := <-done:
				for _, err := range errs {
					require.ErrorContains(t, err, bad+": "+c.want, "%s %s", c.name, name)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s %s: blocked", c.name, name)
			}
		}
	}
}
