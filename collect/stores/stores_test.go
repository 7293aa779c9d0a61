package stores

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	for _, db := range []string{"", "memory"} {
		s, err := Open(ctx, db, Options{Seed: 3, Bugs: memstore.StaleReads})
		require.NoError(t, err)
		require.Equal(t, "memory", s.Name())
		require.Equal(t, "memory (bugs: stale-reads)", s.Describe())
	}
	_, err := Open(ctx, "postgres://u@h/db", Options{Bugs: memstore.LostUpdate})
	require.ErrorContains(t, err, "only be injected into the memory store")
	_, err = Open(ctx, "oracle://scott:tiger@db/x", Options{})
	require.ErrorContains(t, err, "oracle://scott:***@db/x")
	require.NotContains(t, err.Error(), "tiger")
	require.Equal(t, "redis://h", redact("redis://h"))
	require.Equal(t, "x://u@h", redact("x://u@h"))
	require.Equal(t, "plain", redact("plain"))
}

func TestOpenServers(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, dbtest.PostgresURL(t), Options{})
	require.NoError(t, err)
	require.Equal(t, "postgres", s.Name())
	require.NoError(t, s.Teardown(ctx, false))
	s, err = Open(ctx, dbtest.MariaDBURL(t), Options{})
	require.NoError(t, err)
	require.Equal(t, "mariadb", s.Name())
	require.NoError(t, s.Teardown(ctx, false))
}

// Sweep finds the embedded etcd clusters' directories in every build, the
// one without etcd included: a full build's killed run may have left them.
func TestSweepEtcdDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := filepath.Join(tmp, fmt.Sprintf("hyperiso-etcd-p%d-123", cmd.Process.Pid))
	alive := filepath.Join(tmp, fmt.Sprintf("hyperiso-etcd-p%d-456", os.Getpid()))
	require.NoError(t, os.Mkdir(dead, 0o700))
	require.NoError(t, os.Mkdir(alive, 0o700))
	left, err := Sweep(context.Background(), "memory", true)
	require.NoError(t, err)
	require.Len(t, left, 2)
	for _, l := range left {
		require.Equal(t, l.Name == dead, l.Removed, l.Name)
	}
	require.NoDirExists(t, dead)
	require.DirExists(t, alive)
}
