package collect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// Options tune a run.
type Options struct {
	// Isolation is the level every transaction asks for (default
	// Serializable, unless Mix is set).
	Isolation Isolation
	// Mix, when it has entries, gives each transaction a level of its own
	// instead, drawn with the workload's seed (Mix.Session), and the
	// history records it on the transaction; Isolation must then be 0.
	Mix Mix
	// ByType, when it names types, gives each transaction of an
	// application workload whose type it names that type's level (and
	// records it); the others run at Isolation. Exclusive with Mix.
	ByType TypeLevels
	// OpTimeout bounds each operation, commit and abort included (default
	// 30s; negative: no bound). A commit that times out is unknown.
	OpTimeout time.Duration
	// Progress, if set, is called after each transaction, from the
	// session goroutines (so it must be safe for concurrent use).
	Progress func()
	// Reconnects bounds the attempts to reopen a session's connection
	// after it failed (default 5); a session that cannot reconnect stops
	// and Run reports it.
	Reconnects int
	// Meta is added to the history's metadata.
	Meta map[string]string
	// Source names the history (default "collect").
	Source string
	// KeepTable leaves the store's table in place for inspection.
	KeepTable bool
	// FailStreak stops the run (ErrStopped) when that many transactions
	// in a row, over all sessions, failed with the same error: the store
	// is unusable, and going on would only record empty aborted
	// transactions. Conflict aborts and client rollbacks neither extend
	// nor break a streak. Default 100; negative: never.
	FailStreak int
	// Faults are injected during the run; the store must implement
	// Faulter and accept each of them.
	Faults []Fault
	// Sink, if set, receives each transaction as it completes (in the
	// order they complete, with ids 1, 2, … in that order), and Run keeps
	// none of them: it returns no history. A Sink's error stops the run
	// at once (a *WriteError). Without a Sink, Run keeps the transactions
	// and returns the history, each session's transactions together.
	Sink Sink
	// Times records each transaction's real-time interval (nanoseconds
	// from the start of the workload: before Begin, after the commit's or
	// abort's answer; a transaction of unknown outcome never completes),
	// so that strict serializability can be checked.
	Times bool
	// Fences, when on, issues fence rounds (fence.go) on FenceKey, and
	// names the key in the history's metadata (fence_key), so that a
	// checker following the history can fold it (docs/online.md).
	Fences Fences
}

// Leveler is a store that says which isolation level (in the history's
// terms) a transaction run at iso declares; Run records it on every
// transaction.
type Leveler interface {
	Level(iso Isolation) history.Level
}

// maxReasons bounds the distinct reasons a Summary keeps.
const maxReasons = 32

// record is one attempted transaction as the recorder saw it.
type record struct {
	session int64
	status  history.Status
	// mix is the index of the transaction's level in Options.Mix (or
	// Options.ByType), -1 in a run at one level.
	mix int
	// start and end bound the transaction in time since the workload's
	// start (ns).
	start, end int64
	ops        []opRecord
	// fail identifies the error the transaction failed with, for
	// FailStreak ("" if it committed), and why says it in full; neutral
	// marks an outcome that says nothing about the store's health
	// (conflict abort, client rollback, in flight when the run stopped).
	fail, why string
	neutral   bool
	fence     bool // a fence round's transaction (counted apart)
}

type opRecord struct {
	kind     history.OpKind // OpRead, OpWrite, OpAppend or OpReadList
	src      history.OpSrc  // a row's insert or delete, or a range read (rows.go)
	key, val int64
	list     []int64 // OpReadList: the list read
	hi       int64   // a range read: the end of its range [key, hi)
	rows     []Row   // a range read: the rows returned
}

