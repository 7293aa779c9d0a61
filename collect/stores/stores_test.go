package stores

import (
	"context"
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
