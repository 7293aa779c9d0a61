// Package collect records histories from real stores. It defines the small
// interface a store implements (connect a session; begin a transaction at
// an isolation level; read a key; write a key; commit; abort; for the
// append workload, append to a list and read a whole list; for the
// predicate workload, insert, delete and move rows and read key ranges,
// rows.go) and Run, the
// recorder: one goroutine per client session runs a workload's
// transactions, logs every operation with its result and every
// transaction's outcome, and assembles a history ready for jsonl.Write.
// Options.Mix gives each transaction a level of its own, drawn from the
// workload's seed, and the history records the level each one asked for
// (mix.go).
//
// Outcomes: a transaction whose commit succeeded is committed; one that
// failed before commit, that the client rolled back, or whose commit the
// store refused definitely (an *AbortError: serialization failure, deadlock)
// is aborted; one whose commit failed otherwise (lost connection, timeout)
// is unknown, and its session continues under a fresh session id, since
// the commit may still take effect after the session's next transaction.
// A transaction still in flight when the run stops (ctx cancelled, or the
// run stopping itself) is unknown unless the store answered it definitely.
// Nothing is dropped: every attempted transaction is in the history, and
// the Summary counts each outcome and each reason.
//
// A run stops itself, with an error wrapping ErrStopped, when the store
// reports a *FatalError (its table was dropped) or when Options.FailStreak
// transactions in a row failed with the same error.
//
// The stores live in sub-packages: memstore (embedded, with selectable
// isolation and injectable bugs), postgres and mariadb; stores.Open picks
// one from a --db string. The workloads live in collect/workload, the
// application workloads (whose transactions are programs that issue SQL,
// SQLStore and SQLTx) in collect/apps, with levels by transaction type
// (TypeLevels, app.go).
package collect

import (
	"context"
	cryptorand "crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/history"
)

// Isolation is the isolation level a transaction asks the store for.
type Isolation uint8

const (
	// Serializable asks for SERIALIZABLE.
	Serializable Isolation = iota + 1
	// RepeatableRead asks for the store's REPEATABLE READ (snapshot
	// isolation in PostgreSQL, something weaker in InnoDB).
	RepeatableRead
	// Snapshot asks for snapshot isolation: PostgreSQL's REPEATABLE READ,
	// the memory store's SI.
	Snapshot
	// ReadCommitted asks for READ COMMITTED.
	ReadCommitted
	// ReadUncommitted asks for READ UNCOMMITTED, which only MariaDB and
	// MySQL run as a level of its own (Hermitage's matrix has it).
	ReadUncommitted
)

// sqlLevel is the SQL level that runs each of hyperiso's levels that one
// names.
var sqlLevel = map[history.Level]Isolation{history.SER: Serializable, history.SI: Snapshot, history.RC: ReadCommitted}

// IsolationNames lists the accepted spellings' canonical forms.
var IsolationNames = []string{"serializable", "repeatable-read", "snapshot", "read-committed", "read-uncommitted"}

func (i Isolation) String() string {
	if i >= Serializable && int(i) <= len(IsolationNames) {
		return IsolationNames[i-1]
	}
	return fmt.Sprintf("Isolation(%d)", i)
}