// Run sets up st for w, runs w's sessions concurrently at opt.Isolation
// (or each transaction at its level of opt.Mix), tears st down (Run owns
// st: it always calls Teardown) and returns the recorded history with a
// summary. The summary is returned whenever sessions ran, also together
// with an error (a session that had to stop, a failed teardown, a
// cancelled ctx, a sink that could not write); so is the history, unless
// opt.Sink took it.
func Run(ctx context.Context, st Store, w *workload.Workload, opt Options) (*history.History, *Summary, error) {
	mixed := len(opt.Mix.Entries) > 0
	if opt.Isolation == 0 && !mixed {
		opt.Isolation = Serializable
	}
	if opt.OpTimeout == 0 {
		opt.OpTimeout = 30 * time.Second
	}
	if opt.Reconnects <= 0 {
		opt.Reconnects = 5
	}
	if opt.Source == "" {
		opt.Source = "collect"
	}
	if opt.FailStreak == 0 {
		opt.FailStreak = 100
	}
	sum := &Summary{
		Store:     st.Describe(),
		Isolation: isolationName(opt),
		Workload:  w.Name() + " " + w.Describe(),
		Planned:   w.Sessions() * w.TxnsPerSession(),
		Reasons:   map[string]int{},
	}
	t0 := time.Now()
	teardown := func() error {
		tctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := st.Teardown(tctx, opt.KeepTable); err != nil {
			return &TeardownError{Store: st.Name(), Err: err}
		}
		return nil
	}
	if mixed && opt.Isolation != 0 {
		return nil, nil, errors.Join(fmt.Errorf("an isolation level (%s) and a mix (%s) are exclusive", opt.Isolation, opt.Mix), teardown())
	}
	if opt.Fences.On() && (w.App() != nil || w.Lists() || w.Rows()) {
		return nil, nil, errors.Join(fmt.Errorf("fences go with the generated register workloads, not %s", w.Name()), teardown())
	}
	if mixed && len(opt.ByType.Types) > 0 {
		return nil, nil, errors.Join(fmt.Errorf("a mix (%s) and levels by type (%s) are exclusive", opt.Mix, opt.ByType), teardown())
	}
	if err := supports(st, opt); err != nil {
		return nil, nil, errors.Join(err, teardown())
	}
	if mixed {
		sum.Mix = opt.Mix.String()
		sum.ByLevel = make([]LevelCount, len(opt.Mix.Entries))
		for i, e := range opt.Mix.Entries {
			sum.ByLevel[i].Level = e.Name
		}
	}
	if len(opt.ByType.Types) > 0 {
		sum.Mix = byTypeName(opt)
		for i, t := range opt.ByType.Types {
			sum.ByLevel = append(sum.ByLevel, LevelCount{Level: t + "=" + opt.ByType.Entries[i].Name})
		}
	}
	faulter, _ := st.(Faulter)
	if len(opt.Faults) > 0 && faulter == nil {
		return nil, nil, errors.Join(fmt.Errorf("%s: faults cannot be injected into this store", st.Name()), teardown())
	}
	for _, f := range opt.Faults {
		if err := faulter.CheckFault(f); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("fault %s: %w", f, err), teardown())
		}
	}
	if opt.KeepTable {
		if k, ok := st.(Keeper); ok {
			k.KeepTable()
		}
	}
	// What killed runs left behind goes before this run adds its own.
	if sw, ok := st.(Sweeper); ok {
		left, err := sw.Sweep(ctx, true)
		for _, l := range left {
			if l.Removed || l.Orphan {
				sum.Swept = append(sum.Swept, l.String())
			}
		}
		if err != nil {
			sum.Swept = append(sum.Swept, "looking for leftovers of killed runs: "+short(err))
		}
	}
	setup := st.Setup
	if app := w.App(); app != nil {
		setup = func(ctx context.Context, _ int64) error { return app.Setup(ctx, st) }
	} else if w.Lists() {
		ls, ok := st.(ListStore)
		if !ok {
			return nil, nil, errors.Join(&NoListsError{Store: st.Name(), Workload: w.Name()}, teardown())
		}
		setup = ls.SetupLists
	}
	if w.Rows() {
		rs, ok := st.(RowStore)
		if !ok {
			return nil, nil, errors.Join(&NoRowsError{Store: st.Name(), Workload: w.Name()}, teardown())
		}
		setup = func(ctx context.Context, _ int64) error { return rs.SetupRows(ctx, nil) }
	}
	if err := setup(ctx, w.Keys()); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("setting up %s: %w", st.Name(), err), teardown())
	}
	// Open every session before any starts, so that a store that cannot
	// take them all fails early and the memory store's schedule does not
	// depend on when goroutines start.
	conns := make([]Conn, w.Sessions())
	for i := range conns {
		c, err := st.Connect(ctx)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, nil, errors.Join(fmt.Errorf("opening session %d of %d: %w", i+1, len(conns), err), teardown())
		}
		conns[i] = c
	}
	sum.Setup = time.Since(t0)

	// The sessions run under a context of their own, so that the run can
	// stop itself (r.stop) as the caller can stop it.
	runCtx, halt := context.WithCancelCause(ctx)
	defer halt(nil)
	r := &runner{st: st, opt: opt, sum: sum, halt: halt, sessions: map[int64]bool{}}
	r.lv, _ = st.(Leveler)
	if opt.Fences.On() {
		r.fences = newFencer(opt.Fences, w.Sessions())
		defer context.AfterFunc(runCtx, r.fences.stop)()
	}
	r.nextSession.Store(int64(w.Sessions()))
	if opt.Sink != nil {
		fail := func(err error) {
			r.mu.Lock()
			r.stop(&WriteError{Err: err})
			r.mu.Unlock()
		}
		if err := opt.Sink.Start(meta(st, w, opt), fail); err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, nil, errors.Join(&WriteError{Err: err}, teardown())
		}
	}
	errs := make([]error, w.Sessions())
	start := time.Now()
	r.start = start
	waitFaults := func() {}
	faultCtx, endFaults := context.WithCancel(runCtx)
	defer endFaults()
	if len(opt.Faults) > 0 {
		waitFaults = r.injectFaults(faultCtx, faulter, start)
	}
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			errs[i] = r.session(runCtx, i, conns[i], w)
		})
	}
	wg.Wait()
	sum.Duration = time.Since(start)
	// A fault in progress ends early, but the store is restored before
	// teardown.
	endFaults()
	waitFaults()

	var h *history.History
	if opt.Sink == nil {
		h = r.build(w)
	}
	sum.Sessions = len(r.sessions)
	t1 := time.Now()
	err := errors.Join(errs...)
	var stopped error
	switch {
	case r.stopped != nil:
		stopped = r.stopped
	case ctx.Err() != nil && sum.Transactions < sum.Planned:
		stopped = context.Cause(ctx)
	}
	if stopped != nil {
		sum.Stopped = fmt.Sprintf("stopped after %d of %d transactions: %v", sum.Transactions, sum.Planned, stopped)
		err = errors.Join(stopped, err)
	}
	err = errors.Join(err, teardown())
	sum.Teardown = time.Since(t1)
	return h, sum, err
}

