// Package check is hyperiso's façade: Check validates a history, hands it
// to the checker of the requested level (package strong, SAT-backed, for
// SER, strict SER, SI, PSI and PC; package weak, saturation, for RC, RA and CC) and
// turns the answer into the Result that every front end reports.
package check

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/memlimit"
)

// ErrUnavailable is returned for a level whose checker does not exist yet.
var ErrUnavailable = errors.New("not available yet")

// ErrInput is wrapped by every error that refuses a history rather than
// judging it: nothing left to check, or a level that needs information the
// history does not hold. Front ends report it as bad input (exit 2), never
// as a verdict.
var ErrInput = errors.New("cannot be checked")

// inputError refuses h with a message; it wraps ErrInput.
func inputError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, args...))
}

// refuse says why h, whose statistics are s, cannot be checked at level
// with opt, or nil. A history
// with no transaction that may have committed would be satisfied by every
// level vacuously; a real-time level on a history without timing would
// silently be the plain level.
func refuse(h *history.History, s history.Stats, level history.Level, opt Options) error {
	if s.Committed+s.Unknown == 0 {
		skipped := ""
		if n := len(h.Warnings); n > 0 {
			skipped = fmt.Sprintf("; the reader skipped or changed input %d times (first: %s)", n, h.Warnings[0])
		}
		return inputError("nothing to check: %d transactions read, none committed or of unknown outcome%s", s.Transactions, skipped)
	}
	if level == history.StrictSER || opt.RealTime {
		timed := 0
		for t := 1; t < len(h.Txns); t++ {
			if h.Txns[t].Timed {
				timed++
			}
		}
		if timed == 0 {
			what := "--realtime"
			if level == history.StrictSER {
				what = history.StrictSER.String()
			}
			return inputError("%s needs real-time order, but no transaction of %s has invocation and completion times (Jepsen :index or :time, JSONL \"time\")", what, h.Source)
		}
	}
	return nil
}

// refuseRows refuses what the checks do not decide yet of a history with
// rows (docs/predicates.md): rows beside list appends.
func refuseRows(h *history.History) error {
	if h.HasRows() && h.HasLists() {
		return inputError("not decided yet: inserts, deletes or predicate reads beside list appends")
	}
	return nil
}

// Options tune a check.
type Options struct {
	// Strategy names the solver strategy for strong levels ("" = default).
	Strategy string
	// RealTime adds real-time order (from Jepsen :index or :time) to the
	// strong levels; strict-ser always has it.
	RealTime bool
	// MaxBytes bounds the memory of the whole process, counted as
	// memlimit.InUse counts it: a stage whose estimated allocation would
	// exceed it stops before allocating, with verdict unknown and the
	// figures as the reason. 0 means the process's budget
	// (memlimit.Default: what the CLI set, or the limits of the
	// environment); negative, no bound.
	MaxBytes int64
	// OnStage, when set, is called with the name of each stage as the check
	// enters it, from the goroutine running Check: a front end that gives
	// up on a check can say where it was.
	OnStage func(stage string)
	// DefaultLevel is, for level history.Mixed, the level of a transaction
	// that declares none; LevelNone refuses such a transaction as bad input.
	DefaultLevel history.Level
	// Shared, when set, keeps what checks of one history at several
	// levels share (its validation), for the next check given it.
	Shared *Shared
	// root is the history Check was given: the one Shared keeps.
	root *history.History
}

// Shared is what checks of one history at several levels share: its
// validation findings, computed by the first check that validates it (a
// list history's register views, built anew by each check, are not
// kept). It is safe for concurrent use.
type Shared struct {
	mu       sync.Mutex
	findings map[*history.History][]history.Finding
}

// validate returns h's validation findings, through opt.Shared when set.
func (o Options) validate(h *history.History) []history.Finding {
	s := o.Shared
	if s == nil || h != o.root {
		return h.Validate()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.findings[h]; ok {
		return f
	}
	f := h.Validate()
	if s.findings == nil {
		s.findings = map[*history.History][]history.Finding{}
	}
	s.findings[h] = f
	return f
}

// Check decides whether h satisfies level.
func Check(ctx context.Context, h *history.History, level history.Level, opt Options) (*Result, error) {
	res := &Result{
		Schema:    1,
		Source:    h.Source,
		Format:    h.Format,
		Level:     level.String(),
		TimingsMS: map[string]float64{},
		Counters:  map[string]int64{},
		Anomalies: []Anomaly{},
		History:   h.Stats(),
	}
	for _, w := range h.Warnings {
		res.Warnings = append(res.Warnings, w.String())
	}
	res.Dropped = h.Dropped.Reported()
	opt.root = h
	if err := refuse(h, res.History, level, opt); err != nil {
		return res, err
	}
	var levels []history.Level // a mixed check's per-transaction levels
	if level == history.Mixed {
		var err error
		if levels, err = mixedLevels(h, opt); err != nil {
			return res, err
		}
		if sub := uniformWeak(ctx, h, levels, opt); sub != nil {
			sub.Level = res.Level
			return sub, nil
		}
	}
	if err := refuseRows(h); err != nil {
		return res, err
	}
	if h.HasLists() {
		return checkLists(ctx, h, level, levels, opt, res)
	}
	if err := checkRegisters(ctx, h, level, levels, opt, res); err != nil {
		return res, err
	}
	return res, nil
}

// checkRegisters validates h and hands it to the engine of level; h has no
// list (a list history's register view).
func checkRegisters(ctx context.Context, h *history.History, level history.Level, levels []history.Level, opt Options, res *Result) error {
	// Rows a value test did not return: where a transaction has one
	// visible set, its first read of a key takes the candidates all its
	// reads of the key allow (History.NarrowReads).
	h = h.NarrowReads(func(t history.TxnID) bool { return levelOf(levels, level, t).ReadsApart() })
	start := time.Now()
	opt.enter(res, "validate")
	findings := opt.validate(h)
	res.TimingsMS["validate"] += ms(time.Since(start))
	for _, f := range findings {
		if f.Kind.ForbiddenAt(levelOf(levels, level, f.Txn)) {
			res.Anomalies = append(res.Anomalies, FindingAnomaly(h, f))
		}
	}
	if len(res.Anomalies) > 0 {
		res.Verdict = Violated
		res.Stage = ""
		return nil
	}
	var err error
	switch r, _ := level.Row(); r.Engine {
	case history.Strong:
		err = strongLevel(ctx, h, level, opt, res)
	case history.Weak:
		err = weakLevel(ctx, h, level, opt, res)
	default:
		return fmt.Errorf("level %s: %w (validation found no read-consistency anomaly)", level, ErrUnavailable)
	}
	if err != nil {
		if errors.Is(err, memlimit.ErrExceeded) {
			res.Verdict, res.Reason = Unknown, err.Error()
			return nil
		}
		return err
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
