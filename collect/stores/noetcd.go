//go:build noetcd

package stores

import (
	"context"
	"errors"

	"github.com/hyperiso/hyperiso/collect"
)

// WithEtcd says whether this build includes the etcd store (it does unless
// built with -tags noetcd).
const WithEtcd = false

// ErrNoEtcd is Open's answer for etcd in a build without it.
var ErrNoEtcd = errors.New(`this hyperiso was built without etcd (-tags noetcd): to collect from etcd, use the full build, made without that tag: go build -trimpath -o hyperiso ./cmd/hyperiso (README, "Building a release")`)

func openEtcd(context.Context, string) (collect.Store, error) {
	return nil, ErrNoEtcd
}