// isolationName names the run's level for the summary and the metadata.
func isolationName(opt Options) string {
	if len(opt.Mix.Entries) > 0 || len(opt.ByType.Types) > 0 {
		return history.Mixed.String()
	}
	return opt.Isolation.String()
}

// supports checks that st runs every level the run asks for, naming the
// mix's level it cannot.
func supports(st Store, opt Options) error {
	if len(opt.Mix.Entries) == 0 {
		if err := st.Supports(opt.Isolation); err != nil {
			return err
		}
	}
	for _, e := range opt.entries() {
		err := st.Supports(e.Iso)
		switch {
		case err == nil:
		case e.Level == history.LevelNone || e.Iso != Snapshot:
			return fmt.Errorf("mix level %s: %w", e.Name, err)
		default:
			return fmt.Errorf("mix level %s runs at the store's snapshot level, the weakest meant to give it: %w", e.Name, err)
		}
	}
	return nil
}

// runner holds what the session goroutines share.
type runner struct {
	st          Store
	start       time.Time
	opt         Options
	nextSession atomic.Int64
	halt        context.CancelCauseFunc

	lv     Leveler // st's, if it is one
	fences *fencer // nil without Options.Fences

	mu       sync.Mutex
	sum      *Summary
	records  []record       // without a Sink: every transaction, in completion order
	nextID   int64          // with a Sink: the last id given
	sessions map[int64]bool // the session ids recorded
	stopped  error          // why the run stopped itself, once it has
	streak   string         // the error the last transactions failed with
	streakN  int            // how many in a row
}

// stop ends the run: the sessions see their context cancelled. The first
// reason is the one reported. Called with r.mu held.
func (r *runner) stop(err error) {
	if r.stopped == nil {
		r.stopped = &stopError{err}
		r.halt(r.stopped)
	}
}

// finish records and counts a transaction and follows the failure streak.
// Called with r.mu held.
func (r *runner) finish(rec record) {
	if rec.fence {
		r.sum.Fences++
	} else {
		r.sum.add(rec)
	}
	r.sessions[rec.session] = true
	if r.opt.Sink == nil {
		r.records = append(r.records, rec)
	} else if r.stopped == nil || !errors.As(r.stopped, new(*WriteError)) {
		r.nextID++
		if err := r.opt.Sink.Txn(r.streamTxn(rec, r.nextID)); err != nil {
			r.stop(&WriteError{Err: err})
		}
	}
	if rec.neutral {
		return
	}
	if rec.fail != r.streak {
		r.streak, r.streakN = rec.fail, 0
	}
	if rec.fail == "" {
		return
	}
	r.streakN++
	if r.opt.FailStreak > 0 && r.streakN >= r.opt.FailStreak {
		r.stop(fmt.Errorf("the last %d transactions all failed with the same error, the last with: %s", r.streakN, rec.why))
	}
}

