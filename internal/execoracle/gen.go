package execoracle

import (
	"math"
	"math/rand"
	"slices"
)

// GenOptions shapes Generate's histories.
type GenOptions struct {
	// Level is the level simulated: every transaction at it, or, for Mixed,
	// each at a random level (some at none, which means Default).
	Level, Default   Level
	MinTxns, MaxTxns int // transactions, 2 and 6 by default
	MaxSessions      int // 3 by default
	ListKeys         int // at most this many list keys (1 or more used if > 0)
	RegisterKeys     int // at most this many register keys (0 or more used)
	MaxOps           int // operations per transaction, 4 by default
	PUnknown         float64
	PAborted         float64
	PDup             float64 // chance a written value repeats another's
	PPerturb         float64 // chance the recorded reads are then changed
	Timed            bool    // give transactions real-time intervals (always at StrictSER)
	// The predicates profile (RowKeys > 0): rows 201, 202, ... instead of
	// lists and registers, inserted, updated, deleted, read by key and by
	// predicate reads, with values 1..RowValues (few, so they repeat).
	RowKeys   int
	RowValues int
	PPredRead float64 // chance an operation is a predicate read
	// KeyRangesOnly: predicate reads are key ranges, without value tests.
	KeyRangesOnly bool
}

// DefaultGenOptions are list-append histories with a few registers at level.
func DefaultGenOptions(level Level) GenOptions {
	return GenOptions{Level: level, Default: SER, MinTxns: 2, MaxTxns: 6, MaxSessions: 3, ListKeys: 3,
		RegisterKeys: 2, MaxOps: 4, PUnknown: 0.1, PAborted: 0.08, PDup: 0.15, PPerturb: 0.5,
		Timed: level == StrictSER}
}

// RegisterGenOptions are register-only histories at level.
func RegisterGenOptions(level Level) GenOptions {
	o := DefaultGenOptions(level)
	o.ListKeys, o.RegisterKeys = 0, 2
	return o
}

// PredicateGenOptions is the "predicates" profile at level: a few rows,
// inserts, updates, deletes, point reads that may find a row absent, and
// predicate reads (key ranges, value sets and value ranges), with repeated
// values and unknown outcomes.
func PredicateGenOptions(level Level) GenOptions {
	return GenOptions{Level: level, Default: SER, MinTxns: 2, MaxTxns: 5, MaxSessions: 3, MaxOps: 4,
		PUnknown: 0.15, PAborted: 0.08, PPerturb: 0.5, Timed: level == StrictSER,
		RowKeys: 3, RowValues: 3, PPredRead: 0.3}
}

// firstRow is the first row key of the predicates profile.
const firstRow = 201

// Generate returns a random history: it simulates an execution at the
// level asked (random arbitration, random visible sets closed under that
// level's axioms), records what each read returns, and then, with chance
// PPerturb, changes one or two reads, which often makes it a violation.
func Generate(rng *rand.Rand, opt GenOptions) *History {
	g := &gen{rng: rng, opt: opt}
	g.build()
	g.simulate()
	if rng.Float64() < opt.PPerturb {
		g.perturb()
		if rng.Intn(3) == 0 {
			g.perturb()
		}
	}
	return g.h
}

type gen struct {
	rng  *rand.Rand
	opt  GenOptions
	h    *History
	inC  []bool
	vals map[int64][]int64 // per key, the values written or appended
}

