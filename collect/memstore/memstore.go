// Package memstore is hyperiso's embedded store: an in-memory multi-version
// key-value store with selectable isolation — serializable (optimistic:
// snapshot reads, validated at commit), snapshot isolation with
// first-committer-wins, read committed — and bugs to inject on purpose, so
// that tests get histories whose truth is known. Keys hold integers; for
// the append workload, lists (collect.ListStore): a list is versioned like
// an integer, and a commit installs, on each key it appended to, the
// latest list followed by its appends; for the predicate workload, rows
// that come and go (collect.RowStore, rows.go).
//
// Sessions are interleaved by a seeded scheduler: every operation waits
// until all open sessions are waiting, and then one of them, chosen by the
// seed, runs. Given the same seed and the same workload, a run is the same
// run, whatever the goroutine timing; and the schedule never depends on
// the values written, so a duplicate-value run and its unique-value twin
// execute identically.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hyperiso/hyperiso/collect"
)

// Bug is a deliberate defect.
type Bug uint8

const (
	// LostUpdate drops the write-conflict check: snapshot isolation
	// without first-committer-wins (serializable still validates reads).
	// An append then installs the list of its snapshot followed by its
	// own appends, losing those committed meanwhile.
	LostUpdate Bug = 1 << iota
	// FracturedReads makes commits non-atomic: a commit installs its
	// writes one key at a time, letting other sessions run in between,
	// so a snapshot may hold some of a transaction's writes but not all.
	FracturedReads
	// AbortedReads lets reads see the latest uncommitted write of another
	// transaction, which may abort later (dirty reads); a list read, its
	// appends after the list the read would see.
	AbortedReads
	// StaleReads serves reads from a snapshot up to MaxLag commits older
	// than the one the transaction was given (a lagging replica), while
	// conflict checks still use the transaction's own snapshot.
	StaleReads
)

var bugNames = []string{"lost-update", "fractured-reads", "aborted-reads", "stale-reads"}

// BugNames lists the bugs' names.
func BugNames() []string { return append([]string(nil), bugNames...) }

// ParseBugs parses a comma-separated list of bug names ("" for none).
func ParseBugs(s string) (Bug, error) {
	var b Bug
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" || f == "none" {
			continue
		}
		i := indexOf(bugNames, f)
		if i < 0 {
			return 0, fmt.Errorf("unknown bug %q (want %s)", f, strings.Join(bugNames, ", "))
		}
		b |= 1 << i
	}
	return b, nil
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func (b Bug) String() string {
	var parts []string
	for i, n := range bugNames {
		if b&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Options configure a Store.
type Options struct {
	// Seed drives the interleaving of sessions (and the stale-read lag).
	Seed int64
	// Bugs to inject.
	Bugs Bug
	// MaxLag bounds how many commits a stale read may lag (default 8).
	MaxLag int
}

// Store is the in-memory store. It implements collect.Store.
type Store struct {
	opt Options

	mu      sync.Mutex
	rng     *rand.Rand
	data    map[int64][]version // committed versions, oldest first
	clock   uint64              // timestamp of the latest commit
	dirty   map[int64][]dirtyWrite
	live    int
	waiting []*conn // sorted by id
	nextID  int
	nextTx  uint64
}

type version struct {
	ts   uint64
	val  int64
	list []int64 // a list key's list; never changed once installed
	gone bool    // a row deleted (rows.go)
}

type dirtyWrite struct {
	tx   uint64
	val  int64
	list []int64 // a list key: the transaction's appends
}

// New returns an empty store.
func New(opt Options) *Store {
	if opt.MaxLag <= 0 {
		opt.MaxLag = 8
	}
	return &Store{
		opt:   opt,
		rng:   rand.New(rand.NewPCG(uint64(opt.Seed), 0x6d656d73746f7265)),
		data:  map[int64][]version{},
		dirty: map[int64][]dirtyWrite{},
	}
}

// Name implements collect.Store.
func (s *Store) Name() string { return "memory" }

// Describe implements collect.Store.
func (s *Store) Describe() string {
	if s.opt.Bugs != 0 {
		return "memory (bugs: " + s.opt.Bugs.String() + ")"
	}
	return "memory"
}

// Supports implements collect.Store: serializable, snapshot (and
// repeatable-read, its synonym here) and read-committed.
func (s *Store) Supports(iso collect.Isolation) error {
	switch iso {
	case collect.Serializable, collect.Snapshot, collect.RepeatableRead, collect.ReadCommitted:
		return nil
	}
	return fmt.Errorf("memory store: unsupported isolation %s", iso)
}

// Setup implements collect.Store: keys 1…keys hold 0.
func (s *Store) Setup(_ context.Context, keys int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := int64(1); k <= keys; k++ {
		s.data[k] = []version{{}}
	}
	return nil
}

// SetupLists implements collect.ListStore: keys 1…keys hold the empty
// list.
func (s *Store) SetupLists(ctx context.Context, keys int64) error { return s.Setup(ctx, keys) }

// Teardown implements collect.Store.
func (s *Store) Teardown(context.Context, bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = map[int64][]version{}
	s.dirty = map[int64][]dirtyWrite{}
	s.clock = 0
	return nil
}

// Connect implements collect.Store. Every session should be connected
// before any runs, so that the schedule is reproducible.
func (s *Store) Connect(context.Context) (collect.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.live++
	return &conn{s: s, id: s.nextID, turn: make(chan struct{}, 1)}, nil
}

// conn is one session; it waits for its turn before every operation.
type conn struct {
	s      *Store
	id     int
	turn   chan struct{}
	closed bool
}

// acquire waits until the scheduler picks c and returns with s.mu held.
func (c *conn) acquire() {
	s := c.s
	s.mu.Lock()
	i := sort.Search(len(s.waiting), func(i int) bool { return s.waiting[i].id >= c.id })
	s.waiting = append(s.waiting, nil)
	copy(s.waiting[i+1:], s.waiting[i:])
	s.waiting[i] = c
	s.grant()
	s.mu.Unlock()
	<-c.turn
	s.mu.Lock()
}

// grant picks the next session once every open session waits. Called
// with s.mu held.
func (s *Store) grant() {
	if s.live == 0 || len(s.waiting) < s.live {
		return
	}
	i := s.rng.IntN(len(s.waiting))
	c := s.waiting[i]
	s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
	c.turn <- struct{}{}
}

// Close implements collect.Conn.
func (c *conn) Close() error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.closed {
		c.closed = true
		s.live--
		s.grant()
	}
	return nil
}

// Away implements collect.Awayer: the scheduler does not wait for c
// while f runs (a fence round's barrier, collect --fence-every), which
// makes the schedule depend on goroutine timing.
func (c *conn) Away(f func()) {
	s := c.s
	s.mu.Lock()
	s.live--
	s.grant()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.live++
		s.mu.Unlock()
	}()
	f()
}

