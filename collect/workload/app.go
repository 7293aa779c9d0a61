package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// KV is what a Program sees of the store's transaction at least: reading
// and writing integer keys. A SQL store's transaction offers more
// (collect.SQLTx), which a Program finds by type assertion.
type KV interface {
	Read(ctx context.Context, key int64) (val int64, found bool, err error)
	Write(ctx context.Context, key, val int64) error
}

// Program is one transaction of an application workload: code whose
// statements depend on what it reads. Run executes it on tx (the store's
// transaction) and reports every read and write the history must hold
// through rec, in program order (Op.Kind Read or Write).
type Program interface {
	Run(ctx context.Context, tx KV, rec func(Op)) error
}

// ErrRollback is returned by a Program that rolls its transaction back on
// purpose (TPC-C's new-order with an unused item number): the recorder
// aborts it as a client rollback.
var ErrRollback = errors.New("the client rolls the transaction back")

// App is an application workload (package collect/apps): its own tables
// and data, and sessions that hand out Programs.
type App interface {
	// Setup creates and loads the application's data in store (a
	// collect.Store) before any session connects.
	Setup(ctx context.Context, store any) error
	// Session returns the generator of session i's transactions.
	Session(i int) func() Txn
	// Types lists its transaction types.
	Types() []string
	// Describe renders its parameters as "name=value" pairs.
	Describe() string
}

// NewApp wraps an application workload: c gives its sessions,
// transactions per session and seed; app the rest.
func NewApp(name string, c Config, app App) (*Workload, error) {
	switch {
	case c.Sessions < 1:
		return nil, fmt.Errorf("workload %s: sessions must be at least 1 (got %d)", name, c.Sessions)
	case c.Txns < 0:
		return nil, fmt.Errorf("workload %s: transactions per session must not be negative (got %d)", name, c.Txns)
	case int64(c.Sessions) >= (1<<63-1)/UniqueBase-1:
		return nil, fmt.Errorf("workload %s: too many sessions (%d)", name, c.Sessions)
	}
	return &Workload{name: name, cfg: c, app: app, dupKey: func(int64) bool { return false }}, nil
}

// App returns the application workload, nil for a generated one.
func (w *Workload) App() App { return w.app }

// describeApp is Describe for an application workload.
func (w *Workload) describeApp() string {
	return "sessions=" + strconv.Itoa(w.cfg.Sessions) + " txns=" + strconv.Itoa(w.cfg.Txns) + " " +
		w.app.Describe() + " seed=" + strconv.FormatInt(w.cfg.Seed, 10)
}
