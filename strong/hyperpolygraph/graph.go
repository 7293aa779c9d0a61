// Package hyperpolygraph builds the hyper-polygraph of a history for the
// levels the strong engine decides (those whose row in history.Levels
// names package strong: strict-ser, SER, SI, PSI, PC, mixed): the known graph of certain dependencies (session
// order, read-from with a single candidate writer, and what follows from
// them) and the two constraint sets that stay uncertain: the version order
// of each pair of writers of a key (C^WW) and the writer of each read with
// several candidates (C^WR). Everything is index-based: nodes are TxnIDs,
// edges and constraints live in flat slices.
package hyperpolygraph

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/hyperiso/hyperiso/history"
)

// Edge is a dependency between two transactions. Key is -1 for SO.
type Edge struct {
	From, To history.TxnID
	Rel      history.Rel
	Key      history.KeyID
}

// WWPair is an uncertain version order between two writers of Key: A→B or
// B→A (A < B).
type WWPair struct {
	Key  history.KeyID
	A, B history.TxnID
}

// WRSet is an uncertain read-from: Reader's external read of Key has several
// candidate writers, exactly one of which it read.
type WRSet struct {
	Reader history.TxnID
	Key    history.KeyID
	Value  history.ValueID
	Cands  []history.TxnID
	// Pred: the read is a row a predicate read did not return, of a
	// transaction whose level lets predicate anti-dependencies point
	// backwards (Read.Pred).
	Pred bool
}

// Read is one external read of an included transaction.
type Read struct {
	Reader history.TxnID
	// Writer is the certain writer, or -1 when the read is uncertain.
	Writer history.TxnID
	// Set indexes Graph.WR when the read is uncertain, else -1.
	Set int32
	// Pred: the read is a row a predicate read did not return, of a
	// transaction whose level lets predicate anti-dependencies point
	// backwards (history.Level.PredicateRWFree; set by NewMixed): its RW
	// edges are predicate anti-dependencies (Compatible.IsPred).
	Pred bool
}

// Graph is a hyper-polygraph. Nodes are the history's TxnIDs; only those
// with Included set take part.
type Graph struct {
	H     *history.History
	Level history.Level
	// Included marks T⊥, the committed transactions and the unknown-status
	// transactions taken as committed.
	Included []bool
	// Known holds the certain edges: SO, WR with one candidate. Pruning
	// adds WW, WR and derived RW edges. A key's known WW edges need not be
	// closed transitively (pruning keeps them as a transitive reduction):
	// two writers are known ordered when a path of known WW edges of the
	// key joins them, and the RW edges of a reader of a version go to the
	// version's direct known successors, which reach the later ones.
	Known []Edge
	// WW lists the uncertain version-order pairs, key by key. When Pending
	// is set (BuildOptions.LazyPairs), the pairs of the keys from
	// PendingFrom on are not listed yet: each pair of two of their writers
	// other than T⊥ is uncertain unless known WW edges of the key order it
	// (those pruning drops before it tests a pair). ListPairs lists them.
	WW          []WWPair
	Pending     bool
	PendingFrom history.KeyID
	WR          []WRSet
	// Writers[k] lists the included final writers of key k, ascending.
	Writers [][]history.TxnID
	// Reads[k] lists the external reads of key k by included transactions.
	Reads [][]Read
	// Opt, when set, is the part that exists only for the optional
	// unknown-status transactions taken (SplitOptional).
	Opt *Optional
}

// N returns the number of nodes (TxnIDs, included or not).
func (g *Graph) N() int { return len(g.Included) }

// Violation is a read that no included transaction can have written: the
// history violates every strong level before any ordering is considered.
type Violation struct {
	Reader history.TxnID
	Read   history.ExtRead
}

// Build constructs the hyper-polygraph of h for level (SER or SI). include
// says which unknown-status transactions are taken as committed (nil: none).
// A read whose candidates are all excluded is returned as a Violation.
func Build(h *history.History, level history.Level, include func(history.TxnID) bool) (*Graph, *Violation) {
	g, viol, _ := BuildContext(context.Background(), h, level, include, BuildOptions{})
	return g, viol
}

// BuildOptions bound BuildContext.
type BuildOptions struct {
	// Fit is asked, before the version-order pairs and the known edges are
	// allocated (pairs grow with the square of a key's writers, derived RW
	// edges with its writers times its readers), whether need more bytes
	// fit the memory budget; its error stops the build. Nil: no bound.
	Fit func(need int64, what string) error
	// LazyPairs leaves the version-order pairs unlisted (Graph.Pending):
	// for pruning, which lists each key's pairs while it decides them and
	// keeps only those it cannot, so that the Θ(writers²) list is never
	// held whole. Every other consumer needs them listed.
	LazyPairs bool
}

