package hermitage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/history"
)

// Options tune the runs.
type Options struct {
	// StepTimeout bounds each statement and each wait for the steps in
	// flight to finish or wait on a lock (default 15s, longer than the
	// lock timeout the connections are given).
	StepTimeout time.Duration
}

func (o Options) stepTimeout() time.Duration {
	if o.StepTimeout <= 0 {
		return 15 * time.Second
	}
	return o.StepTimeout
}

// Outcome is how one transaction ended.
type Outcome struct {
	Status history.Status
	// Reason says why it aborted or is unknown ("client rollback",
	// "serialization failure (40001)", …).
	Reason string
	// Skipped counts its steps not run because it had already ended.
	Skipped int
}

func (o Outcome) String() string {
	if o.Reason == "" {
		return o.Status.String()
	}
	return o.Status.String() + " (" + o.Reason + ")"
}

// Run is one scenario run at one level, as recorded.
type Run struct {
	Target   string
	Level    string
	Scenario string
	// History has T1…Tn as sessions 1…n and the observer as session n+1.
	History *history.History
	// Outcomes are T1…Tn's, then the observer's.
	Outcomes []Outcome
	// Waited lists the steps that waited on a lock when issued.
	Waited []string
}

// Aborts describes the transactions that did not commit, or "".
func (r *Run) Aborts() string {
	var parts []string
	for i, o := range r.Outcomes {
		if o.Status != history.Committed {
			parts = append(parts, fmt.Sprintf("%s %s", r.txnName(i), o))
		}
	}
	return strings.Join(parts, "; ")
}

func (r *Run) txnName(i int) string {
	if i == len(r.Outcomes)-1 {
		return "observer"
	}
	return fmt.Sprintf("T%d", i+1)
}

// opRecord is one recorded operation: a read or write of a key, or a
// row's insert, delete or predicate read (src).
type opRecord struct {
	write    bool
	src      history.OpSrc
	key, val int64
	hi       int64         // a predicate read: its range is [key, hi)
	rows     []collect.Row // a predicate read: the rows returned
}

// txn is one transaction's state; only the goroutine running its current
// step touches it.
type txn struct {
	tx      collect.Tx
	ops     []opRecord
	out     Outcome
	ended   bool
	broken  error // an error that is neither an abort nor a commit answer
	level   history.Level
	session int
}

// driver runs one scenario: each step in a goroutine of its own, chained
// after the previous step of the same transaction.
type driver struct {
	tg      *Target
	opt     Options
	rows    bool // a predicate scenario: keys are rows that may be absent
	probe   waitCounter
	txns    []*txn
	last    []chan struct{} // per transaction, the done channel of its last step
	changed atomic.Int64    // UnixNano of the last issue, start or finish of a step
	wg      sync.WaitGroup
}

