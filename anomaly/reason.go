package anomaly

import (
	"context"
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Reasoner explains the edges of dependency cycles of one history in plain
// words: what each transaction read and wrote, and why a version order
// holds (the initial version comes first; the later writer read the earlier
// one's version; session order; a list read; a chain of certain
// dependencies that the opposite order would close into a cycle). The
// certain dependency graph it searches for such chains is built on first
// use.
type Reasoner struct {
	h     *history.History
	level history.Level
	// adj is the certain graph (session order, read-from with a single
	// candidate writer, the anti-dependencies these derive), built lazily.
	adj [][]hyperpolygraph.Edge
	// layers is the number of graph states per transaction (SI's doubled
	// graph: 2).
	layers int
	built  bool
	// Fit, when set, is asked before the certain graph is built
	// (memlimit.Budget.Fit); a refusal leaves the reasons without chains
	// of certain dependencies, never the check without its verdict.
	Fit func(need int64, what string) error
}

// NewReasoner returns a Reasoner for h checked at level.
func NewReasoner(h *history.History, level history.Level) *Reasoner {
	return &Reasoner{h: h, level: level}
}

// Name renders a transaction the way reasons do: "T<id>", or "T⊥" for the
// initial transaction.
func Name(h *history.History, t history.TxnID) string { return name(h, t) }

func name(h *history.History, t history.TxnID) string {
	if t == history.InitTxn {
		return "T⊥"
	}
	return fmt.Sprintf("T%d", h.Txns[t].ID)
}

// Value renders version v of key k: its value, or "nil" for the value that
// stands for a missing register or an empty list.
func Value(h *history.History, k history.KeyID, v history.ValueID) string { return value(h, k, v) }

func value(h *history.History, k history.KeyID, v history.ValueID) string {
	return h.ValueString(k, v)
}

func writerPhrase(h *history.History, w history.TxnID) string {
	if w == history.InitTxn {
		return "the initial value"
	}
	return "written by " + name(h, w)
}

// Label is the short edge label of graphs: "so", "wr(5)", "rw(x)".
func Label(h *history.History, e hyperpolygraph.Edge) string {
	if e.Key < 0 {
		return e.Rel.String()
	}
	return fmt.Sprintf("%s(%s)", e.Rel, h.KeyString(e.Key))
}

// extRead finds t's external read of k.
func extRead(h *history.History, t history.TxnID, k history.KeyID) (history.ExtRead, bool) {
	if t == history.InitTxn {
		return history.ExtRead{}, false
	}
	for _, r := range h.Index().Reads(t) {
		if r.Key == k {
			return r, true
		}
	}
	return history.ExtRead{}, false
}

// finalWrite returns t's final write of k, or -1.
func finalWrite(h *history.History, t history.TxnID, k history.KeyID) history.ValueID {
	if t == history.InitTxn {
		for _, op := range h.Txns[t].Ops {
			if op.Key == k {
				return op.Value
			}
		}
		return -1
	}
	for _, w := range h.Index().Writes(t) {
		if w.Key == k {
			return w.Value
		}
	}
	return -1
}

func nameList(h *history.History, ts []history.TxnID) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, name(h, t))
	}
	switch len(parts) {
	case 0:
		return "no transaction"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Reason explains e in one sentence that ends with the relation in
// parentheses, e.g. "T3 read key 5 = 7, which only T1 wrote (wr)".
func (r *Reasoner) Reason(e hyperpolygraph.Edge) string {
	h := r.h
	from, to := name(h, e.From), name(h, e.To)
	switch e.Rel {
	case history.SO:
		if e.From == history.InitTxn {
			return fmt.Sprintf("the initial state T⊥ precedes every transaction, %s included (so)", to)
		}
		return fmt.Sprintf("%s precedes %s in session %d (so)", from, to, h.SessionOf(e.From))
	case history.RT:
		return fmt.Sprintf("%s completed before %s began (real time)", from, to)
	case history.WR:
		return r.wrReason(e)
	case history.WW:
		if e.From == history.InitTxn {
			return fmt.Sprintf("%s overwrote the initial value of key %s (ww)", to, h.KeyString(e.Key))
		}
		s := fmt.Sprintf("%s and %s both wrote key %s; %s's version (%s) is later", from, to, h.KeyString(e.Key), to, verString(h, e.Key, finalWrite(h, e.To, e.Key)))
		if why := r.Why(e.From, e.To, e.Key); why != "" {
			s += " because " + why
		} else {
			s += " in the graph shown (the opposite order closes a cycle of its own)"
		}
		return s + " (ww)"
	case history.RW:
		return r.rwReason(e)
	}
	return fmt.Sprintf("%s %s %s", from, e.Rel, to)
}

func verString(h *history.History, k history.KeyID, v history.ValueID) string {
	if v < 0 {
		return "key " + h.KeyString(k)
	}
	return fmt.Sprintf("key %s = %s", h.KeyString(k), value(h, k, v))
}

func (r *Reasoner) wrReason(e hyperpolygraph.Edge) string {
	h := r.h
	from, to := name(h, e.From), name(h, e.To)
	rd, ok := extRead(h, e.To, e.Key)
	if !ok {
		return fmt.Sprintf("%s read key %s from %s (wr)", to, h.KeyString(e.Key), from)
	}
	cands := h.Index().Candidates(e.To, rd)
	val := value(h, rd.Key, rd.Value)
	switch {
	case len(cands) == 1 && e.From == history.InitTxn:
		return fmt.Sprintf("%s read the initial value of key %s (%s), which no other transaction wrote (wr)", to, h.KeyString(e.Key), val)
	case len(cands) == 1:
		return fmt.Sprintf("%s read key %s = %s, which only %s wrote (wr)", to, h.KeyString(e.Key), val, from)
	}
	return fmt.Sprintf("%s read key %s = %s, which %s all wrote; in the graph shown it read %s's (wr)", to, h.KeyString(e.Key), val, nameList(h, cands), from)
}

func (r *Reasoner) rwReason(e hyperpolygraph.Edge) string {
	h := r.h
	from, to := name(h, e.From), name(h, e.To)
	k := h.KeyString(e.Key)
	rd, ok := extRead(h, e.From, e.Key)
	if !ok {
		return fmt.Sprintf("%s read a version of key %s that %s overwrote (rw)", from, k, to)
	}
	if p := phantomWords(h, e, rd); p != "" {
		return p
	}
	cands := h.Index().Candidates(e.From, rd)
	val := value(h, rd.Key, rd.Value)
	if len(cands) != 1 {
		return fmt.Sprintf("%s overwrote the value %s of key %s that %s read (rw); %s wrote that value, and %s's version follows the one %s read in the graph shown",
			to, val, k, from, nameList(h, cands), to, from)
	}
	w := cands[0]
	if w == history.InitTxn {
		return fmt.Sprintf("%s overwrote the initial value of key %s (%s) that %s read (rw)", to, k, val, from)
	}
	s := fmt.Sprintf("%s overwrote the value %s of key %s that %s read (rw): %s read it from %s, and %s's version is later", to, val, k, from, from, name(h, w), to)
	if why := r.Why(w, e.To, e.Key); why != "" {
		return s + " because " + why
	}
	return s + " in the graph shown (the opposite order closes a cycle of its own)"
}

// Why says why a's version of key k precedes b's, as a clause ("T2 read
// key 5 = 1 from T1 before writing it"), or returns "" when no reason is
// certain on its own: the order is then one the checker had to choose, and
// the counterexample's case analysis shows that the other order fails too.
func (r *Reasoner) Why(a, b history.TxnID, k history.KeyID) string {
	h := r.h
	if a == history.InitTxn {
		return "the initial version comes first"
	}
	if rd, ok := extRead(h, b, k); ok {
		if c := h.Index().Candidates(b, rd); len(c) == 1 && c[0] == a {
			return fmt.Sprintf("%s read key %s = %s from %s before writing it", name(h, b), h.KeyString(k), value(h, k, rd.Value), name(h, a))
		}
	}
	ta, tb := &h.Txns[a], &h.Txns[b]
	if b != history.InitTxn && ta.Session == tb.Session && ta.Index < tb.Index {
		return fmt.Sprintf("%s precedes %s in session %d", name(h, a), name(h, b), h.SessionOf(a))
	}
	if va, vb := finalWrite(h, a, k), finalWrite(h, b, k); va >= 0 && vb >= 0 {
		for _, vh := range h.VersionHints {
			if vh.Key == k && vh.Before == va && vh.After == vb {
				return fmt.Sprintf("the lists read at key %s order %s's appends before %s's (a version holds %s's and not %s's)", h.KeyString(k), name(h, a), name(h, b), name(h, a), name(h, b))
			}
		}
		if r.level.NoConflict() {
			for _, vh := range h.NoConflictHints {
				if vh.Key == k && vh.Before == va && vh.After == vb {
					return fmt.Sprintf("%s read the list at key %s before appending to it, and at %s writers of one key see each other, so its appends come right after what it read, before %s's", name(h, a), h.KeyString(k), strings.ToUpper(r.level.String()), name(h, b))
				}
			}
		}
	}
	if path := r.Path(a, b); len(path) > 0 {
		return fmt.Sprintf("of the dependencies %s, which hold for certain: %s's version coming first would close a cycle", r.PathString(path), name(h, b))
	}
	return ""
}

// PathString renders a path as "T1 -wr(5)-> T4 -so-> T2".
func (r *Reasoner) PathString(path []hyperpolygraph.Edge) string {
	var b strings.Builder
	b.WriteString(name(r.h, path[0].From))
	for _, e := range path {
		fmt.Fprintf(&b, " -%s-> %s", Label(r.h, e), name(r.h, e.To))
	}
	return b.String()
}

// maxPathVisits bounds the search of Path.
const maxPathVisits = 1 << 20

// Path returns a shortest path from a to b in the certain dependency graph
// (session order, read-from of values with one possible writer, and the
// anti-dependencies on initial values these give), or nil. At SI the path
// never takes two rw edges in a row, so that closing it with a ww edge gives
// a cycle SI forbids.
func (r *Reasoner) Path(a, b history.TxnID) []hyperpolygraph.Edge {
	r.build()
	if int(a) >= len(r.adj) || int(b) >= len(r.adj) || a == b {
		return nil
	}
	// The states are those of the graph SI is decided on
	// (hyperpolygraph.StateArcs); a path starts in a's "entered otherwise"
	// state.
	layers := r.layers
	type via struct {
		prev int32
		edge hyperpolygraph.Edge
	}
	seen := map[int32]via{}
	start := int32(layers)*int32(a) + int32(layers) - 1
	seen[start] = via{prev: -1}
	queue := []int32{start}
	visits := 0
	for len(queue) > 0 && visits < maxPathVisits {
		s := queue[0]
		queue = queue[1:]
		visits++
		t := s / int32(layers)
		for _, e := range r.adj[t] {
			u1, v1, u2, v2, two := hyperpolygraph.StateArcs(t, int32(e.To), e.Rel == history.RW, layers)
			ns := int32(-1)
			switch {
			case u1 == s:
				ns = v1
			case two && u2 == s:
				ns = v2
			}
			if ns < 0 {
				continue // an rw edge right after an rw edge, at SI
			}
			if _, ok := seen[ns]; ok {
				continue
			}
			seen[ns] = via{prev: s, edge: e}
			if e.To == b {
				var out []hyperpolygraph.Edge
				for x := ns; seen[x].prev >= 0; x = seen[x].prev {
					out = append(out, seen[x].edge)
				}
				for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
					out[i], out[j] = out[j], out[i]
				}
				return out
			}
			queue = append(queue, ns)
		}
	}
	return nil
}