// BuildContext is Build that gives up, with ctx's error or opt.Fit's, when
// ctx is done or the graph would not fit the memory budget.
func BuildContext(ctx context.Context, h *history.History, level history.Level, include func(history.TxnID) bool, opt BuildOptions) (*Graph, *Violation, error) {
	ix := h.Index()
	n := len(h.Txns)
	g := &Graph{
		H:        h,
		Level:    level,
		Included: make([]bool, n),
		Writers:  make([][]history.TxnID, len(h.Keys)),
		Reads:    make([][]Read, len(h.Keys)),
	}
	for t := range n {
		st := h.Txns[t].Status
		g.Included[t] = t == int(history.InitTxn) || st == history.Committed || (st == history.Unknown && include != nil && include(history.TxnID(t)))
	}
	// Session order as a chain per session (its transitive closure is
	// implied), and T⊥ before each session's first included transaction.
	for _, s := range h.Sessions {
		prev := history.InitTxn
		for _, t := range s.Txns {
			if !g.Included[t] {
				continue
			}
			g.Known = append(g.Known, Edge{From: prev, To: t, Rel: history.SO, Key: -1})
			prev = t
		}
	}
	for t := range n {
		if !g.Included[t] {
			continue
		}
		for _, w := range ix.Writes(history.TxnID(t)) {
			g.Writers[w.Key] = append(g.Writers[w.Key], history.TxnID(t))
		}
	}
	var cands []history.TxnID
	for t := 1; t < n; t++ {
		if t&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		if !g.Included[t] {
			continue
		}
		for _, r := range ix.Reads(history.TxnID(t)) {
			cands = cands[:0]
			for _, w := range ix.Writers(r.Key, r.Value) {
				if w != history.TxnID(t) && g.Included[w] {
					cands = append(cands, w)
				}
			}
			switch len(cands) {
			case 0:
				return g, &Violation{Reader: history.TxnID(t), Read: r}, nil
			case 1:
				g.Known = append(g.Known, Edge{From: cands[0], To: history.TxnID(t), Rel: history.WR, Key: r.Key})
				g.Reads[r.Key] = append(g.Reads[r.Key], Read{Reader: history.TxnID(t), Writer: cands[0], Set: -1})
			default:
				g.Reads[r.Key] = append(g.Reads[r.Key], Read{Reader: history.TxnID(t), Writer: -1, Set: int32(len(g.WR))})
				g.WR = append(g.WR, WRSet{Reader: history.TxnID(t), Key: r.Key, Value: r.Value, Cands: append([]history.TxnID(nil), cands...)})
			}
		}
	}
	g.Pending = opt.LazyPairs
	if err := g.reserve(opt.Fit); err != nil {
		return nil, nil, err
	}
	// T⊥ precedes everything, so its version of a key is the first one.
	for k, ws := range g.Writers {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if len(ws) > 0 && ws[0] == history.InitTxn {
			for _, b := range ws[1:] {
				g.Known = append(g.Known, Edge{From: ws[0], To: b, Rel: history.WW, Key: history.KeyID(k)})
			}
		}
		if !g.Pending {
			g.WW = g.KeyPairs(g.WW, history.KeyID(k))
		}
	}
	// The RW edges from T⊥'s WW edges, the only known ones yet: what
	// DeriveRW(g.Known) gives, in its order, without its map of every
	// read.
	var initReaders []history.TxnID
	for k, ws := range g.Writers {
		if len(ws) == 0 || ws[0] != history.InitTxn {
			continue
		}
		initReaders = initReaders[:0]
		for _, r := range g.Reads[k] {
			if r.Writer == history.InitTxn {
				initReaders = append(initReaders, r.Reader)
			}
		}
		for _, b := range ws[1:] {
			for _, s := range initReaders {
				if s != b {
					g.Known = append(g.Known, Edge{From: s, To: b, Rel: history.RW, Key: history.KeyID(k)})
				}
			}
		}
	}
	return g, nil, nil
}

