package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/online"
)

// liveEvery is how often collect --check checks the history so far.
const liveEvery = time.Second

// liveCheck is collect --check: a checker (package online) fed the
// history as the recorder writes it, beside the workload.
type liveCheck struct {
	chk      *online.Checker
	levels   []history.Level
	stopOn   bool
	stopRun  context.CancelFunc // ends the run (--stop-on-violation)
	w        io.Writer          // where violations are printed as they become certain
	unique   bool
	reported []bool
	stopped  bool // a violation stopped the run

	mu   sync.Mutex
	quit chan struct{}
	done sync.WaitGroup
	err  error // a failed check
}

// newLiveCheck parses --check's levels.
func newLiveCheck(spec string, unique, stopOn bool, w io.Writer) (*liveCheck, error) {
	req, err := parseLevelRequest(spec)
	if err != nil {
		return nil, fail(exitBadInput, "--check: %v", err)
	}
	if req.all {
		return nil, fail(exitBadInput, "--check needs L[,L...], not %s", allLevels)
	}
	chk, err := online.New(online.Options{Name: "the run", Levels: req.levels, Unique: unique})
	if err != nil {
		return nil, err
	}
	return &liveCheck{chk: chk, levels: req.levels, stopOn: stopOn, w: w, unique: unique, reported: make([]bool, len(req.levels)), quit: make(chan struct{})}, nil
}

// start checks the history so far every liveEvery until stop.
func (lc *liveCheck) start(ctx context.Context, stopRun context.CancelFunc) {
	lc.stopRun = stopRun
	lc.done.Add(1)
	go func() {
		defer lc.done.Done()
		tick := time.NewTicker(liveEvery)
		defer tick.Stop()
		for {
			select {
			case <-lc.quit:
				return
			case <-tick.C:
			}
			st, err := lc.chk.Check(ctx)
			lc.mu.Lock()
			if err != nil {
				lc.err = err
				lc.mu.Unlock()
				return
			}
			lc.note(st)
			lc.mu.Unlock()
		}
	}()
}

// note prints each violation that became certain; with --stop-on-violation
// the first ends the run.
func (lc *liveCheck) note(st online.Status) {
	for i, lv := range st.Levels {
		if lv.Certain == nil || lc.reported[i] {
			continue
		}
		lc.reported[i] = true
		fmt.Fprintf(lc.w, "check: %s VIOLATED, certain after %d transactions\n", strings.ToUpper(lv.Level.String()), lv.CertainAt)
		for _, a := range lv.Certain.Anomalies {
			printAnomaly(lc.w, lv.Certain.Level, a)
		}
		if lc.stopOn && !lc.stopped {
			lc.stopped = true
			lc.stopRun()
		}
	}
}

// Stopped says a violation ended the run.
func (lc *liveCheck) Stopped() bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.stopped
}

// finish stops the checks and decides the history as recorded: the file
// written (its offline verdict), or the stream (to standard output). It
// prints the verdict line of the summary and returns whether a level is
// violated.
func (lc *liveCheck) finish(ctx context.Context, path string, toFile bool) (bool, error) {
	close(lc.quit)
	lc.done.Wait()
	if lc.err != nil {
		return false, fmt.Errorf("--check: %w", lc.err)
	}
	var results []*check.Result
	if toFile {
		h, err := formats.Read(path, formats.Options{})
		if err != nil {
			return false, fmt.Errorf("--check: %w", err)
		}
		for _, l := range lc.levels {
			res, err := check.Check(ctx, h, l, check.Options{})
			if err != nil {
				return false, fmt.Errorf("--check %s: %w", l, err)
			}
			results = append(results, res)
		}
	} else {
		st, err := lc.chk.Finish(ctx)
		if err != nil {
			return false, fmt.Errorf("--check: %w", err)
		}
		for _, lv := range st.Levels {
			results = append(results, lv.Result)
		}
	}
	violated := false
	var parts []string
	for i, res := range results {
		parts = append(parts, fmt.Sprintf("%s %s", lc.levels[i], strings.ToUpper(res.Verdict.String())))
		if res.Verdict == check.Violated {
			violated = true
			if !lc.reported[i] {
				lc.reported[i] = true
				for _, a := range res.Anomalies {
					printAnomaly(lc.w, res.Level, a)
				}
			}
		}
	}
	fmt.Fprintf(lc.w, "check: %s\n", strings.Join(parts, ", "))
	return violated, nil
}