// Run runs sc at lv: it creates a table of its own with keys 1 and 2 at
// 0, opens one connection per transaction and one for the observer,
// drives the steps, and drops the table.
func (tg *Target) Run(ctx context.Context, sc Scenario, lv Level, opt Options) (run *Run, err error) {
	st, table, err := tg.store(ctx, lv)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", sc.Name, lv.Name, err)
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if terr := st.Teardown(tctx, false); terr != nil && err == nil {
			err = fmt.Errorf("%s at %s: dropping table %s: %w", sc.Name, lv.Name, table, terr)
		}
	}()
	wrap := func(err error) error { return fmt.Errorf("%s at %s: %w", sc.Name, lv.Name, err) }
	if err := st.Supports(lv.Iso); err != nil {
		return nil, wrap(err)
	}
	if sc.Rows {
		rs, ok := st.(collect.RowStore)
		if !ok {
			return nil, wrap(fmt.Errorf("%s holds no rows", st.Name()))
		}
		err = rs.SetupRows(ctx, InitialRows)
	} else {
		err = st.Setup(ctx, int64(len(Keys)))
	}
	if err != nil {
		return nil, wrap(err)
	}
	d := &driver{tg: tg, opt: opt, rows: sc.Rows}
	if d.probe, err = tg.probe(ctx, table); err != nil {
		return nil, wrap(err)
	}
	defer d.probe.close()
	conns := make([]collect.Conn, sc.Txns+1)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close() // rolls back whatever a failed run left open
			}
		}
	}()
	for i := range conns {
		if conns[i], err = st.Connect(ctx); err != nil {
			return nil, wrap(err)
		}
	}
	d.txns = make([]*txn, sc.Txns+1)
	d.last = make([]chan struct{}, sc.Txns)
	for i := range sc.Txns {
		t := &txn{level: lv.Declared, session: i + 1}
		sctx, cancel := d.stepCtx(ctx)
		t.tx, err = conns[i].Begin(sctx, lv.Iso)
		cancel()
		if err != nil {
			return nil, wrap(fmt.Errorf("beginning T%d: %w", i+1, err))
		}
		d.txns[i] = t
	}
	var waited []string
	for _, s := range sc.Steps {
		if s.T < 1 || s.T > sc.Txns {
			return nil, wrap(fmt.Errorf("step %s names no transaction of the scenario", s))
		}
		d.issue(ctx, s)
		if err := d.settle(ctx); err != nil {
			d.wg.Wait()
			return nil, wrap(fmt.Errorf("after %s: %w", s, err))
		}
		if !isDone(d.last[s.T-1]) {
			waited = append(waited, s.String())
		}
	}
	d.wg.Wait()
	for i, t := range d.txns[:sc.Txns] {
		if t.broken != nil {
			return nil, wrap(fmt.Errorf("transaction T%d: %w", i+1, t.broken))
		}
		if !t.ended {
			return nil, wrap(fmt.Errorf("transaction T%d neither commits nor rolls back", i+1))
		}
	}
	// The observer reads every key once the others have ended.
	obs := &txn{level: lv.Declared, session: sc.Txns + 1}
	d.txns[sc.Txns] = obs
	sctx, cancel := d.stepCtx(ctx)
	defer cancel()
	if obs.tx, err = conns[sc.Txns].Begin(sctx, lv.Iso); err != nil {
		return nil, wrap(fmt.Errorf("observer begin: %w", err))
	}
	if sc.Rows {
		d.step(ctx, obs, Step{Action: Select, Key: RowKeys[0], Value: RowKeys[1]})
	} else {
		for _, k := range Keys {
			d.step(ctx, obs, Step{Action: Read, Key: k})
		}
	}
	d.step(ctx, obs, Step{Action: Commit})
	if obs.broken != nil || obs.out.Status != history.Committed {
		return nil, wrap(fmt.Errorf("observer: %v %v", obs.out, obs.broken))
	}
	return &Run{Target: tg.Kind, Level: lv.Name, Scenario: sc.Name, History: d.build(tg, sc, lv),
		Outcomes: d.outcomes(), Waited: waited}, nil
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (d *driver) stepCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.opt.stepTimeout())
}

func (d *driver) touch() { d.changed.Store(time.Now().UnixNano()) }

// issue starts s after the previous step of its transaction.
func (d *driver) issue(ctx context.Context, s Step) {
	prev := d.last[s.T-1]
	done := make(chan struct{})
	d.last[s.T-1] = done
	t := d.txns[s.T-1]
	d.touch()
	d.wg.Go(func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		d.touch()
		d.step(ctx, t, s)
		d.touch()
	})
}

// busy counts the transactions with a step issued and not finished.
func (d *driver) busy() int {
	n := 0
	for _, ch := range d.last {
		if ch != nil && !isDone(ch) {
			n++
		}
	}
	return n
}

