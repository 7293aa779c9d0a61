// Options tune Prune, and the memory budget it asks before each large
// allocation.

package prune

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// ErrTooLarge is returned, before anything large is allocated, when the
// reachability matrix would exceed Options.MaxBytes, or when the memory
// budget refuses the reachability or anything else pruning allocates as
// the graph grows (the state graph, known edges, per-pass buffers).
var ErrTooLarge = errors.New("prune: reachability matrix exceeds the memory limit")

// budgetError is the memory budget's refusal of the matrix: its message,
// and ErrTooLarge.
type budgetError struct{ error }

func (e budgetError) Is(target error) bool { return target == ErrTooLarge }
func (e budgetError) Unwrap() error        { return e.error }

// Options tune Prune.
type Options struct {
	// MaxBytes, when positive, bounds the reachability on its own: with
	// Bitset (states)²/8 bytes, where states is the number of included
	// transactions for SER and twice that for SI; with Chains about
	// 4·states·k bytes, k bounded by the number of sessions.
	MaxBytes int64
	// Reach is the reachability strategy. Auto (the zero value) takes the
	// one that needs fewer bytes (Chains when the sessions are fewer than
	// about states/32), except that rows of 4 MiB or less (up to about
	// 5,800 states), which are faster, stay Bitset.
	Reach Strategy
	// Fit is asked, before each allocation that grows with the graph (the
	// reachability, the state graph in CSR form, the known edges pruning
	// adds, the index of known edges by key, per-pass buffers, the
	// incremental fill's per-state flags and changed words, each key's
	// version-order pairs when they are pending), whether
	// need more bytes fit the memory budget; its error stops Prune,
	// wrapped with ErrTooLarge. Nil means memlimit.Default().Fit: the
	// limits of the environment.
	Fit func(need int64, what string) error
	// Settle, when positive, ends pruning before the fixpoint: after a
	// pass that decided less than this share of the constraints pending
	// at its start, Prune refreshes the reachability and stops. The few
	// constraints later passes would decide cost the solver less than
	// those passes over the whole graph do (a shuffled 100k SER history:
	// passes 4 and 5 decide 14 of 34,563 pairs and take a fifth of the
	// CPU time). Zero prunes to the fixpoint, as refutation needs.
	Settle float64
}

// growKnown makes room for n more known edges. When the slice must move,
// it grows by a quarter at least, after asking the memory budget for the
// new array: the RW edges that decided constraints derive can outgrow
// everything else.
func (p *pruner) growKnown(n int) error {
	k := p.g.Known
	if cap(k)-len(k) >= n {
		return nil
	}
	grow := max(n, len(k)/4)
	need := int64(len(k)+grow) * int64(unsafe.Sizeof(hyperpolygraph.Edge{}))
	if err := p.ask(need, fmt.Sprintf("pruning's known edges (%d, growing by %d)", len(k), grow)); err != nil {
		return err
	}
	p.g.Known = slices.Grow(k, grow)
	return nil
}

// reserveKnown makes room, in one move, for the known edges the first
// pass is expected to add when each key's version order turns out a chain:
// a WW edge per writer of a key with pairs but its first, and an RW edge
// per known read of such a key from a writer other than T⊥ (at most as
// many as g.Known holds). Growing by quarters instead copies the edges
// several times and leaves each old array to the collector (2.5 s of 42 s
// CPU on a 300,000-transaction SI check). The budget's refusal is not an
// error here: growKnown asks again, for less, when an edge needs room.
func (p *pruner) reserveKnown() {
	g := p.g
	est := 0
	for x, ws := range g.Writers {
		n := len(ws)
		if n > 0 && ws[0] == history.InitTxn {
			n--
		}
		if n < 2 {
			continue
		}
		est += n - 1
		if x < len(g.Reads) {
			for _, rd := range g.Reads[x] {
				if rd.Writer >= 0 && rd.Writer != history.InitTxn {
					est++
				}
			}
		}
	}
	k := g.Known
	est = min(est, len(k))
	if cap(k)-len(k) >= est {
		return
	}
	need := int64(len(k)+est) * int64(unsafe.Sizeof(hyperpolygraph.Edge{}))
	if p.fit(need, fmt.Sprintf("pruning's known edges (%d, growing by %d)", len(k), est)) == nil {
		// Exactly: slices.Grow would round up by quarters.
		g.Known = append(make([]hyperpolygraph.Edge, 0, len(k)+est), k...)
	}
}

// clipKnown gives back, at the end of pruning, the room g.Known has past
// an eighth of its length, when the budget lets the edges move: the rest
// of the check holds them, and a compacted pass-one array is nearly twice
// too large.
func (p *pruner) clipKnown() {
	k := p.g.Known
	if cap(k)-len(k) <= len(k)/8 {
		return
	}
	need := int64(len(k)) * int64(unsafe.Sizeof(hyperpolygraph.Edge{}))
	if p.fit(need, fmt.Sprintf("pruning's known edges (%d, moved to a clipped array)", len(k))) == nil {
		p.g.Known = slices.Clone(k)
	}
}

// ask asks the memory budget whether need more bytes fit, before an
// allocation that grows with the graph; its refusal is ErrTooLarge.
func (p *pruner) ask(need int64, what string) error {
	if err := p.fit(need, what); err != nil {
		return budgetError{err}
	}
	return nil
}

// growFit returns s with room for n more elements. When the array must
// move, it grows by a quarter at least, after asking the budget for the
// new one.
func growFit[T any](p *pruner, s []T, n int, what string) ([]T, error) {
	if cap(s)-len(s) >= n {
		return s, nil
	}
	var zero T
	grow := max(n, len(s)/4)
	if err := p.ask(int64(len(s)+grow)*int64(unsafe.Sizeof(zero)), what); err != nil {
		return s, err
	}
	return slices.Grow(s, grow), nil
}
