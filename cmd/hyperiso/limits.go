package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/explain"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/memlimit"
)

// The limits of a run: --timeout and SIGINT/SIGTERM end it within about
// stopGrace whatever stage it is in, and --max-memory (or the limit of the
// environment) makes it stop before an allocation that would not fit.
//
// Reading, validation and some solver set-up do not look at a context, so
// the slow work runs in a goroutine the command gives up on when its context
// ends: it reports what it knows, and the process exits, taking the
// goroutine with it.

// stopGrace is how long a command whose context has ended waits for its
// work to return on its own (the stages that poll the context do within
// milliseconds, with their timings) before giving up on it.
const stopGrace = 50 * time.Millisecond

// runState follows a stoppable command: when it started and the stage it is
// in, set by the goroutine doing the work and read by the one giving up.
type runState struct {
	start   time.Time
	timeout time.Duration
	mu      sync.Mutex
	stage   string
	// display shows the stage on a terminal (nil: nowhere).
	display *stageDisplay
}

func (s *runState) set(stage string) {
	s.mu.Lock()
	s.stage = stage
	s.mu.Unlock()
	s.display.set(stage)
}

func (s *runState) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stage
}

type runStateKey struct{}

// stateOf returns the runState of ctx (a fresh one outside stoppable).
func stateOf(ctx context.Context) *runState {
	if s, ok := ctx.Value(runStateKey{}).(*runState); ok {
		return s
	}
	return &runState{start: time.Now()}
}

// stoppable makes SIGINT and SIGTERM end c: its context is cancelled (the
// stages that poll it stop), and after stopGrace at most the command
// returns exit status 3 with "interrupted during STAGE after T". Only the
// commands that honour their context get this: a signal no longer kills
// a process that listens for it.
//
// With stages, a terminal's standard error shows the stage the command is
// in while it runs (stageDisplay), cleared before the report is printed.
func stoppable(c *cobra.Command, stages bool) *cobra.Command {
	run := c.RunE
	c.RunE = func(c *cobra.Command, args []string) error {
		st := &runState{start: time.Now()}
		if stages {
			st.display = newStageDisplay(c.ErrOrStderr())
		}
		ctx, stop := signal.NotifyContext(context.WithValue(c.Context(), runStateKey{}, st), os.Interrupt, syscall.SIGTERM)
		defer stop()
		c.SetContext(ctx)
		done := make(chan error, 1)
		go func() { done <- run(c, args) }()
		// The display ends before the report is printed, at the first
		// output of the command (report) or when it ends.
		defer st.display.finish()
		select {
		case err := <-done:
			if ctx.Err() == nil {
				return err
			}
		case <-ctx.Done():
			select {
			case <-done:
			case <-time.After(stopGrace):
			}
		}
		during := ""
		if s := st.get(); s != "" {
			during = " during " + s
		}
		return fail(exitUnknown, "interrupted%s after %.1f s", during, time.Since(st.start).Seconds())
	}
	return c
}

// limitMemory adds --max-memory to c. Before c runs, the memory budget is
// the smaller of the flag and a safe share of the limit of the environment
// (memlimit.Detect); it becomes the process's budget, which every check asks
// before its large allocations, and sets Go's soft memory limit. With watch,
// a watchdog (memlimit.Watch) follows the process while c runs: growth over
// the budget cancels c's context with a *memlimit.Error naming the stage
// and the figures (memoryCause), which the command reports as verdict
// unknown, exit status 3, instead of growing on until the kernel kills it.
func limitMemory(c *cobra.Command, watch bool) *cobra.Command {
	var flag string
	c.Flags().StringVar(&flag, "max-memory", "", "memory the run may use, e.g. 4GiB or 512MB (default: a safe share of what the cgroup, ulimit -v and the free memory allow); a check that would need more stops with exit status 3")
	run := c.RunE
	c.RunE = func(c *cobra.Command, args []string) error {
		b := memlimit.Detect()
		if flag != "" {
			n, err := memlimit.ParseSize(flag)
			if err == nil && n <= 0 {
				err = fmt.Errorf("want a positive size, e.g. 4GiB")
			}
			if err != nil {
				return fail(exitBadInput, "--max-memory: %v", err)
			}
			b = b.Min(memlimit.Budget{Limit: n, Source: "--max-memory"})
		}
		defer memlimit.SetProcess(b)()
		if watch {
			ctx, cancel := context.WithCancelCause(c.Context())
			defer cancel(nil)
			st, name := stateOf(ctx), c.Name()
			stop := memlimit.Watch(memlimit.Default(), memlimit.WatchPeriod, func() string {
				if s := st.get(); s != "" {
					return fmt.Sprintf("the %s, during %s after %.1f s,", name, s, time.Since(st.start).Seconds())
				}
				return "the " + name
			}, func(e *memlimit.Error) { cancel(e) })
			defer stop()
			c.SetContext(ctx)
		}
		return run(c, args)
	}
	return c
}

// memoryCause returns the watchdog's error when it is what ended ctx.
func memoryCause(ctx context.Context) (*memlimit.Error, bool) {
	var e *memlimit.Error
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &e) {
		return nil, false
	}
	return e, true
}

// withDeadline bounds ctx by timeout (none when 0); its clock starts now,
// before the history is read. Its Err reads the clock (clockCtx).
func withDeadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	stateOf(ctx).timeout = timeout
	if timeout > 0 {
		c, cancel := context.WithTimeout(ctx, timeout)
		d, _ := c.Deadline()
		return clockCtx{c, d}, cancel
	}
	return context.WithCancel(ctx)
}