// settle returns once every transaction with a step in flight waits on a
// lock (a transaction runs one statement at a time): the server shows as
// many lock waits on the table, on a view sampled at least tg.stale after
// the last step was issued, started or finished, and nothing changed
// meanwhile.
func (d *driver) settle(ctx context.Context) error {
	deadline := time.Now().Add(d.opt.stepTimeout())
	for {
		n := d.busy()
		if n == 0 {
			return nil
		}
		since := d.changed.Load()
		if time.Since(time.Unix(0, since)) >= d.tg.stale {
			pctx, cancel := d.stepCtx(ctx)
			waiting, err := d.probe.waiting(pctx, time.Unix(0, since).Add(d.tg.stale))
			cancel()
			if err != nil {
				return err
			}
			if waiting >= n && d.busy() == n && d.changed.Load() == since {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d transactions neither finished their steps nor waited on a lock within %s", n, d.opt.stepTimeout())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// step runs one statement of t, unless t has ended.
func (d *driver) step(ctx context.Context, t *txn, s Step) {
	if t.ended {
		t.out.Skipped++
		return
	}
	sctx, cancel := d.stepCtx(ctx)
	defer cancel()
	switch s.Action {
	case Read:
		if d.rows {
			if err := d.rowStep(sctx, t, s); err != nil {
				d.fail(ctx, t, err)
			}
			return
		}
		v, found, err := t.tx.Read(sctx, s.Key)
		if err != nil {
			d.fail(ctx, t, err)
			return
		}
		if !found {
			d.fail(ctx, t, fmt.Errorf("key %d is missing", s.Key))
			return
		}
		t.ops = append(t.ops, opRecord{key: s.Key, val: v})
	case Write:
		if err := t.tx.Write(sctx, s.Key, s.Value); err != nil {
			d.fail(ctx, t, err)
			return
		}
		t.ops = append(t.ops, opRecord{write: true, key: s.Key, val: s.Value})
	case Select, Insert, DeleteRange:
		if err := d.rowStep(sctx, t, s); err != nil {
			d.fail(ctx, t, err)
			return
		}
	case Commit:
		t.ended = true
		err := t.tx.Commit(sctx)
		if err == nil {
			t.out.Status = history.Committed
			return
		}
		if reason, ok := collect.IsAborted(err); ok {
			t.out = Outcome{Status: history.Aborted, Reason: "commit: " + reason}
			return
		}
		// No clear answer: the commit may have taken effect.
		t.out = Outcome{Status: history.Unknown, Reason: "commit: " + err.Error()}
		t.broken = err
	case Rollback:
		t.ended = true
		t.out = Outcome{Status: history.Aborted, Reason: "client rollback"}
		if err := t.tx.Abort(sctx); err != nil {
			t.broken = fmt.Errorf("rollback: %w", err)
		}
	}
}

// rowStep runs and records a step on rows: a read of one row (a range
// read of its key, so that a key found twice is an error, not one of its
// rows; recorded as a point read of the value or of the absence), a
// range read, an insert, or a range delete, recorded as a predicate read
// of what it deleted followed by their deletes.
func (d *driver) rowStep(ctx context.Context, t *txn, s Step) error {
	rt, ok := t.tx.(collect.RowTx)
	if !ok {
		return fmt.Errorf("%s: transactions hold no rows", d.tg.Kind)
	}
	switch s.Action {
	case Read:
		rows, err := rt.Select(ctx, s.Key, s.Key+1)
		if err != nil {
			return err
		}
		if len(rows) > 1 || len(rows) == 1 && rows[0].Key != s.Key {
			return fmt.Errorf("%s found %d rows", s, len(rows))
		}
		v := history.EmptyList
		if len(rows) == 1 {
			v = rows[0].Val
		}
		t.ops = append(t.ops, opRecord{key: s.Key, val: v})
		return nil
	case Insert:
		if err := rt.Insert(ctx, s.Key, s.Value); err != nil {
			return err
		}
		t.ops = append(t.ops, opRecord{write: true, src: history.SrcInsert, key: s.Key, val: s.Value})
		return nil
	case Select:
		rows, err := rt.Select(ctx, s.Key, s.Value+1)
		if err != nil {
			return err
		}
		return t.selected(s, rows)
	}
	rows, err := rt.DeleteRange(ctx, s.Key, s.Value+1)
	if err != nil {
		return err
	}
	if err := t.selected(s, rows); err != nil {
		return err
	}
	for _, r := range rows {
		t.ops = append(t.ops, opRecord{write: true, src: history.SrcDelete, key: r.Key})
	}
	return nil
}

// selected records that s found rows in its range, refusing what no
// history holds (a row out of the range, a key twice).
func (t *txn) selected(s Step, rows []collect.Row) error {
	seen := map[int64]bool{}
	for _, r := range rows {
		if r.Key < s.Key || r.Key > s.Value || seen[r.Key] {
			return fmt.Errorf("%s returned row %d out of its range or twice", s, r.Key)
		}
		seen[r.Key] = true
	}
	t.ops = append(t.ops, opRecord{src: history.SrcSelect, key: s.Key, hi: s.Value + 1, rows: rows})
	return nil
}

// fail ends t after a failed statement: the server aborted it (a
// conflict) or the statement failed otherwise, which makes the run
// unusable. Either way t did not commit, and is rolled back.
func (d *driver) fail(ctx context.Context, t *txn, err error) {
	t.ended = true
	t.out.Status = history.Aborted
	if reason, ok := collect.IsAborted(err); ok {
		t.out.Reason = reason
	} else {
		t.out.Reason = err.Error()
		t.broken = err
	}
	actx, cancel := d.stepCtx(ctx)
	defer cancel()
	// The server may have rolled back already (InnoDB after a deadlock);
	// a failed ROLLBACK would only matter to later transactions on the
	// connection, and there are none.
	_ = t.tx.Abort(actx)
}

func (d *driver) outcomes() []Outcome {
	out := make([]Outcome, len(d.txns))
	for i, t := range d.txns {
		out[i] = t.out
	}
	return out
}

// build assembles the history: T1…Tn, then the observer, each in a
// session of its own, with ids 1…n+1.
func (d *driver) build(tg *Target, sc Scenario, lv Level) *history.History {
	b := history.NewBuilder("hermitage/"+tg.Kind+"/"+lv.Name+"/"+sc.Name, "collect")
	b.SetInit(history.InitImplicit, -1)
	if sc.Rows {
		// T⊥ holds the initial rows; every other row starts absent.
		for _, r := range InitialRows {
			b.InitWrite(r.Key, r.Val)
		}
		for _, t := range d.txns {
			for _, op := range t.ops {
				if op.src != history.SrcSelect {
					b.InitWrite(op.key, history.EmptyList)
				}
			}
		}
		b.InitSelected(history.EmptyList)
	}
	b.InitAllKeys(0)
	for i, t := range d.txns {
		id := b.Begin(b.Session(int64(t.session)), int64(i+1), t.out.Status, history.Pos{})
		if t.level != history.LevelNone {
			b.SetLevel(id, t.level)
		}
		for _, op := range t.ops {
			switch {
			case op.src == history.SrcInsert:
				b.Insert(id, op.key, op.val)
			case op.src == history.SrcDelete:
				b.Delete(id, op.key)
			case op.src == history.SrcSelect:
				vs := make([]history.Version, len(op.rows))
				for j, r := range op.rows {
					k := b.KeyID(r.Key)
					vs[j] = history.Version{Key: k, Value: b.ValueID(k, r.Val)}
				}
				b.SelectID(id, op.key, op.hi, vs)
			case op.write:
				b.Write(id, op.key, op.val)
			default:
				b.Read(id, op.key, op.val)
			}
		}
	}
	b.SetMeta("collector", "hyperiso collect --hermitage")
	b.SetMeta("store", tg.Kind)
	b.SetMeta("db", tg.Server)
	b.SetMeta("isolation", lv.Name)
	b.SetMeta("scenario", sc.Name)
	b.SetMeta("steps", sc.Script())
	return b.Finish()
}
