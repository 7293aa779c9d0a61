//go:build noetcd

package stores

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenEtcdWithoutEtcd(t *testing.T) {
	require.False(t, WithEtcd)
	for _, db := range []string{"etcd", "etcd?members=1", "etcd://127.0.0.1:2379"} {
		_, err := Open(context.Background(), db, Options{})
		require.ErrorIs(t, err, ErrNoEtcd, db)
		require.ErrorContains(t, err, "built without etcd (-tags noetcd)")
	}
}
