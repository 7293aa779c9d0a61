// Package valueseq decides SER and SI for histories whose transactions all
// use one register key, by searching for a serial execution as a walk
// through the key's values, where the general pipeline would need a
// variable for every pair of the key's writers.
//
// On one key a serial execution is a sequence of values: a read-only
// transaction needs the current value to be the one it read, a blind write
// sets the current value, and a read-modify-write transaction needs the one
// it read and sets the one it wrote. Deciding SER is then deciding whether
// the sessions' sequences of such steps interleave into a walk from the
// initial value; a state is each session's position and the current value.
// SI asks the same on one key: every writer sees every earlier writer (no
// two writers of the key are concurrent), so a writer reads the latest
// value, and a read-only transaction can commit right after its snapshot,
// which makes any SI execution a serial one (docs/valueseq.md).
//
// Deciding this is NP-complete when the sessions are many (it is the
// coherence check of one memory location, with transactions for
// operations), so the search is exact but bounded: it returns Unknown
// when it exceeds its budget of states, and the caller falls back to the
// general pipeline.
package valueseq

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

// DefaultMaxStates bounds the states a search remembers as dead ends when
// Options.MaxStates is 0: about 100 bytes each, 3 to 10 µs each.
const DefaultMaxStates = 1 << 20

// Options tune Decide.
type Options struct {
	// Include admits the transactions the execution may hold: T⊥, the
	// committed ones and the unknown-status ones that may have committed
	// (nil: all but the aborted ones).
	Include func(history.TxnID) bool
	// Optional marks those of the admitted ones the execution may leave
	// out: unknown-status transactions (nil: none).
	Optional func(history.TxnID) bool
	// MaxStates bounds the dead-end states remembered (0: DefaultMaxStates).
	MaxStates int
	// Fit is asked before the remembered states grow by a chunk whether
	// the memory budget has room (nil: no bound).
	Fit func(need int64, what string) error
}

// Result is what Decide found.
type Result struct {
	// Verdict is Satisfied (Order is a serial order), Violated (no serial
	// order exists) or Unknown (the search stopped, Reason says why).
	Verdict verdict.Verdict
	// Order holds the transactions taken as committed in a serial order,
	// T⊥ left out; the optional ones it holds are those taken.
	Order  []history.TxnID
	Reason string
	// States counts the states expanded; Dead those remembered as dead
	// ends.
	States, Dead int64
}

// Applies says whether Decide decides h: every operation of every
// transaction that is not aborted is a register read or write of one key,
// the history has no predicate reads and states no version order. why
// says what fails otherwise.
func Applies(h *history.History) (why string, ok bool) {
	if len(h.Selects) > 0 {
		return "predicate reads", false
	}
	if len(h.VersionHints) > 0 || len(h.NoConflictHints) > 0 {
		return "stated version orders", false
	}
	key := history.KeyID(-1)
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		if tx.Status == history.Aborted {
			continue
		}
		for _, op := range tx.Ops {
			if op.Kind != history.OpRead && op.Kind != history.OpWrite {
				return "list operations", false
			}
			if key < 0 {
				key = op.Key
			} else if op.Key != key {
				return "more than one key", false
			}
		}
	}
	return "", true
}

// step is one transaction as the walk sees it.
type step struct {
	txn  history.TxnID
	need int32 // the value its external read returned; -1: none
	set  int32 // the value of its last write; -1: none
	opt  bool  // it may be left out
}

// free reports whether taking s at current value cur can be done at once
// without losing any execution: it needs cur (or nothing) and leaves the
// value as it is. Moving such a step earlier changes no value anyone sees.
func (s step) free(cur int32) bool {
	return (s.need < 0 || s.need == cur) && (s.set < 0 || s.set == cur && s.need == cur)
}

// produces reports whether s can bring its value to the key: it writes
// one it does not need.
func (s step) produces() bool { return s.set >= 0 && s.need != s.set }

var errBudget = errors.New("valueseq: state budget exhausted")

// Decide decides SER (and so SI) for h, which must satisfy Applies and
// have passed validation of the transactions opt.Include admits.
func Decide(ctx context.Context, h *history.History, opt Options) (Result, error) {
	if why, ok := Applies(h); !ok {
		return Result{}, fmt.Errorf("valueseq: history does not apply: %s", why)
	}
	include := opt.Include
	if include == nil {
		include = func(t history.TxnID) bool { return h.Txns[t].Status != history.Aborted }
	}
	optional := opt.Optional
	if optional == nil {
		optional = func(history.TxnID) bool { return false }
	}
	s := newSearcher(h, include, optional)
	s.ctx, s.fit = ctx, opt.Fit
	s.maxDead = int64(opt.MaxStates)
	if s.maxDead <= 0 {
		s.maxDead = DefaultMaxStates
	}
	ok := s.dfs()
	res := Result{States: s.states, Dead: int64(len(s.dead))}
	switch {
	case s.stop != nil && errors.Is(s.stop, errBudget):
		res.Verdict, res.Reason = verdict.Unknown, fmt.Sprintf("the value-sequence search remembered %d dead ends, its budget", s.maxDead)
	case s.stop != nil && ctx.Err() != nil:
		return res, ctx.Err()
	case s.stop != nil:
		res.Verdict, res.Reason = verdict.Unknown, s.stop.Error()
	case ok:
		res.Verdict, res.Order = verdict.Satisfied, slices.Clone(s.order)
	default:
		res.Verdict = verdict.Violated
	}
	return res, nil
}