func (r *runner) count(f func(s *Summary)) {
	r.mu.Lock()
	f(r.sum)
	r.mu.Unlock()
}

func (r *runner) reason(kind string, detail string) {
	r.count(func(s *Summary) { s.addReason(kind + ": " + detail) })
}

// opCtx bounds one operation.
func (r *runner) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.opt.OpTimeout < 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, r.opt.OpTimeout)
}

// session runs session i's transactions on conn and returns its records.
func (r *runner) session(ctx context.Context, i int, conn Conn, w *workload.Workload) error {
	gen := w.Session(i)
	var draw *MixDraw
	if len(r.opt.Mix.Entries) > 0 {
		draw = r.opt.Mix.Session(w.Config().Seed, i)
	}
	sid := int64(i) + 1
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	// reconnect replaces a connection that failed.
	reconnect := func() error {
		conn.Close()
		conn = nil
		var last error
		for attempt := range r.opt.Reconnects {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cctx, cancel := r.opCtx(ctx)
			c, err := r.st.Connect(cctx)
			cancel()
			if err == nil {
				conn = c
				r.count(func(s *Summary) { s.Reconnects++ })
				return nil
			}
			last = err
			Sleep(ctx, min(100*time.Millisecond<<attempt, 2*time.Second))
		}
		return fmt.Errorf("session %d: cannot reconnect after %d attempts: %w", i+1, r.opt.Reconnects, last)
	}
	sf := r.sessionFences(ctx, i, conn)
	defer sf.end()
	for range w.TxnsPerSession() {
		if ctx.Err() != nil {
			return nil
		}
		if err := sf.before(ctx, conn, &sid, reconnect); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		plan := gen.Next()
		mix, iso := -1, r.opt.Isolation
		if draw != nil {
			mix = draw.Next()
			iso = r.opt.Mix.Entries[mix].Iso
		} else if t := r.opt.ByType.index(plan.Type); t >= 0 {
			mix, iso = t, r.opt.ByType.Entries[t].Iso
		}
		rec, broken := r.txn(ctx, conn, plan, iso)
		rec.mix = mix
		rec.session = sid
		r.count(func(*Summary) { r.finish(rec) })
		if r.opt.Progress != nil {
			r.opt.Progress()
		}
		if rec.status == history.Unknown {
			// The commit may still land after this session's next
			// transaction: continue as a new session.
			sid = r.nextSession.Add(1)
			sf.fresh = true
		}
		if ctx.Err() != nil {
			// Stopped: Run reports it once, for all sessions.
			return nil
		}
		if broken {
			if err := reconnect(); err != nil {
				if ctx.Err() != nil {
					return nil // stopped meanwhile: Run says so
				}
				return err
			}
		}
	}
	return nil
}

