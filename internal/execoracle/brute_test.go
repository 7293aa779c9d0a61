package execoracle

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// literal is the unpruned enumeration: every fate, every total order, every
// visible set of every transaction and every per-read set at RC, checked
// against the definitions only once all are chosen. It reads the operations
// directly (not prepare's facts).
type literal struct {
	h            *History
	level, def   Level
	n            int
	inC          []bool
	order        []int
	pos          []int
	vis          []uint32
	rv           [][]uint32   // per transaction, per op: V(α) at RC and RR
	pv           [][][]uint32 // per transaction, per predicate read: each row key's set (RC, RR)
	rows         []int64      // the row keys, ascending
	budget, work int
}

// literalRows lists the keys that start unborn: inserted, deleted, read as
// absent, returned by a predicate read or in one's key range.
func literalRows(h *History) []int64 {
	var out []int64
	var preds []*Predicate
	for _, t := range h.Txns {
		for _, op := range t.Ops {
			if op.Kind == PredRead {
				preds = append(preds, op.Pred)
			}
		}
	}
	for _, t := range h.Txns {
		for _, op := range t.Ops {
			keys := []int64{op.Key}
			if op.Kind == PredRead {
				keys = nil
				for _, r := range op.Rows {
					keys = append(keys, r.Key)
				}
			}
			for _, k := range keys {
				row := op.Kind == Insert || op.Kind == Delete || op.Kind == ReadAbsent || op.Kind == PredRead
				for _, p := range preds {
					row = row || p.Covers(k)
				}
				if row && !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func (b *literal) lvl(t int) Level {
	if b.level != Mixed {
		return b.level
	}
	if l := b.h.Txns[t].Level; l != LevelNone {
		return l
	}
	return b.def
}

func literalSatisfies(h *History, level, def Level, budget int) (ok, done bool) {
	b := &literal{h: h, level: level, def: def, n: len(h.Txns), budget: budget, rows: literalRows(h)}
	var unknown []int
	for i, t := range h.Txns {
		if t.Status == Unknown {
			unknown = append(unknown, i)
		}
	}
	for mask := 0; mask < 1<<len(unknown); mask++ {
		b.inC = make([]bool, b.n)
		var members []int
		for i, t := range h.Txns {
			b.inC[i] = t.Status == Committed
		}
		for j, u := range unknown {
			b.inC[u] = mask&(1<<j) != 0
		}
		for i := range b.n {
			if b.inC[i] {
				members = append(members, i)
			}
		}
		found := false
		permute(members, func(p []int) bool {
			b.order = p
			b.pos = make([]int, b.n)
			for d, t := range p {
				b.pos[t] = d
			}
			b.vis = make([]uint32, b.n)
			b.rv = make([][]uint32, b.n)
			b.pv = make([][][]uint32, b.n)
			found = b.chooseVis(0)
			return found || b.work > b.budget
		})
		if found {
			return true, true
		}
		if b.work > b.budget {
			return false, false
		}
	}
	return false, true
}

func permute(a []int, f func([]int) bool) bool {
	var rec func(k int) bool
	rec = func(k int) bool {
		if k == len(a) {
			return f(slices.Clone(a))
		}
		for i := k; i < len(a); i++ {
			a[k], a[i] = a[i], a[k]
			if rec(k + 1) {
				a[k], a[i] = a[i], a[k]
				return true
			}
			a[k], a[i] = a[i], a[k]
		}
		return false
	}
	return rec(0)
}

// chooseVis picks VIS for order[d], then its per-read sets at RC.
func (b *literal) chooseVis(d int) bool {
	if d == len(b.order) {
		b.work++
		return b.holds()
	}
	t := b.order[d]
	var preds uint32
	for _, u := range b.order[:d] {
		preds |= 1 << u
	}
	for sub := preds; ; sub = (sub - 1) & preds {
		b.vis[t] = sub
		if l := b.lvl(t); l == RC || l == RR {
			b.rv[t] = make([]uint32, len(b.h.Txns[t].Ops))
			b.pv[t] = make([][]uint32, len(b.h.Txns[t].Ops))
			if b.chooseReads(d, t, 0) {
				return true
			}
		} else if b.chooseVis(d + 1) {
			return true
		}
		if sub == 0 || b.work > b.budget {
			return false
		}
	}
}

func (b *literal) chooseReads(d, t, j int) bool {
	ops := b.h.Txns[t].Ops
	if j == len(ops) {
		return b.chooseVis(d + 1)
	}
	if ops[j].Kind == PredRead {
		return b.choosePred(d, t, j, 0, 0)
	}
	if ops[j].Kind != Read && ops[j].Kind != ReadList && ops[j].Kind != ReadAbsent {
		return b.chooseReads(d, t, j+1)
	}
	v := b.vis[t]
	for sub := v; ; sub = (sub - 1) & v {
		b.rv[t][j] = sub
		if b.chooseReads(d, t, j+1) {
			return true
		}
		if sub == 0 || b.work > b.budget {
			return false
		}
	}
}

// choosePred picks, for predicate read j of t, a set for each row key
// (any subset of VIS); rv is their union. holds checks the chain.
func (b *literal) choosePred(d, t, j, i int, union uint32) bool {
	if i == 0 {
		b.pv[t][j] = make([]uint32, len(b.rows))
	}
	if i == len(b.rows) {
		b.rv[t][j] = union
		return b.chooseReads(d, t, j+1)
	}
	if !b.h.Txns[t].Ops[j].Pred.Covers(b.rows[i]) {
		return b.choosePred(d, t, j, i+1, union)
	}
	v := b.vis[t]
	for sub := v; ; sub = (sub - 1) & v {
		b.pv[t][j][i] = sub
		if b.choosePred(d, t, j, i+1, union|sub) {
			return true
		}
		if sub == 0 || b.work > b.budget {
			return false
		}
	}
}

func (b *literal) end(t int) int64 {
	if b.h.Txns[t].Status == Unknown {
		return math.MaxInt64
	}
	return b.h.Txns[t].End
}

func (b *literal) holds() bool {
	h := b.h
	writesKey := func(t int) map[int64]bool {
		m := map[int64]bool{}
		for _, op := range h.Txns[t].Ops {
			if op.Kind == Write || op.Kind == Append || op.Kind == Insert || op.Kind == Delete {
				m[op.Key] = true
			}
		}
		return m
	}
	for _, t := range b.order {
		l := b.lvl(t)
		for _, u := range b.order {
			before := b.pos[u] < b.pos[t]
			if h.Txns[u].Session == h.Txns[t].Session && u < t && !before {
				return false // SO ⊆ AR
			}
			if (b.level == StrictSER || l == StrictSER) && h.Txns[u].Timed && h.Txns[t].Timed && b.end(u) < h.Txns[t].Start && !before {
				return false // RT ⊆ AR
			}
			vis := b.vis[t]&(1<<u) != 0
			if vis && !before {
				return false
			}
			if h.Txns[u].Session == h.Txns[t].Session && u < t && !vis && l != LevelNone {
				return false // SESSION (an RC transaction's VIS too)
			}
			if (l == CC || l == PSI) && vis && b.vis[u]&^b.vis[t] != 0 {
				return false
			}
			if (l == PC || l == SI) && vis {
				for _, w := range b.order[:b.pos[u]] {
					if b.vis[t]&(1<<w) == 0 {
						return false
					}
				}
			}
			if (l == PSI || l == SI) && before && !vis {
				wu, wt := writesKey(u), writesKey(t)
				for k := range wt {
					if wu[k] {
						return false
					}
				}
			}
			if (l == SER || l == StrictSER || l == RR) && before && !vis {
				return false
			}
		}
		if l == RC || l == RR {
			// Each read's set contains the previous read's; a predicate
			// read's is the union of its keys' sets, each containing the
			// previous read's.
			var prev uint32
			for j, op := range h.Txns[t].Ops {
				if op.Kind == PredRead {
					for i, s := range b.pv[t][j] {
						if op.Pred.Covers(b.rows[i]) && prev&^s != 0 {
							return false
						}
					}
				}
				switch op.Kind {
				case PredRead: // the next read's set contains every key's (and so this one's)
					prev |= b.rv[t][j]
				case Read, ReadList, ReadAbsent:
					if prev&^b.rv[t][j] != 0 {
						return false
					}
					prev = b.rv[t][j]
				}
			}
		}
		for j, op := range h.Txns[t].Ops {
			v := b.vis[t]
			if l == RC || l == RR {
				v = b.rv[t][j]
			}
			if !b.readHolds(t, j, op, v) {
				return false
			}
			if l == RR && !b.itemsLatest(t, j, op) {
				return false
			}
		}
	}
	return true
}

// lastWriter is the AR-last member of v whose operations write, insert,
// delete or append to k, or -1.
func (b *literal) lastWriter(v uint32, k int64) int {
	w := -1
	for _, u := range b.order {
		if v&(1<<u) == 0 {
			continue
		}
		for _, o := range b.h.Txns[u].Ops {
			if o.Key == k && (o.Kind == Write || o.Kind == Insert || o.Kind == Delete || o.Kind == Append) {
				w = u
			}
		}
	}
	return w
}

// rowState is what t sees of key k just before its op j when its reads
// see v: its own latest write, insert or delete of k before j if any, else
// the final one of the AR-last member of v that has one, else T⊥'s (row
// keys unborn, registers 0). own says whether it came from t.
func (b *literal) rowState(t, j int, k int64, v uint32) (live bool, val int64, own bool) {
	h := b.h
	set := func(o Op) {
		switch o.Kind {
		case Write, Insert:
			live, val = true, o.Value
		case Delete:
			live, val = false, 0
		}
	}
	for _, o := range h.Txns[t].Ops[:j] {
		if o.Key == k && (o.Kind == Write || o.Kind == Insert || o.Kind == Delete) {
			set(o)
			own = true
		}
	}
	if own {
		return live, val, true
	}
	live = !slices.Contains(b.rows, k)
	if w := b.lastWriter(v, k); w >= 0 {
		for _, o := range h.Txns[w].Ops {
			if o.Key == k {
				set(o)
			}
		}
	}
	return live, val, false
}

// itemsLatest is RR's rule: every item op j of t observes from the store
// (a point read, a list read, a row its predicate read returned) is read
// at the version of the AR-last writer before t, which is in the read's
// set.
func (b *literal) itemsLatest(t, j int, op Op) bool {
	latestIn := func(k int64, v uint32) bool {
		w := b.lastWriter(b.vis[t], k)
		return w < 0 || v&(1<<w) != 0
	}
	switch op.Kind {
	case Read, ReadAbsent:
		if _, _, own := b.rowState(t, j, op.Key, 0); own {
			return true
		}
		return latestIn(op.Key, b.rv[t][j])
	case ReadList:
		return latestIn(op.Key, b.rv[t][j])
	case PredRead:
		for _, r := range op.Rows {
			i := slices.Index(b.rows, r.Key)
			if _, _, own := b.rowState(t, j, r.Key, 0); !own && i >= 0 && !latestIn(r.Key, b.pv[t][j][i]) {
				return false
			}
		}
	}
	return true
}

func (b *literal) readHolds(t, j int, op Op, v uint32) bool {
	h := b.h
	if slices.Contains(b.rows, op.Key) && (op.Kind == Read || op.Kind == ReadAbsent) {
		live, val, _ := b.rowState(t, j, op.Key, v)
		return live == (op.Kind == Read) && (!live || val == op.Value)
	}
	switch op.Kind {
	case ReadAbsent: // of a register: never
		return false
	case PredRead:
		// The rows that match, each seen with its key's own set (RC and
		// RR) or with v, as a set equal to the rows returned.
		got := map[int64]int64{}
		for i, k := range b.rows {
			s := v
			if b.pv[t] != nil && b.pv[t][j] != nil {
				s = b.pv[t][j][i]
			}
			if live, val, _ := b.rowState(t, j, k, s); live && op.Pred.Match(k, val) {
				got[k] = val
			}
		}
		if len(got) != len(op.Rows) {
			return false
		}
		for _, r := range op.Rows {
			if w, ok := got[r.Key]; !ok || w != r.Value {
				return false
			}
		}
		return true
	case Read:
		own, has := int64(0), false
		for _, o := range h.Txns[t].Ops[:j] {
			if o.Kind == Write && o.Key == op.Key {
				own, has = o.Value, true
			}
		}
		if has {
			return op.Value == own
		}
		want := int64(0)
		for _, u := range b.order {
			if v&(1<<u) != 0 {
				for _, o := range h.Txns[u].Ops {
					if o.Kind == Write && o.Key == op.Key {
						want = o.Value
					}
				}
			}
		}
		return op.Value == want
	case ReadList:
		var own []int64
		for _, o := range h.Txns[t].Ops[:j] {
			if o.Kind == Append && o.Key == op.Key {
				own = append(own, o.Value)
			}
		}
		blk := func(u int) []int64 {
			var bl []int64
			for _, o := range h.Txns[u].Ops {
				if o.Kind == Append && o.Key == op.Key {
					bl = append(bl, o.Value)
				}
			}
			return bl
		}
		wmax := -1
		for _, u := range b.order {
			if v&(1<<u) != 0 && len(blk(u)) > 0 {
				wmax = u
			}
		}
		var state []int64
		if wmax >= 0 {
			for _, u := range b.order[:b.pos[wmax]+1] {
				if bl := blk(u); len(bl) > 0 {
					if v&(1<<u) == 0 {
						return false
					}
					state = append(state, bl...)
				}
			}
		}
		return slices.Equal(op.List, append(state, own...))
	}
	return true
}

func TestPrunedAgreesWithLiteral(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	compared, skipped := 0, 0
	for _, l := range genLevels {
		for range 300 {
			o := DefaultGenOptions(l)
			o.MaxTxns, o.MaxOps, o.MaxSessions = 4, 3, 2
			if rng.Intn(2) == 0 {
				o.RegisterKeys = 1
				o.ListKeys = 1 + rng.Intn(2)
			}
			h := Generate(rng, o)
			want, done := literalSatisfies(h, l, SER, 300000)
			if !done {
				skipped++
				continue
			}
			compared++
			if got := decideGen(t, h, l); got != want {
				t.Fatalf("%v: pruned search says %v, literal enumeration %v\n%s", l, got, want, h.JSONL())
			}
		}
	}
	t.Logf("%d histories compared, %d too large for the literal enumeration", compared, skipped)
}
