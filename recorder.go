// Package hyperiso is the Go API of the hyperiso isolation checker: record
// the transactions your own client code runs against a database (Recorder,
// safe for concurrent use), then check the history at an isolation level
// (Check), the way porcupine is used for linearizability in a go test. The
// command-line tool, the readers of other formats and the engine live in
// the packages below; this one keeps the surface small.
//
// A register key starts out as 0 and a list key (appended to, or read as a
// list) as the empty list, unless Recorder.Initial says otherwise.
package hyperiso

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// Recorder collects a history. Sessions run concurrently; each session's
// transactions run one after another.
type Recorder struct {
	mu       sync.Mutex
	start    time.Time
	sessions int64
	done     []*Txn // finished transactions, in completion order
	open     map[*Txn]bool
	initial  map[int64]int64
	nextID   int64
}

// NewRecorder starts an empty history; real time is measured from now.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), initial: map[int64]int64{}, open: map[*Txn]bool{}}
}

// Initial sets the value key holds before any transaction (default 0).
func (r *Recorder) Initial(key, value int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.initial[key] = value
}

// Session opens a client session: a connection whose transactions run one
// after another.
func (r *Recorder) Session() *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions++
	return &Session{r: r, id: r.sessions}
}

// Session is one client session. It is not safe for concurrent use: a
// session runs one transaction at a time.
type Session struct {
	r  *Recorder
	id int64
}

// Begin starts a transaction of the session; it is invoked now.
func (s *Session) Begin() *Txn {
	t := &Txn{s: s, start: time.Since(s.r.start).Nanoseconds()}
	s.r.mu.Lock()
	s.r.open[t] = true
	s.r.mu.Unlock()
	return t
}

type opKind uint8

const (
	opRead opKind = iota
	opWrite
	opAppend
	opReadList
)

type op struct {
	kind       opKind
	key, value int64
	list       []int64
	missing    bool // a read that found no value
}

// Txn is one transaction: record its operations as the database answered
// them, then exactly one of Commit, Abort or Unknown.
type Txn struct {
	s          *Session
	ops        []op
	start, end int64
	status     history.Status
	id         int64
}

// Read records that the transaction read value from key.
func (t *Txn) Read(key, value int64) { t.add(op{kind: opRead, key: key, value: value}) }

// ReadMissing records a read of key that found no value (SQL: no row).
func (t *Txn) ReadMissing(key int64) {
	t.add(op{kind: opRead, key: key, value: history.EmptyList, missing: true})
}

// Write records that the transaction wrote value to key.
func (t *Txn) Write(key, value int64) {
	t.add(op{kind: opWrite, key: key, value: value})
}

// Append records that the transaction appended value to the list at key.
func (t *Txn) Append(key, value int64) {
	t.add(op{kind: opAppend, key: key, value: value})
}

// ReadList records that the transaction read the whole list at key, oldest
// element first.
func (t *Txn) ReadList(key int64, list []int64) {
	t.add(op{kind: opReadList, key: key, list: append([]int64(nil), list...)})
}

// add records o under the recorder's lock, so that History may run while
// transactions do.
func (t *Txn) add(o op) {
	t.s.r.mu.Lock()
	t.ops = append(t.ops, o)
	t.s.r.mu.Unlock()
}

// Commit records that the database confirmed the commit.
func (t *Txn) Commit() { t.finish(history.Committed) }

// Abort records that the transaction did not commit (rolled back, or the
// commit was refused).
func (t *Txn) Abort() { t.finish(history.Aborted) }

// Unknown records that the commit's answer was lost (a timeout, a dropped
// connection): the transaction may or may not have committed, and the
// checkers consider both.
func (t *Txn) Unknown() { t.finish(history.Unknown) }

func (t *Txn) finish(s history.Status) {
	r := t.s.r
	end := time.Since(r.start).Nanoseconds()
	if s == history.Unknown {
		end = math.MaxInt64 // it may take effect at any later time
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.id != 0 {
		panic("hyperiso: a transaction finished twice")
	}
	t.status, t.end = s, end
	r.nextID++
	t.id = r.nextID
	delete(r.open, t)
	r.done = append(r.done, t)
}

// History returns what was recorded so far. A transaction that has not
// finished is in it as of unknown outcome, with the operations recorded so
// far: it may have taken effect (a client that died mid-commit).
func (r *Recorder) History() *history.History {
	r.mu.Lock()
	defer r.mu.Unlock()
	txns := slices.Clone(r.done)
	id := r.nextID
	var open []*Txn
	for t := range r.open {
		open = append(open, t)
	}
	slices.SortFunc(open, func(a, b *Txn) int { return cmp.Compare(a.start, b.start) })
	for _, t := range open {
		id++
		txns = append(txns, &Txn{s: t.s, ops: slices.Clone(t.ops), start: t.start, end: math.MaxInt64, status: history.Unknown, id: id})
	}
	b := history.NewBuilder("recorder", "go")
	b.SetInit(history.InitImplicit, 0)
	for k, v := range r.initial {
		b.InitWrite(k, v)
	}
	for _, t := range txns {
		for _, o := range t.ops {
			if o.kind == opAppend || o.kind == opReadList || o.missing {
				b.InitWrite(o.key, history.EmptyList)
			}
		}
	}
	for _, t := range txns {
		tx := b.Begin(b.Session(t.s.id), t.id, t.status, history.Pos{})
		b.SetInterval(tx, t.start, t.end)
		for _, o := range t.ops {
			switch o.kind {
			case opRead:
				b.Read(tx, o.key, o.value)
			case opWrite:
				b.Write(tx, o.key, o.value)
			case opAppend:
				b.Append(tx, o.key, o.value)
			case opReadList:
				b.ReadList(tx, o.key, o.list, history.EmptyList)
			}
		}
	}
	b.InitAllKeys(0)
	return b.Finish()
}

// Result is the outcome of Check: Verdict, the anomalies that show a
// violation, and the report every front end prints (check.Result).
type Result = check.Result

// Verdicts of Result.Verdict.
const (
	Satisfied = check.Satisfied
	Violated  = check.Violated
	Unknown   = check.Unknown
)

// Check decides whether h satisfies level, named as history.Levels names
// it (strict SER uses the real time the Recorder measured; mixed, each
// transaction's own level).
func Check(ctx context.Context, h *history.History, level string) (*Result, error) {
	l, ok := history.ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("hyperiso: unknown level %q (want one of %s)", level, history.LevelList(", ", nil))
	}
	return check.Check(ctx, h, l, check.Options{})
}
