package collect

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// FenceKey is the key fence transactions read and write: the workloads'
// keys start at 1.
const FenceKey = 0

// Fences says when a run issues fence rounds (docs/online.md, "Folding"):
// every Every, or every N transactions of a session; zero: never.
type Fences struct {
	Every time.Duration
	N     int
}

// ParseFences reads --fence-every: a duration (1s) or a count of
// transactions per session (5000).
func ParseFences(s string) (Fences, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return Fences{}, fmt.Errorf("--fence-every %s: a count of transactions must be at least 1", s)
		}
		return Fences{N: n}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return Fences{}, fmt.Errorf("--fence-every %q: want a positive duration (1s) or a count of transactions per session", s)
	}
	return Fences{Every: d}, nil
}

// On says fences are asked for.
func (f Fences) On() bool { return f.Every > 0 || f.N > 0 }

// fencer runs the fence rounds. A round: every session, at its next
// transaction boundary, commits a fence (read the fence key, write a new
// value: the fences of a round form one chain), waits until every session
// has, and then commits a fence read (read the fence key: the chain's
// last value). Everything a session did before its fence so precedes,
// by session order and reads-from, whatever any session does after its
// fence read: the checker folds the history at that cut. The next round
// starts once every fence read is done.
type fencer struct {
	cfg  Fences
	vals atomic.Int64 // the fence key's values: 1, 2, … (unique)

	mu      sync.Mutex
	cond    *sync.Cond
	active  int // sessions still running
	cur     int // the round in progress or last done
	inRound bool
	need    int // sessions the round in progress waits for
	fenced  int // of them, those whose fence committed
	back    int // those back from the wait (rejoin)
	read    int // those whose fence read committed
	last    time.Time
	seeded  bool // the fence key has its first value
	off     bool // stopped: a fence failed, or the run ends
}

func newFencer(cfg Fences, sessions int) *fencer {
	f := &fencer{cfg: cfg, active: sessions, last: time.Now()}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// due says whether the session, which did round done last and ran since
// transactions since then, takes part in a round now (starting one if it
// is time).
func (f *fencer) due(done, since int) (round int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.off || !f.seeded:
		return 0, false
	case f.inRound:
		return f.cur, done < f.cur
	case f.cfg.Every > 0 && time.Since(f.last) >= f.cfg.Every, f.cfg.N > 0 && since >= f.cfg.N:
		f.inRound, f.cur, f.need, f.fenced, f.back, f.read = true, f.cur+1, f.active, 0, 0, 0
		return f.cur, true
	}
	return 0, false
}

// fenced marks the session's fence committed and waits for the others'.
func (f *fencer) arrive() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fenced++
	f.cond.Broadcast()
	for !f.off && f.fenced < f.need {
		f.cond.Wait()
	}
}

// rejoin waits, once the session is back from waiting for the fences
// (with the memory store, back in its scheduler), until every session is:
// else the last to fence would run on alone while the others are still
// on their way back, and could run all its transactions meanwhile.
func (f *fencer) rejoin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.back++
	f.cond.Broadcast()
	for !f.off && f.back < f.need {
		f.cond.Wait()
	}
}

// readDone marks the session's fence read committed; the last one ends
// the round.
func (f *fencer) readDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read++
	if f.read >= f.need {
		f.inRound, f.last = false, time.Now()
	}
}

// quit takes a session that ran its transactions (having done round
// done last) out of the rounds.
func (f *fencer) quit(done int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.active--
	if f.inRound && done < f.cur {
		f.need--
		if f.read >= f.need {
			f.inRound, f.last = false, time.Now()
		}
	}
	f.cond.Broadcast()
}

// stop ends the rounds: a fence that did not commit (its outcome unknown,
// or an error) leaves no chain to fold at, and a stopped run no one to
// wait for.
func (f *fencer) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.off = true
	f.cond.Broadcast()
}

// Awayer is a Conn whose store waits for its sessions (the memory store's
// scheduler): Away runs f, a wait on other sessions, without it.
type Awayer interface {
	Away(f func())
}

// maxFenceTries bounds the attempts at one fence or fence read that
// aborts (a conflict with another fence at SI or SER).
const maxFenceTries = 100