var errDone = errors.New("memory store: transaction already ended")

// Begin implements collect.Conn.
func (c *conn) Begin(_ context.Context, iso collect.Isolation) (collect.Tx, error) {
	if err := c.s.Supports(iso); err != nil {
		return nil, err
	}
	c.acquire()
	defer c.s.mu.Unlock()
	s := c.s
	if iso == collect.RepeatableRead {
		iso = collect.Snapshot
	}
	s.nextTx++
	t := &tx{c: c, iso: iso, id: s.nextTx, snap: s.clock, readSnap: s.clock, writes: map[int64]int64{}, gone: map[int64]bool{}, appends: map[int64][]int64{}, reads: map[int64]bool{}}
	if s.opt.Bugs&StaleReads != 0 {
		t.readSnap -= min(t.readSnap, uint64(s.rng.IntN(s.opt.MaxLag+1)))
	}
	return t, nil
}

type tx struct {
	c   *conn
	iso collect.Isolation
	id  uint64
	// snap is the snapshot the store believes the transaction has;
	// readSnap is the one reads use (older under StaleReads).
	snap, readSnap uint64
	writes         map[int64]int64
	gone           map[int64]bool    // rows deleted: writes of absence (rows.go)
	appends        map[int64][]int64 // list keys appended to: the appends
	order          []int64           // written keys, first write first
	reads          map[int64]bool
	done           bool
}

// at returns the value of key at timestamp ts, if it has one (a row may
// be absent).
func (s *Store) at(key int64, ts uint64) (int64, bool) {
	v, ok := s.versionAt(key, ts)
	return v.val, ok && !v.gone
}

// versionAt returns the version of key at timestamp ts.
func (s *Store) versionAt(key int64, ts uint64) (version, bool) {
	vs := s.data[key]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].ts <= ts {
			return vs[i], true
		}
	}
	return version{}, false
}

// Read implements collect.Tx.
func (t *tx) Read(_ context.Context, key int64) (int64, bool, error) {
	t.c.acquire()
	s := t.c.s
	defer s.mu.Unlock()
	if t.done {
		return 0, false, errDone
	}
	if v, ok := t.writes[key]; ok {
		return v, !t.gone[key], nil
	}
	t.reads[key] = true
	if s.opt.Bugs&AbortedReads != 0 {
		if ds := s.dirty[key]; len(ds) > 0 {
			for i := len(ds) - 1; i >= 0; i-- {
				if ds[i].tx != t.id {
					return ds[i].val, true, nil
				}
			}
		}
	}
	v, ok := s.at(key, t.readTS())
	return v, ok, nil
}

// readTS is the timestamp a read of t reads at: its snapshot's, or at
// read committed the latest commit's (older under StaleReads). Called
// with s.mu held.
func (t *tx) readTS() uint64 {
	s := t.c.s
	ts := t.readSnap
	if t.iso == collect.ReadCommitted {
		ts = s.clock
		if s.opt.Bugs&StaleReads != 0 {
			ts -= min(ts, uint64(s.rng.IntN(s.opt.MaxLag+1)))
		}
	}
	return ts
}