func (g *gen) build() {
	if g.opt.RowKeys > 0 {
		g.buildRows()
		return
	}
	o, rng := g.opt, g.rng
	n := o.MinTxns + rng.Intn(o.MaxTxns-o.MinTxns+1)
	ns := 1 + rng.Intn(max(o.MaxSessions, 1))
	var keys []int64
	if o.ListKeys > 0 {
		for k := range 1 + rng.Intn(o.ListKeys) {
			keys = append(keys, int64(k+1))
		}
	}
	nr := 0
	if o.RegisterKeys > 0 {
		nr = rng.Intn(o.RegisterKeys + 1)
	}
	if len(keys) == 0 && nr == 0 {
		nr = 1
	}
	for k := range nr {
		keys = append(keys, int64(101+k)) // registers are 101 and up
	}
	next := map[int64]int64{}
	g.vals = map[int64][]int64{}
	g.h = &History{Txns: make([]Txn, n)}
	g.inC = make([]bool, n)
	for i := range n {
		t := &g.h.Txns[i]
		g.fate(i, ns)
		if o.Level == Mixed && rng.Intn(5) != 0 {
			t.Level = Level(int(RC) + rng.Intn(int(SER-RC)+1))
		}
		mine := map[int64][]int64{}
		for range 1 + rng.Intn(o.MaxOps) {
			k := keys[rng.Intn(len(keys))]
			if rng.Intn(2) == 0 {
				t.Ops = append(t.Ops, Op{Kind: Read, Key: k}) // filled in, kind fixed below
				continue
			}
			var v int64
			if others := g.othersValues(k, mine[k]); len(others) > 0 && rng.Float64() < o.PDup {
				v = others[rng.Intn(len(others))]
			} else {
				next[k]++
				v = next[k]
			}
			mine[k] = append(mine[k], v)
			t.Ops = append(t.Ops, Op{Kind: Write, Key: k, Value: v})
		}
		for k, vs := range mine {
			g.vals[k] = append(g.vals[k], vs...)
		}
		for j := range t.Ops {
			if t.Ops[j].Key <= 100 { // a list key
				t.Ops[j].Kind += Append - Write
			}
		}
	}
}

// othersValues lists the values other transactions put in k (not in mine).
// fate draws transaction i's session and status, and whether the
// simulation takes it as committed.
func (g *gen) fate(i, sessions int) {
	o, rng, t := g.opt, g.rng, &g.h.Txns[i]
	t.Session = 1 + rng.Intn(sessions)
	switch r := rng.Float64(); {
	case r < o.PAborted:
		t.Status = Aborted
	case r < o.PAborted+o.PUnknown:
		t.Status = Unknown
		g.inC[i] = rng.Intn(2) == 0
	default:
		g.inC[i] = true
	}
}

func (g *gen) othersValues(k int64, mine []int64) []int64 {
	var out []int64
	for _, v := range g.vals[k] {
		if !slices.Contains(mine, v) {
			out = append(out, v)
		}
	}
	return out
}

func (g *gen) simulate() {
	h, rng := g.h, g.rng
	n := len(h.Txns)
	// AR: a random interleaving of the sessions (aborted ones placed too,
	// they just see something).
	bySession := map[int][]int{}
	var sessions []int
	for i, t := range h.Txns {
		if _, ok := bySession[t.Session]; !ok {
			sessions = append(sessions, t.Session)
		}
		bySession[t.Session] = append(bySession[t.Session], i)
	}
	var order []int
	for len(order) < n {
		s := sessions[rng.Intn(len(sessions))]
		if q := bySession[s]; len(q) > 0 {
			order = append(order, q[0])
			bySession[s] = q[1:]
		}
	}
	pos := make([]int, n)
	for d, t := range order {
		pos[t] = d
	}
	vis := make([]uint32, n)
	for d, t := range order {
		var pred uint32 // members of C before t
		for _, u := range order[:d] {
			if g.inC[u] {
				pred |= 1 << u
			}
		}
		vis[t] = g.run(t, pred, order[:d], vis)
	}
	if g.opt.Timed || g.opt.Level == StrictSER {
		for t := range h.Txns {
			if rng.Intn(10) == 0 {
				continue
			}
			tx := &h.Txns[t]
			tx.Timed = true
			tx.Start = int64(10*pos[t] + rng.Intn(6))
			tx.End = tx.Start + int64(rng.Intn(26))
			if tx.Status == Unknown {
				tx.End = math.MaxInt64
			}
		}
	}
}

// level is the level t is simulated at.
func (g *gen) level(t int) Level {
	l := g.opt.Level
	if l == Mixed {
		l = g.h.Txns[t].Level
		if l == LevelNone {
			l = g.opt.Default
		}
	}
	if l == StrictSER {
		l = SER
	}
	return l
}