// fence runs the session's part of a round on conn: the fence, the wait,
// the fence read. Each attempt is recorded in the history as session
// sid's; broken says the connection may be unusable, unknown that an
// attempt's outcome is unknown (the rounds then stop).
func (r *runner) fence(ctx context.Context, conn Conn, sid int64, iso Isolation) (unknown, broken bool) {
	attempt := func(ops []workload.Op) (ok, broken bool) {
		for range maxFenceTries {
			if ctx.Err() != nil {
				return false, false
			}
			if len(ops) > 1 {
				ops[1].Value = r.fences.vals.Add(1)
			}
			rec, broken := r.txn(ctx, conn, workload.Txn{Ops: ops}, iso)
			rec.mix, rec.session, rec.fence = -1, sid, true
			r.count(func(*Summary) { r.finish(rec) })
			if rec.status == history.Committed {
				return true, false
			}
			if rec.status == history.Unknown || broken {
				unknown = rec.status == history.Unknown
				return false, broken
			}
		}
		return false, false
	}
	ok, broken := attempt([]workload.Op{{Kind: workload.Read, Key: FenceKey}, {Kind: workload.Write, Key: FenceKey}})
	if !ok {
		r.fences.stop()
		return unknown, broken
	}
	if a, isA := conn.(Awayer); isA {
		a.Away(r.fences.arrive)
	} else {
		r.fences.arrive()
	}
	r.fences.rejoin()
	if ok, broken = attempt([]workload.Op{{Kind: workload.Read, Key: FenceKey}}); !ok {
		r.fences.stop()
		return unknown, broken
	}
	r.fences.readDone()
	return false, false
}

// sessionFences is a session's part in the fence rounds.
type sessionFences struct {
	r           *runner
	iso         Isolation
	done, since int  // the last round it took part in, transactions since
	fresh       bool // a continuation session, to begin with a fence read
}

// sessionFences starts session i's part (session 1 seeds the fence key);
// the caller defers its end.
func (r *runner) sessionFences(ctx context.Context, i int, conn Conn) *sessionFences {
	sf := &sessionFences{r: r, iso: r.opt.Isolation}
	if sf.iso == 0 {
		sf.iso = Serializable
	}
	if r.fences != nil && i == 0 {
		r.seedFence(ctx, conn, sf.iso)
	}
	return sf
}

// before runs, before the session's next transaction, its fence read
// if it is a continuation, and its part of a round if one is due; *sid
// changes after a fence of unknown outcome, and a broken connection is
// reopened (reconnect's error is returned).
func (sf *sessionFences) before(ctx context.Context, conn Conn, sid *int64, reconnect func() error) error {
	r := sf.r
	if r.fences == nil {
		return nil
	}
	if sf.fresh {
		r.fenceRead(ctx, conn, *sid, sf.iso)
		sf.fresh = false
	}
	defer func() { sf.since++ }()
	round, ok := r.fences.due(sf.done, sf.since)
	if !ok {
		return nil
	}
	unknown, broken := r.fence(ctx, conn, *sid, sf.iso)
	sf.done, sf.since = round, 0
	if unknown {
		*sid, sf.fresh = r.nextSession.Add(1), true
	}
	if broken {
		return reconnect()
	}
	return nil
}

// end takes the session out of the rounds.
func (sf *sessionFences) end() {
	if sf.r.fences != nil {
		sf.r.fences.quit(sf.done)
	}
}

// fenceRead begins a continuation session (after an unknown outcome)
// with a fence read, when there are fences: a session that shows up
// after the checker folded the history must begin after the fold.
func (r *runner) fenceRead(ctx context.Context, conn Conn, sid int64, iso Isolation) {
	if r.fences == nil {
		return
	}
	for range maxFenceTries {
		if ctx.Err() != nil {
			return
		}
		rec, broken := r.txn(ctx, conn, workload.Txn{Ops: []workload.Op{{Kind: workload.Read, Key: FenceKey}}}, iso)
		rec.mix, rec.session, rec.fence = -1, sid, true
		r.count(func(*Summary) { r.finish(rec) })
		if rec.status != history.Aborted || broken {
			return
		}
	}
}

// seedFence writes the fence key's first value, as session 1's first
// transaction, so that every fence reads a value some transaction wrote.
func (r *runner) seedFence(ctx context.Context, conn Conn, iso Isolation) {
	for range maxFenceTries {
		rec, _ := r.txn(ctx, conn, workload.Txn{Ops: []workload.Op{{Kind: workload.Write, Key: FenceKey, Value: r.fences.vals.Add(1)}}}, iso)
		rec.mix, rec.session, rec.fence = -1, 1, true
		r.count(func(*Summary) { r.finish(rec) })
		if rec.status == history.Committed {
			r.fences.mu.Lock()
			r.fences.seeded = true
			r.fences.mu.Unlock()
			return
		}
		if rec.status == history.Unknown || ctx.Err() != nil {
			break
		}
	}
	r.fences.stop()
}
