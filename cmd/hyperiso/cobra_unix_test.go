//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/internal/shared"
)

// TestCobraDirectoryEntryNotALog: check on a Cobra directory with a *.log
// entry that is not a readable log exits 2 naming it, and does not block on
// a FIFO.
func TestCobraDirectoryEntryNotALog(t *testing.T) {
	src := shared.Path(t, "samples", "cobra", "cock-blog")
	for name, mk := range map[string]func(string) error{
		"dangling link": func(p string) error { return os.Symlink(p+".gone", p) },
		"directory":     func(p string) error { return os.Mkdir(p, 0o755) },
		"FIFO":          func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		dir := t.TempDir()
		entries, err := os.ReadDir(src)
		require.NoError(t, err)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
		}
		code, _, _ := runCLI(t, "check", "--level", "ser", dir)
		require.Equal(t, exitViolated, code, "the sample itself")
		bad := filepath.Join(dir, "T99.log")
		require.NoError(t, mk(bad))
		type result struct {
			code int
			errs string
		}
		done := make(chan result, 1)
		go func() {
			var out, errb bytes.Buffer
			c := run([]string{"check", "--level", "ser", dir}, &out, &errb)
			done <- result{c, errb.String()}
		}()
		select {
		case r := <-done:
			require.Equal(t, exitBadInput, r.code, "%s: %s", name, r.errs)
			require.Contains(t, r.errs, bad+": a ", name)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: blocked", name)
		}
	}
}