// run chooses t's visible set among pred (AR-earlier members of C, in
// order before) and fills in t's reads; it returns VIS(t).
func (g *gen) run(t int, pred uint32, before []int, vis []uint32) uint32 {
	h, rng := g.h, g.rng
	tx := &h.Txns[t]
	l := g.level(t)
	if !g.inC[t] {
		l = RC // nobody sees it; its reads mean nothing
	}
	q := []float64{0.1, 0.5, 0.9}[rng.Intn(3)]
	random := func(m uint32) uint32 {
		var s uint32
		for c := m; c != 0; c &= c - 1 {
			b := c & -c
			if rng.Float64() < q {
				s |= b
			}
		}
		return s
	}
	var so, confl uint32
	for u := range t {
		if pred&(1<<u) != 0 && h.Txns[u].Session == tx.Session {
			so |= 1 << u
		}
	}
	for c := pred; c != 0; c &= c - 1 {
		u := lowest(c)
		if conflicts(&h.Txns[u], tx) {
			confl |= 1 << u
		}
	}
	latest := func(m uint32) int {
		for d := len(before) - 1; d >= 0; d-- {
			if m&(1<<before[d]) != 0 {
				return before[d]
			}
		}
		return -1
	}
	appenders := func(k int64) uint32 {
		var m uint32
		for c := pred; c != 0; c &= c - 1 {
			u := lowest(c)
			for _, op := range h.Txns[u].Ops {
				if op.Kind == Append && op.Key == k {
					m |= 1 << u
				}
			}
		}
		return m
	}
	// listClose adds every appender of k AR-before the latest visible one.
	listClose := func(s uint32, k int64) uint32 {
		a := appenders(k)
		w := latest(s & a)
		for _, u := range before {
			if u == w {
				break
			}
			s |= a & (1 << u)
		}
		return s
	}
	var readKeys []int64
	for _, op := range tx.Ops {
		if op.Kind == ReadList {
			readKeys = append(readKeys, op.Key)
		}
	}
	closeAll := func(s uint32) uint32 {
		for {
			old := s
			if l >= RA {
				s |= so
			}
			if l == PSI || l == SI {
				s |= confl
			}
			if l == SER || l == RR {
				s = pred
			}
			if l == CC || l == PSI {
				for c := s; c != 0; c &= c - 1 {
					s |= vis[lowest(c)]
				}
			}
			if l == PC || l == SI {
				if w := latest(s); w >= 0 {
					for _, u := range before {
						if u == w {
							break
						}
						s |= pred & (1 << u)
					}
				}
			}
			for _, k := range readKeys {
				s = listClose(s, k)
			}
			if s == old {
				return s
			}
		}
	}
	var s uint32
	if l != RC {
		start := random(pred)
		if g.opt.RowKeys > 0 && (l == PC || l == SI) {
			// A random prefix: the closure of a random set is most often
			// nearly everything, and snapshots then rarely overlap.
			start = 0
			for _, u := range before[:rng.Intn(len(before)+1)] {
				start |= pred & (1 << u)
			}
		}
		s = closeAll(start)
	}
	if g.opt.RowKeys > 0 {
		return g.readRows(t, l, pred, before, s, so, random)
	}
	own := map[int64][]int64{}
	ownW := map[int64]int64{}
	for j := range tx.Ops {
		op := &tx.Ops[j]
		switch op.Kind {
		case Write:
			ownW[op.Key] = op.Value
		case Append:
			own[op.Key] = append(own[op.Key], op.Value)
		case Read:
			if v, ok := ownW[op.Key]; ok {
				op.Value = v
				continue
			}
			if l == RC {
				s |= random(pred)
			}
			op.Value = 0
			for d := len(before) - 1; d >= 0; d-- {
				u := before[d]
				if s&(1<<u) != 0 && writesReg(&h.Txns[u], op.Key) {
					op.Value = finalWrite(&h.Txns[u], op.Key)
					break
				}
			}
		case ReadList:
			if l == RC {
				s = listClose(s|random(pred), op.Key)
			}
			var e []int64
			if w := latest(s & appenders(op.Key)); w >= 0 {
				for _, u := range before {
					if g.inC[u] {
						for _, o2 := range h.Txns[u].Ops {
							if o2.Kind == Append && o2.Key == op.Key {
								e = append(e, o2.Value)
							}
						}
					}
					if u == w {
						break
					}
				}
			}
			op.List = append(e, own[op.Key]...)
			if op.List == nil {
				op.List = []int64{}
			}
		}
	}
	if l == RC {
		s |= so
	}
	return s
}