// txn runs one planned transaction; broken says the connection may be
// unusable.
func (r *runner) txn(ctx context.Context, conn Conn, plan workload.Txn, iso Isolation) (rec record, broken bool) {
	rec.ops = make([]opRecord, 0, len(plan.Ops))
	rec.start = time.Since(r.start).Nanoseconds()
	defer func() {
		rec.end = time.Since(r.start).Nanoseconds()
		if rec.status == history.Unknown {
			rec.end = math.MaxInt64
		}
	}()
	octx, cancel := r.opCtx(ctx)
	tx, err := conn.Begin(octx, iso)
	cancel()
	if err != nil {
		return rec, r.failed(ctx, &rec, "begin", err)
	}
	var opErr error
	if plan.Program != nil {
		opErr = r.program(ctx, tx, plan, &rec)
		if errors.Is(opErr, workload.ErrRollback) {
			opErr, plan.Rollback = nil, true
		}
	}
	for _, op := range plan.Ops {
		switch op.Kind {
		case workload.Pause:
			Sleep(ctx, op.Pause)
			continue
		case workload.Read:
			octx, cancel := r.opCtx(ctx)
			v, found, err := tx.Read(octx, op.Key)
			cancel()
			if err != nil {
				opErr = err
				break
			}
			if !found {
				v = history.EmptyList
			}
			rec.ops = append(rec.ops, opRecord{kind: history.OpRead, key: op.Key, val: v})
		case workload.Append, workload.ReadList:
			lt, ok := tx.(ListTx)
			if !ok {
				opErr = fmt.Errorf("%s: transactions have no lists", r.st.Name())
				break
			}
			octx, cancel := r.opCtx(ctx)
			var (
				l   []int64
				err error
			)
			if op.Kind == workload.Append {
				err = lt.Append(octx, op.Key, op.Value)
			} else {
				l, err = lt.ReadList(octx, op.Key)
			}
			cancel()
			if err != nil {
				opErr = err
				break
			}
			if op.Kind == workload.Append {
				rec.ops = append(rec.ops, opRecord{kind: history.OpAppend, key: op.Key, val: op.Value})
			} else {
				rec.ops = append(rec.ops, opRecord{kind: history.OpReadList, key: op.Key, list: l})
			}
		case workload.Write:
			octx, cancel := r.opCtx(ctx)
			err := tx.Write(octx, op.Key, op.Value)
			cancel()
			if err != nil {
				opErr = err
				break
			}
			rec.ops = append(rec.ops, opRecord{kind: history.OpWrite, key: op.Key, val: op.Value})
		case workload.Insert, workload.Delete, workload.Select, workload.Move, workload.ReadRow:
			opErr = r.rowOp(ctx, tx, op, &rec)
		}
		if opErr != nil {
			break
		}
	}
	octx, cancel = r.opCtx(ctx)
	defer cancel()
	switch {
	case opErr != nil:
		r.count(func(s *Summary) { s.FailedOps++ })
		broken = r.failed(ctx, &rec, "operation", opErr)
		if err := tx.Abort(octx); err != nil {
			broken = true
		}
	case plan.Rollback:
		rec.status = history.Aborted
		rec.neutral = true
		r.count(func(s *Summary) { s.ClientRollbacks++ })
		r.reason("aborted", "client rollback")
		if err := tx.Abort(octx); err != nil {
			// Logged, but the transaction is the client's own abort
			// whatever the rollback said.
			r.reason("aborted", "rollback: "+reasonText(err))
			broken = true
		}
	default:
		err := tx.Commit(octx)
		if err == nil {
			rec.status = history.Committed
			break
		}
		if r.definite(&rec, err) {
			break
		}
		// The commit may have taken effect: its answer was lost (a
		// connection error, a timeout, the run stopping meanwhile).
		rec.status = history.Unknown
		broken = true
		r.count(func(s *Summary) { s.InDoubt++ })
		if ctx.Err() != nil {
			rec.neutral = true
			r.reason("unknown", "commit in flight when the run stopped")
			break
		}
		r.reason("unknown", "commit: "+reasonText(err))
		rec.fail, rec.why = "commit: "+shape(err), "commit: "+short(err)
	}
	return rec, broken
}

// failed records a transaction that failed before its commit was sent and
// reports whether the connection may be broken (any error that is not a
// definite answer of the store).
func (r *runner) failed(ctx context.Context, rec *record, stage string, err error) (broken bool) {
	if r.definite(rec, err) {
		return false
	}
	if ctx.Err() != nil {
		// In flight when the run stopped: recorded as unknown, never
		// guessed, whatever the error the cancellation caused.
		rec.status = history.Unknown
		rec.neutral = true
		r.reason("unknown", "in flight when the run stopped")
		return true
	}
	// A transaction that failed before its commit was sent cannot have
	// committed.
	rec.status = history.Aborted
	r.reason("aborted", stage+": "+reasonText(err))
	rec.fail, rec.why = stage+": "+shape(err), stage+": "+short(err)
	return true
}

// definite records a transaction the store definitely aborted (err is an
// *AbortError or a *FatalError) and reports whether it was one; a
// *FatalError stops the run.
func (r *runner) definite(rec *record, err error) bool {
	var fe *FatalError
	if errors.As(err, &fe) {
		rec.status = history.Aborted
		rec.fail, rec.why = fe.Reason, fe.Reason
		r.count(func(s *Summary) {
			s.addReason("aborted: " + fe.Reason)
			r.stop(err)
		})
		return true
	}
	var ae *AbortError
	if !errors.As(err, &ae) {
		return false
	}
	rec.status = history.Aborted
	r.reason("aborted", ae.Reason)
	if ae.Conflict {
		rec.neutral = true
	} else {
		rec.fail, rec.why = "aborted: "+ae.Reason, short(err)
	}
	return true
}