// reserve allocates g.WW and room in g.Known for what the rest of Build
// adds, after asking fit whether it fits: the pairs of each key's writers,
// T⊥'s version orders and the RW edges they derive from reads of T⊥'s
// version (an upper bound).
func (g *Graph) reserve(fit func(need int64, what string) error) error {
	var pairs, known, derived int64
	for k, ws := range g.Writers {
		w := int64(len(ws))
		if w > 0 && ws[0] == history.InitTxn {
			w--
			known += w
			for _, rd := range g.Reads[k] {
				if rd.Writer == history.InitTxn {
					derived += w
				}
			}
		}
		if !g.Pending {
			pairs += w * (w - 1) / 2
		}
	}
	if fit != nil {
		edge, pair := int64(unsafe.Sizeof(Edge{})), int64(unsafe.Sizeof(WWPair{}))
		need := pairs*pair + (int64(len(g.Known))+known+derived)*edge
		what := fmt.Sprintf("the hyper-polygraph (%d version-order pairs, up to %d known edges)", pairs, int64(len(g.Known))+known+derived)
		if err := fit(need, what); err != nil {
			return err
		}
	}
	if pairs > 0 {
		g.WW = make([]WWPair, 0, pairs)
	}
	g.Known = slices.Grow(g.Known, int(known+derived))
	return nil
}

// KeyPairs appends to dst the pairs of key k's writers other than T⊥, in
// the order Build lists them.
func (g *Graph) KeyPairs(dst []WWPair, k history.KeyID) []WWPair {
	ws := g.Writers[k]
	if len(ws) > 0 && ws[0] == history.InitTxn {
		ws = ws[1:]
	}
	for i, a := range ws {
		for _, b := range ws[i+1:] {
			dst = append(dst, WWPair{Key: k, A: a, B: b})
		}
	}
	return dst
}

// NumPairs returns the number of uncertain version-order pairs, listed or
// pending.
func (g *Graph) NumPairs() int {
	n := len(g.WW)
	if g.Pending {
		for _, ws := range g.Writers[g.PendingFrom:] {
			w := len(ws)
			if w > 0 && ws[0] == history.InitTxn {
				w--
			}
			n += w * (w - 1) / 2
		}
	}
	return n
}

// ListPairs lists the pending pairs in g.WW (after those listed, which
// are of earlier keys), so that g.WW holds every uncertain pair. Pairs
// that known WW edges added since Build order (version hints, pruning
// stopped part way) are listed too: pruning drops them, and so must any
// other consumer that needs g.WW disjoint from the known order.
func (g *Graph) ListPairs() {
	if !g.Pending {
		return
	}
	for k := int(g.PendingFrom); k < len(g.Writers); k++ {
		g.WW = g.KeyPairs(g.WW, history.KeyID(k))
	}
	g.Pending, g.PendingFrom = false, 0
}

// DeriveRW returns the RW edges that follow from the WR and WW edges among
// edges: T→WR(x)→S and T→WW(x)→T' give S→RW(x)→T' (S ≠ T').
func (g *Graph) DeriveRW(edges []Edge) []Edge {
	type kt struct {
		k history.KeyID
		t history.TxnID
	}
	readers := map[kt][]history.TxnID{}
	for _, e := range edges {
		if e.Rel == history.WR {
			readers[kt{e.Key, e.From}] = append(readers[kt{e.Key, e.From}], e.To)
		}
	}
	var out []Edge
	for _, e := range edges {
		if e.Rel != history.WW {
			continue
		}
		for _, s := range readers[kt{e.Key, e.From}] {
			if s != e.To {
				out = append(out, Edge{From: s, To: e.To, Rel: history.RW, Key: e.Key})
			}
		}
	}
	return out
}

// KeyTxn packs a key and a transaction into one map key.
func KeyTxn(k history.KeyID, t history.TxnID) uint64 {
	return uint64(uint32(k))<<32 | uint64(uint32(t))
}

// CandidateWWSuccessors maps KeyTxn(x, t), for every candidate writer t of
// an uncertain read of x, to t's known WW successors on x: what pruning and
// the width-two clauses ask of the writer a read may choose.
func (g *Graph) CandidateWWSuccessors() map[uint64][]history.TxnID {
	succ := map[uint64][]history.TxnID{}
	for _, set := range g.WR {
		for _, t := range set.Cands {
			succ[KeyTxn(set.Key, t)] = nil
		}
	}
	for _, e := range g.Known {
		if e.Rel == history.WW {
			if l, ok := succ[KeyTxn(e.Key, e.From)]; ok {
				succ[KeyTxn(e.Key, e.From)] = append(l, e.To)
			}
		}
	}
	return succ
}