func lowest(c uint32) int {
	for i := range 32 {
		if c&(1<<i) != 0 {
			return i
		}
	}
	return -1
}

func conflicts(a, b *Txn) bool {
	writes := func(k OpKind) bool { return k == Write || k == Append || k == Insert || k == Delete }
	for _, x := range a.Ops {
		for _, y := range b.Ops {
			if writes(x.Kind) && writes(y.Kind) && x.Key == y.Key {
				return true
			}
		}
	}
	return false
}

func writesReg(t *Txn, k int64) bool {
	for _, op := range t.Ops {
		if op.Kind == Write && op.Key == k {
			return true
		}
	}
	return false
}

func finalWrite(t *Txn, k int64) int64 {
	var v int64
	for _, op := range t.Ops {
		if op.Kind == Write && op.Key == k {
			v = op.Value
		}
	}
	return v
}

// perturb changes one recorded read of a transaction that may commit.
func (g *gen) perturb() {
	if g.opt.RowKeys > 0 {
		g.perturbRows()
		return
	}
	h, rng := g.h, g.rng
	type ref struct{ t, j int }
	var reads []ref
	for t, tx := range h.Txns {
		if tx.Status == Aborted {
			continue
		}
		for j, op := range tx.Ops {
			if op.Kind == Read || op.Kind == ReadList {
				reads = append(reads, ref{t, j})
			}
		}
	}
	if len(reads) == 0 {
		return
	}
	for range 10 {
		r := reads[rng.Intn(len(reads))]
		op := &h.Txns[r.t].Ops[r.j]
		vals := g.vals[op.Key]
		if op.Kind == Read {
			old := op.Value
			switch {
			case len(vals) > 0 && rng.Intn(4) != 0:
				op.Value = vals[rng.Intn(len(vals))]
			case rng.Intn(2) == 0:
				op.Value = 0
			default:
				op.Value = 900 + int64(rng.Intn(9))
			}
			if op.Value != old {
				return
			}
			continue
		}
		l := slices.Clone(op.List)
		switch rng.Intn(6) {
		case 0: // drop
			if len(l) > 0 {
				i := rng.Intn(len(l))
				l = slices.Delete(l, i, i+1)
			}
		case 1: // swap
			if len(l) > 1 {
				i := rng.Intn(len(l) - 1)
				l[i], l[i+1] = l[i+1], l[i]
			}
		case 2: // insert a foreign or a duplicate element
			v := 900 + int64(rng.Intn(9))
			if len(vals) > 0 && rng.Intn(3) != 0 {
				v = vals[rng.Intn(len(vals))]
			}
			l = slices.Insert(l, rng.Intn(len(l)+1), v)
		case 3: // truncate
			if len(l) > 0 {
				l = l[:rng.Intn(len(l))]
			}
		case 4: // another read's list of the key
			for _, r2 := range reads {
				o2 := h.Txns[r2.t].Ops[r2.j]
				if o2.Kind == ReadList && o2.Key == op.Key && !slices.Equal(o2.List, l) && rng.Intn(2) == 0 {
					l = slices.Clone(o2.List)
					break
				}
			}
		case 5: // extend by a value of the key
			if len(vals) > 0 {
				l = append(l, vals[rng.Intn(len(vals))])
			}
		}
		if !slices.Equal(l, op.List) {
			op.List = l
			return
		}
	}
}