// ReadList implements collect.ListTx: the list at the read's timestamp
// (readTS), or under AbortedReads with another transaction's uncommitted
// appends after it, followed by t's own appends.
func (t *tx) ReadList(_ context.Context, key int64) ([]int64, error) {
	t.c.acquire()
	s := t.c.s
	defer s.mu.Unlock()
	if t.done {
		return nil, errDone
	}
	t.reads[key] = true
	v, _ := s.versionAt(key, t.readTS())
	var dirty []int64
	if s.opt.Bugs&AbortedReads != 0 {
		ds := s.dirty[key]
		for i := len(ds) - 1; i >= 0; i-- {
			if ds[i].tx != t.id {
				dirty = ds[i].list
				break
			}
		}
	}
	return slices.Concat([]int64{}, v.list, dirty, t.appends[key]), nil
}

// Append implements collect.ListTx.
func (t *tx) Append(_ context.Context, key, val int64) error {
	t.c.acquire()
	s := t.c.s
	defer s.mu.Unlock()
	if t.done {
		return errDone
	}
	if _, ok := t.appends[key]; !ok {
		t.order = append(t.order, key)
	}
	t.appends[key] = append(t.appends[key], val)
	if s.opt.Bugs&AbortedReads != 0 {
		t.dirty(key, dirtyWrite{tx: t.id, list: slices.Clone(t.appends[key])})
	}
	return nil
}

// dirty makes d t's uncommitted write of key. Called with s.mu held.
func (t *tx) dirty(key int64, d dirtyWrite) {
	s := t.c.s
	ds := s.dirty[key]
	for i := range ds {
		if ds[i].tx == t.id {
			ds = append(ds[:i], ds[i+1:]...)
			break
		}
	}
	s.dirty[key] = append(ds, d)
}

// Write implements collect.Tx.
func (t *tx) Write(_ context.Context, key, val int64) error {
	t.c.acquire()
	s := t.c.s
	defer s.mu.Unlock()
	if t.done {
		return errDone
	}
	t.put(key, val, false)
	return nil
}

// put buffers t's write of val to key, or (gone) of the row's absence.
// Called with s.mu held.
func (t *tx) put(key, val int64, gone bool) {
	if _, ok := t.writes[key]; !ok {
		t.order = append(t.order, key)
	}
	t.writes[key] = val
	t.gone[key] = gone
	// A dirty read of a deleted row would need absence in dirtyWrite:
	// the bug leaves deletes out.
	if t.c.s.opt.Bugs&AbortedReads != 0 && !gone {
		t.dirty(key, dirtyWrite{tx: t.id, val: val})
	}
}

// latest returns the timestamp of key's newest committed version.
func (s *Store) latest(key int64) uint64 {
	vs := s.data[key]
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1].ts
}

// Commit implements collect.Tx.
func (t *tx) Commit(context.Context) error {
	t.c.acquire()
	s := t.c.s
	defer s.mu.Unlock()
	if t.done {
		return errDone
	}
	t.done = true
	defer t.clean()
	if t.iso != collect.ReadCommitted && s.opt.Bugs&LostUpdate == 0 {
		for _, k := range t.order {
			if s.latest(k) > t.snap {
				return collect.Conflict("write conflict (first committer wins)", nil)
			}
		}
	}
	// A serializable update transaction commits only if nothing it read
	// changed since its snapshot: it then behaves as if it ran at its
	// commit. Read-only ones are serializable at their snapshot.
	if t.iso == collect.Serializable && len(t.order) > 0 {
		for k := range t.reads {
			if s.latest(k) > t.snap {
				return collect.Conflict("read validation failed", nil)
			}
		}
	}
	for i, k := range t.order {
		if i > 0 && s.opt.Bugs&FracturedReads != 0 {
			// Let other sessions run between two keys of one commit.
			s.mu.Unlock()
			t.c.acquire()
		}
		s.clock++
		if l, ok := t.appends[k]; ok {
			// The latest list, which first-committer-wins makes the
			// snapshot's; without the check (LostUpdate), the snapshot's
			// list all the same, as a store that appended to its own
			// copy would. Read committed appends to the latest.
			base, _ := s.versionAt(k, s.clock)
			if s.opt.Bugs&LostUpdate != 0 && t.iso != collect.ReadCommitted {
				base, _ = s.versionAt(k, t.snap)
			}
			s.data[k] = append(s.data[k], version{ts: s.clock, list: slices.Concat(base.list, l)})
			continue
		}
		s.data[k] = append(s.data[k], version{ts: s.clock, val: t.writes[k], gone: t.gone[k]})
	}
	return nil
}

// Abort implements collect.Tx.
func (t *tx) Abort(context.Context) error {
	t.c.acquire()
	defer t.c.s.mu.Unlock()
	if !t.done {
		t.done = true
		t.clean()
	}
	return nil
}

// clean drops t's dirty writes. Called with s.mu held.
func (t *tx) clean() {
	s := t.c.s
	if s.opt.Bugs&AbortedReads == 0 {
		return
	}
	for _, k := range t.order {
		ds := s.dirty[k]
		for i := range ds {
			if ds[i].tx == t.id {
				s.dirty[k] = append(ds[:i], ds[i+1:]...)
				break
			}
		}
	}
}