func (r *Reasoner) build() {
	if r.built {
		return
	}
	r.built = true
	r.adj, r.layers = make([][]hyperpolygraph.Edge, len(r.h.Txns)), 1
	// Only the known edges are searched, so the version-order pairs stay
	// unlisted (LazyPairs): a history pruning refuted at a million
	// transactions has about a billion of them.
	g, _, err := hyperpolygraph.BuildContext(context.Background(), r.h, r.level, nil, hyperpolygraph.BuildOptions{LazyPairs: true, Fit: r.Fit})
	if err != nil {
		return // no chains to show; the reasons say what the edges alone say
	}
	r.layers = g.Layers()
	if row, _ := r.level.Row(); row.RealTime {
		g.AddRealTime()
	}
	for _, e := range g.Known {
		if e.Rel == history.WW && e.From == history.InitTxn {
			continue // nothing reaches T⊥
		}
		r.adj[e.From] = append(r.adj[e.From], e)
	}
}

// Reasons explains every edge of c.Edges. The ww edge of a lost update is
// explained as the choice it is: the two orders are mirror images.
func (r *Reasoner) Reasons(c Cycle) []string {
	out := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		if c.Lost != nil && e.Rel == history.WW {
			out[i] = fmt.Sprintf("%s and %s both wrote key %s after reading the same version; whichever is later overwrote the other's update, so say %s's version (%s) is the later one: the other order is the mirror image (ww)",
				name(r.h, e.From), name(r.h, e.To), r.h.KeyString(e.Key), name(r.h, e.To), verString(r.h, e.Key, finalWrite(r.h, e.To, e.Key)))
			continue
		}
		out[i] = r.Reason(e)
	}
	return out
}