// clockCtx is a context with a deadline whose Err says
// context.DeadlineExceeded as soon as the clock has passed the deadline,
// before the timer that closes Done has run. On a busy machine a timer
// can fire hundreds of milliseconds late (the thread that runs it waits
// for a processor), while the goroutine doing the work is on one: the
// stages, which poll Err, see the deadline themselves and return, and the
// goroutine waiting for them runs at once on the processor they leave.
type clockCtx struct {
	context.Context
	deadline time.Time
}

func (c clockCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// within runs f in a goroutine and returns its result, unless ctx ends
// first and f does not return within stopGrace: then finished is false, err
// is ctx's error and f is left running.
func within[T any](ctx context.Context, f func() (T, error)) (v T, finished bool, err error) {
	type out struct {
		v   T
		err error
	}
	done := make(chan out, 1)
	go func() {
		v, err := f()
		done <- out{v, err}
	}()
	select {
	case o := <-done:
		return o.v, true, o.err
	case <-ctx.Done():
	}
	select {
	case o := <-done:
		return o.v, true, o.err
	case <-time.After(stopGrace):
		return v, false, ctx.Err()
	}
}

// readWithin reads the history, whose size in bytes size tells (0:
// unknown; asked only when a display shows it), in stage "read", giving up
// when ctx ends: h is then nil and err ctx's error. Reading does not look
// at a context, and the history is useless once the deadline has passed,
// so no grace.
func readWithin(ctx context.Context, size func() int64, read func() (*history.History, error)) (*history.History, error) {
	st := stateOf(ctx)
	st.set("read")
	st.display.reading(size)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	var (
		h   *history.History
		err error
	)
	go func() {
		h, err = read()
		close(done)
	}()
	select {
	case <-done:
		return h, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// check runs check.Check on in within its context. When the context ended
// during reading, or the check does not return soon after it ends, the
// result is a stand-in naming the stage reached, with in.ctx's error.
func (in *checkInput) check(path string, opt check.Options) (*check.Result, error) {
	st := stateOf(in.ctx)
	if in.h == nil {
		res := in.standIn(path, st.get())
		if e, over := memoryCause(in.ctx); over {
			res.Reason = e.Error()
			return res, nil
		}
		return res, in.ctx.Err()
	}
	// Check enters "validate" after summarising the history, which
	// builds its index: the same work, as far as the user can tell.
	st.set("validate")
	opt.OnStage = st.set
	res, ok, err := within(in.ctx, func() (*check.Result, error) { return check.Check(in.ctx, in.h, in.level, opt) })
	if !in.keepDisplay {
		st.display.finish()
	}
	if !ok {
		res = in.standIn(path, st.get())
	}
	// A verdict reached before the watchdog's word stands.
	if e, over := memoryCause(in.ctx); over && (!ok || err != nil || res.Verdict == check.Unknown) {
		res.Verdict, res.Reason = check.Unknown, e.Error()
		return res, nil
	}
	return res, err
}

// explain runs explain.Explain on in within its context, as check does.
// Explain's stages are not followed: a stand-in names stage "explain". A
// history not read gets no report, only the error, which says where the
// deadline fell.
func (in *checkInput) explain(path string, opt explain.Options) (*explain.Report, error) {
	st := stateOf(in.ctx)
	if e, over := memoryCause(in.ctx); over && in.h == nil {
		return nil, e
	}
	if in.h == nil {
		err := in.ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			err = timeoutError{st.timeout, st.get()}
		}
		return nil, err
	}
	st.set("explain")
	rep, ok, err := within(in.ctx, func() (*explain.Report, error) { return explain.Explain(in.ctx, in.h, in.level, opt) })
	st.display.finish()
	if !ok {
		rep = &explain.Report{Result: in.standIn(path, st.get())}
	}
	if e, over := memoryCause(in.ctx); over && (!ok || err != nil || rep == nil || rep.Result == nil || rep.Verdict == check.Unknown) {
		if rep == nil || rep.Result == nil {
			return nil, e
		}
		rep.Explanation = nil
		rep.Verdict, rep.Reason = check.Unknown, e.Error()
		return rep, nil
	}
	return rep, err
}

// timeoutError is a deadline that fell in a stage: context.DeadlineExceeded
// with the figures.
type timeoutError struct {
	timeout time.Duration
	stage   string
}

func (e timeoutError) Error() string {
	return fmt.Sprintf("timeout after %s during %s", e.timeout, e.stage)
}
func (e timeoutError) Unwrap() error { return context.DeadlineExceeded }

// standIn is the report of a check given up on: verdict unknown, the stage
// reached, and what can be told of the history without the index.
func (in *checkInput) standIn(path, stage string) *check.Result {
	res := &check.Result{
		Schema:    1,
		Source:    path,
		Level:     in.level.String(),
		Verdict:   check.Unknown,
		Stage:     stage,
		TimingsMS: map[string]float64{},
		Counters:  map[string]int64{},
		Anomalies: []check.Anomaly{},
	}
	if h := in.h; h != nil {
		res.Source, res.Format = h.Source, h.Format
		res.Dropped = h.Dropped.Reported()
		s := &res.History
		s.Sessions, s.Transactions, s.Keys = len(h.Sessions), len(h.Txns)-1, len(h.Keys)
		for t := 1; t < len(h.Txns); t++ {
			switch h.Txns[t].Status {
			case history.Committed:
				s.Committed++
			case history.Aborted:
				s.Aborted++
			default:
				s.Unknown++
			}
			s.Operations += len(h.Txns[t].Ops)
		}
	}
	return res
}

// isStop reports whether err is the end of a command's context.
func isStop(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
