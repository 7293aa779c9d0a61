// Package anomaly names what a violation is and says why each of its
// dependencies holds. Classify sorts a dependency cycle into the Adya/Elle
// classes (G0, G1c, G-single, G2-item, and lost update: two transactions that
// read the same version of a key and both overwrote it), checks that a cycle
// reported at SI is one that SI forbids (no two consecutive rw edges), and
// Reasoner turns each edge into a sentence a database engineer can check
// against the history ("T3 read key 5 = 7, which only T1 wrote (wr)").
//
// Read-consistency findings (G1a, G1b, thin-air, future read, internal
// consistency) are classified by package history, and the weak levels'
// fractured reads and causality violations by package weak; their class
// names are listed here so that every front end uses the same ones.
package anomaly

import (
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Class names, as reports spell them: the rows of history.Classes, which
// also says what each means and the weakest level that forbids it.
const (
	G0                 = history.G0
	G1a                = history.G1a
	G1b                = history.G1b
	G1c                = history.G1c
	GSingle            = history.GSingle
	G2Item             = history.G2Item
	G2                 = history.G2
	Phantom            = history.Phantom
	PMP                = history.PMP
	LostUpdate         = history.LostUpdate
	FracturedRead      = history.FracturedRead
	CausalityViolation = history.CausalityViolation
	Internal           = history.Internal
)

// Cycle is the classification of one dependency cycle.
type Cycle struct {
	// Class is G0, G1c, G-single, G2-item, lost-update, or, when rw edges
	// come from rows a predicate read did not return, phantom, PMP or G2;
	// empty when Edges is not a cycle.
	Class string
	// Edges is the cycle classified: the input, or, for a lost update, the
	// two-transaction cycle on the key both overwrote.
	Edges []hyperpolygraph.Edge
	// Counts of the edges of Edges by relation.
	WW, WR, RW, SO, RT int
	// Forbidden says whether the level forbids the cycle on its own: every
	// cycle at SER; at SI only a cycle in which no rw edge directly follows
	// another (SI allows write skew, whose two rw edges are adjacent).
	Forbidden bool
	// Lost is set for a lost update.
	Lost *Lost
	// Deduced counts the ww and wr edges of a cycle without rw edges that
	// the history does not state, only the level's search chose: the order
	// of two writes with no list, session or initial state behind it, or a
	// read with several candidate writers. Such a cycle is no G0 or G1c
	// (another choice avoids it, at the price of an anti-dependency), so it
	// is named as if each deduced edge were one.
	Deduced int
}

// Lost is a lost update: A and B both read version Value of Key, installed
// by Writer, and both wrote Key.
type Lost struct {
	A, B   history.TxnID
	Writer history.TxnID
	Key    history.KeyID
	Value  history.ValueID
}

// Cycle returns the two-edge cycle of the lost update: A's version is taken
// to be the earlier one (B overwrote it), so B, which read the version A
// overwrote, anti-depends on A. The other order is the mirror image.
func (l Lost) Cycle() []hyperpolygraph.Edge {
	return []hyperpolygraph.Edge{
		{From: l.A, To: l.B, Rel: history.WW, Key: l.Key},
		{From: l.B, To: l.A, Rel: history.RW, Key: l.Key},
	}
}

// IsCycle reports whether cyc is a non-empty sequence of edges, each ending
// where the next starts and the last where the first starts.
func IsCycle(cyc []hyperpolygraph.Edge) bool {
	if len(cyc) == 0 {
		return false
	}
	for i, e := range cyc {
		if e.To != cyc[(i+1)%len(cyc)].From {
			return false
		}
	}
	return true
}

// AdjacentRW returns the index of the first rw edge of cyc that is directly
// followed (cyclically) by another rw edge, or -1 when there is none.
func AdjacentRW(cyc []hyperpolygraph.Edge) int {
	for i, e := range cyc {
		if e.Rel == history.RW && cyc[(i+1)%len(cyc)].Rel == history.RW {
			return i
		}
	}
	return -1
}

// ForbiddenAt reports whether level forbids a history whose dependency
// graph contains cyc: SER (and strict SER) forbids every cycle; SI every cycle in which no
// two rw edges are adjacent (the induced graph (so ∪ wr ∪ ww);rw? has a
// cycle exactly then). Weak levels are decided on commit orders, not here.
func ForbiddenAt(level history.Level, cyc []hyperpolygraph.Edge) bool {
	if !IsCycle(cyc) {
		return false
	}
	switch level {
	case history.SER, history.StrictSER:
		return true
	case history.SI:
		return AdjacentRW(cyc) < 0
	}
	return false
}

// Classify names cyc at level. A cycle among whose transactions two read
// the same version of a key and both wrote it is reported as a lost update,
// with the two-transaction cycle that follows from that alone (it is
// forbidden at SER and at SI).
func Classify(h *history.History, level history.Level, cyc []hyperpolygraph.Edge) Cycle {
	if !IsCycle(cyc) {
		return Cycle{Edges: cyc}
	}
	var txns []history.TxnID
	for _, e := range cyc {
		txns = append(txns, e.From)
	}
	if l, ok := FindLostUpdate(h, txns); ok && level.AtLeast(history.PSI) {
		// A cycle that already is the lost update's ww+rw pair keeps its
		// orientation.
		if len(cyc) == 2 && cyc[0].Key == l.Key && cyc[1].Key == l.Key {
			switch {
			case cyc[0].Rel == history.WW && cyc[1].Rel == history.RW:
				l.A, l.B = cyc[0].From, cyc[0].To
			case cyc[1].Rel == history.WW && cyc[0].Rel == history.RW:
				l.A, l.B = cyc[1].From, cyc[1].To
			}
		}
		c := count(l.Cycle())
		c.Class, c.Lost, c.Forbidden = LostUpdate, &l, true
		return c
	}
	c := count(cyc)
	c.Forbidden = ForbiddenAt(level, cyc)
	if c.RW == 0 && c.WW+c.WR > 0 {
		c.Deduced = deduced(h, cyc)
	}
	pred := 0
	if c.RW > 0 {
		pred = Phantoms(h, cyc)
	}
	switch {
	case pred > 0 && c.RW == 1:
		c.Class = predicateSingle(h, cyc)
	case pred > 0:
		c.Class = G2
	case c.Deduced == 1:
		c.Class = GSingle
	case c.Deduced > 1:
		c.Class = G2Item
	case c.RW == 1:
		c.Class = GSingle
	case c.RW > 1:
		c.Class = G2Item
	case c.WR > 0:
		c.Class = G1c
	case c.WW > 0:
		c.Class = G0
	default:
		// Session and real-time order alone cannot form a cycle; name it
		// by its strongest relation all the same.
		c.Class = G1c
	}
	return c
}

// predicateSingle names a cycle whose one rw edge is a predicate
// anti-dependency of T's predicate read α: PMP when the edge that closes
// the cycle into T is a row another predicate read of T, over other keys,
// returned (T's predicate reads saw different transactions before them),
// phantom otherwise (T missed a row of a transaction it saw).
func predicateSingle(h *history.History, cyc []hyperpolygraph.Edge) string {
	for i, e := range cyc {
		if e.Rel != history.RW {
			continue
		}
		rd, _ := extRead(h, e.From, e.Key)
		a, _ := phantomRead(h, e, rd)
		if a == nil {
			continue // an item anti-dependency: not this cycle's one rw
		}
		in := cyc[(i+len(cyc)-1)%len(cyc)]
		if in.Rel != history.WR {
			return Phantom
		}
		if rd, ok := extRead(h, in.To, in.Key); ok {
			if _, b := h.OpAsRead(in.To, int(rd.Op)); b != nil && !b.SamePredicate(*a) {
				return PMP
			}
		}
		return Phantom
	}
	return Phantom
}

// deduced counts the edges of cyc that Cycle.Deduced describes. A ww edge
// A → B is stated when A is T⊥ or reaches B through what the history
// states at every level: session order, reads with one candidate writer,
// and the version orders of list reads (History.HintsAt); a wr edge when
// its read has one candidate writer.
func deduced(h *history.History, cyc []hyperpolygraph.Edge) int {
	var succ [][]history.TxnID
	n := 0
	for _, e := range cyc {
		switch e.Rel {
		case history.WW:
			if e.From == history.InitTxn {
				continue
			}
			if succ == nil {
				succ = statedGraph(h)
			}
			if !reaches(succ, e.From, e.To) {
				n++
			}
		case history.WR:
			if !singleWriter(h, e) {
				n++
			}
		}
	}
	return n
}

// statedGraph returns the successors of each transaction in session order,
// single-candidate read-from and list version orders.
func statedGraph(h *history.History) [][]history.TxnID {
	ix := h.Index()
	succ := make([][]history.TxnID, len(h.Txns))
	for _, s := range h.Sessions {
		for i := 1; i < len(s.Txns); i++ {
			succ[s.Txns[i-1]] = append(succ[s.Txns[i-1]], s.Txns[i])
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		for _, r := range ix.Reads(history.TxnID(t)) {
			if c := ix.Candidates(history.TxnID(t), r); len(c) == 1 {
				succ[c[0]] = append(succ[c[0]], history.TxnID(t))
			}
		}
	}
	for _, he := range h.HintEdges(h.HintsAt(history.RC), func(history.TxnID) bool { return true }) {
		succ[he.From] = append(succ[he.From], he.To)
	}
	return succ
}

// reaches reports whether a path leads from a to b in succ.
func reaches(succ [][]history.TxnID, a, b history.TxnID) bool {
	seen := map[history.TxnID]bool{a: true}
	stack := []history.TxnID{a}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range succ[u] {
			if v == b {
				return true
			}
			if !seen[v] {
				seen[v] = true
				stack = append(stack, v)
			}
		}
	}
	return false
}

// singleWriter reports whether the read behind wr edge e has e.From as its
// only candidate writer.
func singleWriter(h *history.History, e hyperpolygraph.Edge) bool {
	rd, ok := extRead(h, e.To, e.Key)
	if !ok {
		return true
	}
	c := h.Index().Candidates(e.To, rd)
	return len(c) == 1 && c[0] == e.From
}

func count(cyc []hyperpolygraph.Edge) Cycle {
	c := Cycle{Edges: cyc}
	for _, e := range cyc {
		switch e.Rel {
		case history.WW:
			c.WW++
		case history.WR:
			c.WR++
		case history.RW:
			c.RW++
		case history.SO:
			c.SO++
		case history.RT:
			c.RT++
		}
	}
	return c
}

// FindLostUpdate looks among txns for two committed transactions that read
// the same version of a key before writing the key themselves. The version
// must be certain: the value read has exactly one possible writer (for
// both readers the same one).
func FindLostUpdate(h *history.History, txns []history.TxnID) (Lost, bool) {
	ix := h.Index()
	type ver struct {
		k history.KeyID
		v history.ValueID
	}
	first := map[ver]history.TxnID{}
	seen := map[history.TxnID]bool{}
	for _, t := range txns {
		if t == history.InitTxn || seen[t] || h.Txns[t].Status != history.Committed {
			continue
		}
		seen[t] = true
		writes := map[history.KeyID]bool{}
		for _, w := range ix.Writes(t) {
			writes[w.Key] = true
		}
		for _, r := range ix.Reads(t) {
			// An external read is the transaction's first access to the
			// key, so it comes before the transaction's write.
			if !writes[r.Key] {
				continue
			}
			cands := ix.Candidates(t, r)
			if len(cands) != 1 {
				continue
			}
			v := ver{r.Key, r.Value}
			if a, ok := first[v]; ok {
				// Both read the only writer's version: the same version,
				// unless one of them is that writer (Candidates excludes it).
				if other := ix.Candidates(a, history.ExtRead{Key: r.Key, Value: r.Value}); len(other) == 1 && other[0] == cands[0] {
					return Lost{A: a, B: t, Writer: cands[0], Key: r.Key, Value: r.Value}, true
				}
				continue
			}
			first[v] = t
		}
	}
	return Lost{}, false
}

// Describe says in one sentence what the cycle shows, naming its
// transactions.
func (c Cycle) Describe(h *history.History, level history.Level) string {
	var b strings.Builder
	switch {
	case c.Deduced > 0:
		fmt.Fprintf(&b, "%s: a cycle of %s, %d of them deduced rather than stated (the order of two writes, or which write a read saw); the alternatives close cycles of their own, so every choice needs an anti-dependency: no G0 or G1c, but %s",
			c.Class, relList(c), c.Deduced, map[string]string{GSingle: "read skew (G-single)", G2Item: "an anti-dependency cycle (G2-item)"}[c.Class])
		if c.SO > 0 {
			b.WriteString(" (through session order)")
		}
		return b.String()
	}
	switch c.Class {
	case LostUpdate:
		l := c.Lost
		fmt.Fprintf(&b, "lost update: %s and %s both read key %s = %s (%s) and both wrote key %s; whichever wrote last overwrote an update it never saw",
			name(h, l.A), name(h, l.B), h.KeyString(l.Key), value(h, l.Key, l.Value), writerPhrase(h, l.Writer), h.KeyString(l.Key))
	case G0:
		fmt.Fprintf(&b, "G0 (write cycle): the versions the transactions installed are ordered in a cycle of %d ww edges", c.WW)
	case G1c:
		fmt.Fprintf(&b, "G1c (circular information flow): a cycle of %s in which each transaction depends on the previous one's writes", relList(c))
	case GSingle:
		fmt.Fprintf(&b, "G-single (read skew): a cycle with exactly one anti-dependency (rw) edge: one transaction missed a write that the others, in order, saw or overwrote")
	case G2Item, G2:
		if c.Class == G2 {
			fmt.Fprintf(&b, "G2 (anti-dependency cycle through a predicate): a cycle with %d rw edges, %d of them from a row that a predicate read did not return; each transaction missed a write of the next one", c.RW, Phantoms(h, c.Edges))
		} else {
			fmt.Fprintf(&b, "G2-item (anti-dependency cycle): a cycle with %d rw edges; each transaction missed a write of the next one", c.RW)
		}
		if level == history.SI && c.Forbidden {
			b.WriteString("; no two rw edges are adjacent, so it is not mere write skew and SI forbids it too")
		}
	case Phantom:
		b.WriteString("phantom: a predicate read did not return a row whose write its transaction saw, directly or through the others of the cycle (one anti-dependency, from a predicate)")
	case PMP:
		b.WriteString("PMP (predicate-many-preceders): two predicate reads of one transaction, over different keys, saw different transactions before them: one returned a row of a transaction whose row the other did not return")
	default:
		return "not a cycle"
	}
	if c.SO > 0 && c.Class != LostUpdate {
		b.WriteString(" (through session order)")
	}
	if c.RT > 0 && c.Class != LostUpdate {
		b.WriteString(" (through real-time order)")
	}
	if !c.Forbidden && level == history.SI {
		b.WriteString("; note: two rw edges are adjacent, a pattern SI allows on its own")
	}
	return b.String()
}

func relList(c Cycle) string {
	var parts []string
	if c.WW > 0 {
		parts = append(parts, fmt.Sprintf("%d ww", c.WW))
	}
	if c.WR > 0 {
		parts = append(parts, fmt.Sprintf("%d wr", c.WR))
	}
	if c.SO > 0 {
		parts = append(parts, fmt.Sprintf("%d so", c.SO))
	}
	if c.RT > 0 {
		parts = append(parts, fmt.Sprintf("%d rt", c.RT))
	}
	return strings.Join(parts, ", ") + " edges"
}

// Story tells the cycle as one sentence, edge by edge, e.g. "T8 precedes
// T10 in session 1, T10 did not see T65's write of key 377, and T65 did not
// see T8's write of key 290, so no serial order fits".
func (c Cycle) Story(h *history.History, level history.Level) string {
	if c.Class == "" {
		return ""
	}
	if c.Class == LostUpdate {
		l := c.Lost
		return fmt.Sprintf("%s and %s both read key %s = %s and then both wrote key %s, each without seeing the other's write, so one of the two updates was lost",
			name(h, l.A), name(h, l.B), h.KeyString(l.Key), value(h, l.Key, l.Value), h.KeyString(l.Key))
	}
	var parts []string
	for _, e := range c.Edges {
		from, to := name(h, e.From), name(h, e.To)
		switch e.Rel {
		case history.SO:
			parts = append(parts, fmt.Sprintf("%s precedes %s in session %d", from, to, h.SessionOf(e.To)))
		case history.WR:
			parts = append(parts, fmt.Sprintf("%s saw %s's write of key %s", to, from, h.KeyString(e.Key)))
		case history.WW:
			parts = append(parts, fmt.Sprintf("%s overwrote %s's write of key %s", to, from, h.KeyString(e.Key)))
		case history.RW:
			parts = append(parts, fmt.Sprintf("%s did not see %s's write of key %s", from, to, h.KeyString(e.Key)))
		case history.RT:
			parts = append(parts, fmt.Sprintf("%s finished before %s started", from, to))
		}
	}
	s := parts[0]
	if len(parts) > 1 {
		s = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	if level == history.SI {
		return s + ", so no order of commits and snapshots fits them all"
	}
	return s + ", so no serial order fits them all"
}
