//go:build !noetcd

package stores

import (
	"context"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/etcd"
)

// WithEtcd says whether this build includes the etcd store (it does unless
// built with -tags noetcd).
const WithEtcd = true

func openEtcd(ctx context.Context, db string) (collect.Store, error) {
	return etcd.Open(ctx, db)
}