// phantomRead returns the predicate read whose row e's reader observed
// absent when e is a predicate anti-dependency that makes a row appear: the
// reader's read of e.Key is a row its predicate read did not return, and
// e.To's version of the row is live (docs/predicates.md, "Dependencies").
//
// Where the reader's first read of the key is another (at RR and RC a
// transaction may read a row again), its first read of the key that is
// such a row, before any write of its own, stands in.
func phantomRead(h *history.History, e hyperpolygraph.Edge, rd history.ExtRead) (*history.Select, bool) {
	if e.Rel != history.RW || e.From == history.InitTxn {
		return nil, false
	}
	if h.Value(rd.Key, rd.Value) != history.EmptyList {
		var ok bool
		if rd, ok = unreturnedRead(h, e.From, e.Key); !ok {
			return nil, false
		}
	}
	_, sel := h.OpAsRead(e.From, int(rd.Op))
	if sel == nil {
		return nil, false
	}
	if v := finalWrite(h, e.To, e.Key); v < 0 || h.Value(e.Key, v) == history.EmptyList {
		return nil, false
	}
	return sel, true
}

// unreturnedRead returns t's first read of k that is a row a predicate
// read did not return, before any write of t to k.
func unreturnedRead(h *history.History, t history.TxnID, k history.KeyID) (history.ExtRead, bool) {
	for j, op := range h.Txns[t].Ops {
		if op.Key != k {
			continue
		}
		if op.Kind.IsWrite() {
			break
		}
		if h.Unreturned(op) {
			return history.ExtRead{Key: k, Value: op.Value, Op: int32(j)}, true
		}
	}
	return history.ExtRead{}, false
}

