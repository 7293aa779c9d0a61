// Package stores opens the store a --db string names: "memory" (the
// default), postgres://… or postgresql://…, mariadb://… or mysql://…,
// etcd (an embedded cluster), etcd?members=N or etcd://host:port,….
//
// Built with -tags noetcd, the package leaves out the etcd store and with
// it etcd's server, gRPC, OpenTelemetry and Prometheus; Open then refuses
// etcd with ErrNoEtcd.
package stores

import (
	"context"
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/etcd/etcddirs"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/postgres"
)

// Options configure the memory store; they are refused for a server.
type Options struct {
	// Seed drives the memory store's interleaving.
	Seed int64
	// Bugs are injected into the memory store.
	Bugs memstore.Bug
}

// Open returns the store db names, connected and checked.
func Open(ctx context.Context, db string, opt Options) (collect.Store, error) {
	scheme, _, _ := strings.Cut(db, "://")
	switch {
	case db == "" || db == "memory":
		return memstore.New(memstore.Options{Seed: opt.Seed, Bugs: opt.Bugs}), nil
	case opt.Bugs != 0:
		return nil, fmt.Errorf("bugs can only be injected into the memory store")
	case scheme == "postgres" || scheme == "postgresql":
		return postgres.Open(ctx, db)
	case scheme == "mariadb" || scheme == "mysql":
		return mariadb.Open(ctx, db)
	case db == "etcd" || strings.HasPrefix(db, "etcd?") || scheme == "etcd":
		return openEtcd(ctx, db)
	}
	return nil, fmt.Errorf("unknown database %q: want memory, postgres://user@host:port/db, mariadb://user:password@host:port/db, etcd or etcd://host:port,…", redact(db))
}

// Sweep lists what killed runs left behind and, if remove, removes what
// belonged to processes that are gone: the embedded etcd clusters' data
// directories on this host, whatever db is, and the tables in the database
// a postgres:// or mariadb:// db names.
func Sweep(ctx context.Context, db string, remove bool) ([]collect.Leftover, error) {
	left, err := etcddirs.Sweep(remove)
	if err != nil {
		return left, err
	}
	var st interface {
		collect.Store
		collect.Sweeper
	}
	switch scheme, _, _ := strings.Cut(db, "://"); scheme {
	case "postgres", "postgresql":
		st, err = postgres.Open(ctx, db)
	case "mariadb", "mysql":
		st, err = mariadb.Open(ctx, db)
	default:
		return left, nil
	}
	if err != nil {
		return left, err
	}
	tables, err := st.Sweep(ctx, remove)
	// Keep: the store made no table of its own; this only disconnects.
	_ = st.Teardown(ctx, true)
	return append(left, tables...), err
}

// redact hides a password in a URL for messages.
func redact(db string) string {
	scheme, rest, ok := strings.Cut(db, "://")
	if !ok {
		return db
	}
	cred, host, ok := strings.Cut(rest, "@")
	if !ok {
		return db
	}
	if user, _, ok := strings.Cut(cred, ":"); ok {
		return scheme + "://" + user + ":***@" + host
	}
	return db
}