// ParseIsolation accepts the canonical names, the short names rr and ru,
// and the spellings of hyperiso's levels that name an SQL level
// (history.ParseLevel: ser, si, rc and their aliases); underscores or
// spaces for hyphens, any case.
func ParseIsolation(s string) (Isolation, error) {
	n := strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(strings.TrimSpace(s)))
	for i, name := range IsolationNames {
		if n == name {
			return Isolation(i + 1), nil
		}
	}
	for i, short := range sqlOnly {
		if n == short {
			return i, nil
		}
	}
	if l, ok := history.ParseLevel(n); ok {
		if i, ok := sqlLevel[l]; ok {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown isolation level %q (want one of %s)", s, strings.Join(IsolationNames, ", "))
}

// Store is a database under test. Setup, Connect and Teardown are called
// by one goroutine; each Conn is used by one session goroutine at a time.
type Store interface {
	// Name is the store's kind ("memory", "postgres", "mariadb").
	Name() string
	// Describe names the server and its version for the history's
	// metadata; it never contains credentials.
	Describe() string
	// Supports reports, with a reason, an isolation level the store does
	// not offer.
	Supports(iso Isolation) error
	// Setup creates the store's table and seeds keys 1…keys with value 0.
	Setup(ctx context.Context, keys int64) error
	// Connect opens one client session.
	Connect(ctx context.Context) (Conn, error)
	// Teardown drops what Setup created, unless keep, and releases the
	// store's connections. It is called once, last: also after a failed
	// Setup (so it must tolerate a table that does not exist).
	Teardown(ctx context.Context, keep bool) error
}

// Conn is one client connection.
type Conn interface {
	// Begin starts a transaction at iso.
	Begin(ctx context.Context, iso Isolation) (Tx, error)
	// Close ends the connection.
	Close() error
}

// Tx is one transaction. After an error from Read or Write the recorder
// calls Abort; after Commit or Abort the Tx is not used again.
type Tx interface {
	// Read returns the value of key, or found == false if it has none.
	Read(ctx context.Context, key int64) (val int64, found bool, err error)
	// Write sets key to val.
	Write(ctx context.Context, key, val int64) error
	// Commit commits. An error that is (or wraps) an *AbortError means
	// the transaction definitely did not commit; any other error leaves
	// the outcome unknown.
	Commit(ctx context.Context) error
	// Abort rolls back.
	Abort(ctx context.Context) error
}

// ListStore is a store that also holds lists, for the append workload
// (Jepsen's list-append): its transactions are ListTxs. A store that is no
// ListStore refuses that workload.
type ListStore interface {
	Store
	// SetupLists creates the store's table, as Setup does, with keys
	// 1…keys holding the empty list instead of 0. Run calls it instead of
	// Setup for a workload of lists.
	SetupLists(ctx context.Context, keys int64) error
}

// ListTx is the list part of a ListStore's transactions. After an error
// the recorder calls Abort, as after Read or Write.
type ListTx interface {
	// Append appends val to the list at key, in one statement (the
	// store reads nothing back).
	Append(ctx context.Context, key, val int64) error
	// ReadList returns the whole list at key, oldest element first
	// (empty, not an error, for the empty list).
	ReadList(ctx context.Context, key int64) ([]int64, error)
}

// NoListsError is the refusal of a store that is no ListStore to run a
// workload of lists.
type NoListsError struct {
	Store, Workload string
}

func (e *NoListsError) Error() string {
	return fmt.Sprintf("the %s store cannot run the %s workload: it has no lists (appends and whole-list reads)", e.Store, e.Workload)
}

// AbortError says that the store definitely aborted the transaction (a
// serialization failure, a deadlock, a write conflict), for a reason that
// the summary counts.
type AbortError struct {
	// Reason is short and stable, e.g. "serialization failure (40001)".
	Reason string
	// Err is the driver's error, if any.
	Err error
	// Conflict marks an abort by concurrency control (serialization
	// failure, deadlock, lock wait timeout): the store doing its job, so
	// it never counts towards Options.FailStreak however often it comes.
	Conflict bool
}

func (e *AbortError) Error() string {
	if e.Err == nil {
		return "aborted: " + e.Reason
	}
	return "aborted: " + e.Reason + ": " + e.Err.Error()
}

func (e *AbortError) Unwrap() error { return e.Err }

// Aborted returns an *AbortError.
func Aborted(reason string, err error) error { return &AbortError{Reason: reason, Err: err} }

// Conflict returns an *AbortError marked as a concurrency-control abort.
func Conflict(reason string, err error) error {
	return &AbortError{Reason: reason, Err: err, Conflict: true}
}

// FatalError says that the store refused a statement in a way no later
// transaction can avoid (the run's table is gone): the transaction is
// aborted and Run stops.
type FatalError struct {
	// Reason says what happened, e.g. "table hyperiso_… no longer exists (42P01)".
	Reason string
	// Err is the driver's error, if any.
	Err error
}

// Error is the reason alone: it says it all, and the driver's words are
// one Unwrap away.
func (e *FatalError) Error() string { return e.Reason }

func (e *FatalError) Unwrap() error { return e.Err }

// Fatal returns a *FatalError.
func Fatal(reason string, err error) error { return &FatalError{Reason: reason, Err: err} }

// ErrStopped is wrapped by the error of a run that stopped itself before
// its planned transactions: the store returned a *FatalError, or too many
// transactions in a row failed with the same error (Options.FailStreak).
var ErrStopped = errors.New("run stopped")

// stopError is why a run stopped itself; it matches ErrStopped.
type stopError struct{ err error }

func (e *stopError) Error() string        { return ErrStopped.Error() + ": " + e.err.Error() }
func (e *stopError) Unwrap() error        { return e.err }
func (e *stopError) Is(target error) bool { return target == ErrStopped }

// TeardownError is a failure of Store.Teardown: the history is still what
// the sessions recorded, but the run's table may remain.
type TeardownError struct {
	Store string
	Err   error
}

func (e *TeardownError) Error() string { return "tearing down " + e.Store + ": " + e.Err.Error() }

func (e *TeardownError) Unwrap() error { return e.Err }

// IsAborted reports whether err says the transaction definitely aborted,
// and why.
func IsAborted(err error) (reason string, ok bool) {
	var ae *AbortError
	if errors.As(err, &ae) {
		return ae.Reason, true
	}
	return "", false
}

// TableName returns a fresh table name for one run of a SQL store,
// "hyperiso_PID_HOST_TIME_RANDOM" (PID this process, HOST a hash of the
// host's name), so that concurrent runs against one database never share
// a table and a later run can tell a table whose run was killed (Sweeper).
func TableName() string { return TableNameOf(os.Getpid()) }

// TableNameOf is TableName for a run of process pid on this host.
func TableNameOf(pid int) string {
	return fmt.Sprintf("hyperiso_%d_%s_%s_%s", pid, hostTag(), time.Now().UTC().Format("20060102_150405"), randomHex())
}

// KeptTableName returns a fresh table name for a run that keeps its table
// (--keep-table): one that no sweep removes.
func KeptTableName() string {
	return fmt.Sprintf("hyperiso_kept_%s_%s", time.Now().UTC().Format("20060102_150405"), randomHex())
}

func randomHex() string {
	var b [4]byte
	_, _ = cryptorand.Read(b[:])
	return fmt.Sprintf("%x", b)
}