// phantomWords explains a predicate anti-dependency that makes a row
// appear, or returns "".
func phantomWords(h *history.History, e hyperpolygraph.Edge, rd history.ExtRead) string {
	sel, ok := phantomRead(h, e, rd)
	if !ok {
		return ""
	}
	verb, noun := "wrote", "write"
	for _, op := range h.Txns[e.To].Ops {
		if op.Key == e.Key && op.Kind == history.OpWrite {
			verb, noun = "wrote", "write"
			if op.Src == history.SrcInsert {
				verb, noun = "inserted", "insert"
			}
		}
	}
	saw := "absent"
	if sel.Test != nil {
		saw = "absent or with a value the test rejects"
	}
	return fmt.Sprintf("%s %s row %s = %s, which %s's predicate read of %s did not return: it saw the row %s, before %s's %s (a phantom; rw)",
		name(h, e.To), verb, h.KeyString(e.Key), value(h, e.Key, finalWrite(h, e.To, e.Key)), name(h, e.From), sel.Predicate(), saw, name(h, e.To), noun)
}

// Phantoms counts the edges of cyc that are predicate anti-dependencies
// making a row appear: a transaction's predicate read did not return a
// row that the edge's other transaction wrote.
func Phantoms(h *history.History, cyc []hyperpolygraph.Edge) int {
	n := 0
	for _, e := range cyc {
		if e.Rel != history.RW || e.From == history.InitTxn {
			continue
		}
		if rd, ok := extRead(h, e.From, e.Key); ok {
			if _, ok := phantomRead(h, e, rd); ok {
				n++
			}
		}
	}
	return n
}
