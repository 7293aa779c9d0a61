package history

import (
	"errors"
	"fmt"
	"iter"
	"slices"
)

// This file is what list-append histories mean, for every reader and every
// level (docs/formats.md, "What a list read means"). It is the only place
// that knows it: the
// checkers see a list history through its register view, one per way of
// explaining its lists (ListExplanations).
//
// The semantics. Every committed transaction W that appends to key k
// installs one version of k: the latest version followed by W's appends to
// k in program order (W's block). There is one total version order per key
// and each version is a prefix of the next, so every version is a
// concatenation of whole blocks. A read of k by T returns one version,
// followed by T's own earlier appends to k in program order (the own
// suffix); the version part is the read's view. T read from every
// transaction whose block its view holds, and saw none of the appenders
// whose block it lacks.
//
// The register view of one explanation (which unknown transactions
// committed, and which appender wrote each element where values repeat)
// says exactly that, with register facts every engine already takes:
//   - every committed appender W writes k once, at its end: a version
//     unique to W (a repeated value gets a fresh stand-in);
//   - a list read becomes, in place, a read of k that returns the version
//     of the last block of its view (T⊥'s empty list when the view is
//     empty): it is external even after T's own appends, which move to
//     T's end;
//   - the blocks of the longest view of each key are ordered as they
//     appear, and every other committed appender of the key follows them:
//     stated version orders (VersionHints);
//   - with ListOptions.Visibility, for each earlier block's appender W the
//     reader also reads a stand-in key that only W writes: W is visible to
//     it, which levels whose reads need not see a prefix of the version
//     order (LevelRow.SeesPrefix) do not infer from the version order.
//
// Files: listfindings.go (what lists show on their own), listprep.go (what
// every explanation shares), listenum.go (the enumeration), listview.go
// (the register view).

// HasLists reports whether h appends to or reads a list.
func (h *History) HasLists() bool {
	if len(h.Lists) > 0 {
		return true
	}
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind == OpAppend {
				return true
			}
		}
	}
	return false
}

// HintsAt returns the version orders that hold at level l: those stated
// outright (VersionHints), and at levels whose writers of one key see each
// other, NoConflictHints.
func (h *History) HintsAt(l Level) []VersionHint {
	if !l.NoConflict() || len(h.NoConflictHints) == 0 {
		return h.VersionHints
	}
	return append(slices.Clip(h.VersionHints), h.NoConflictHints...)
}

// ListOptions tune ListExplanations.
type ListOptions struct {
	// Visibility says for which blocks of a view but the last the reader
	// also reads a stand-in key only that block's appender writes (see
	// the file comment).
	Visibility Visibility
	// MaxExplanations bounds how many explanations are produced; 0 means
	// DefaultMaxExplanations.
	MaxExplanations int
}

// Visibility says which earlier blocks of a view a register view states the
// reader saw.
type Visibility uint8

const (
	// VisibleNone: none; levels whose reads see a prefix of the version
	// order (PC, SI, SER) infer it from the version order.
	VisibleNone Visibility = iota
	// VisibleReadKeys: those whose appender writes another key the
	// reader reads; without transitive visibility (RA, RC) seeing an
	// appender matters only through the keys both touch, and on the
	// list's own key the version order says it already.
	VisibleReadKeys
	// VisibleCovered: every one that no later block of the view covers,
	// where a block covers those its appender's own view of the key held
	// and the earlier transactions of its session (transitive visibility,
	// CC and PSI: what the appender saw, the reader sees too, and session
	// order and the appender's own reads say it saw them).
	VisibleCovered
	// VisibleAll: every one (mixed levels, where transitivity depends on
	// each transaction's level).
	VisibleAll
)

// DefaultMaxExplanations is the default of ListOptions.MaxExplanations.
const DefaultMaxExplanations = 4096

// ErrTooManyExplanations is returned (wrapped) when a history's lists have
// more explanations than ListOptions.MaxExplanations allows.
var ErrTooManyExplanations = errors.New("too many ways to explain the list reads")

// ListExplanation is one way to explain a list history's lists.
type ListExplanation struct {
	// H is the register view, or nil when Findings already rule this
	// explanation out at some level.
	H *History
	// Findings are the anomalies of this explanation, on the original
	// history (ListFinding.ForbiddenAt says at which levels).
	Findings []ListFinding
	// Committed and Aborted are the unknown-status transactions this
	// explanation takes as committed and as not committed; the others
	// keep their status (they append to no list and read none).
	Committed, Aborted []TxnID
	// OpOrigin maps, per transaction, each operation of H to the index of
	// the operation of the original history it stands for (-1 for a
	// stand-in read).
	OpOrigin [][]int32
	// Views name, for each list read that holds a value appended by
	// several transactions, the appenders of its view's blocks in order:
	// which transaction this explanation says wrote each element.
	Views []ListView
}

// ListView is the explanation of one list read: the transactions whose
// blocks its view holds, in order.
type ListView struct {
	Txn       TxnID
	Op        int32
	Appenders []TxnID
}

// ListExplanations yields every explanation of h's lists (one for a
// history whose appended values are unique: which unknown transactions
// committed is then determined), each with its register view. An
// explanation is a choice of fates for the unknown transactions whose
// fate the lists leave open and of an appender for every element; none is
// skipped. It yields an error wrapping ErrTooManyExplanations once opt's
// bound is reached, and an error for a history that uses a key both as a
// list and as a register.
func (h *History) ListExplanations(opt ListOptions) iter.Seq2[*ListExplanation, error] {
	return func(yield func(*ListExplanation, error) bool) {
		p, err := newListPrep(h)
		if err != nil {
			yield(nil, err)
			return
		}
		limit := opt.MaxExplanations
		if limit <= 0 {
			limit = DefaultMaxExplanations
		}
		nv := p.base[len(h.Keys)]
		e := &listEnum{p: p, opt: opt, limit: limit, yield: yield, mark: make([]int32, nv), occurs: make([]int32, nv)}
		fate := make([]Status, len(h.Txns))
		for t := range h.Txns {
			fate[t] = h.Txns[t].Status
			if fate[t] == Unknown && p.relevant[t] {
				fate[t] = undetermined
			}
		}
		e.fates(fate, nil)
		if e.over && !e.stopped {
			yield(nil, fmt.Errorf("%w: more than %d", ErrTooManyExplanations, limit))
		}
	}
}
