package execoracle

// The generator's rows: predicate reads, inserts and deletes over a
// closed key universe, simulated and then perturbed like registers.

import (
	"slices"
)

// buildRows is build for the predicates profile.
func (g *gen) buildRows() {
	o, rng := g.opt, g.rng
	n := o.MinTxns + rng.Intn(o.MaxTxns-o.MinTxns+1)
	ns := 1 + rng.Intn(max(o.MaxSessions, 1))
	nv := max(o.RowValues, 1)
	g.vals = map[int64][]int64{}
	for k := range o.RowKeys {
		for v := range nv {
			g.vals[int64(firstRow+k)] = append(g.vals[int64(firstRow+k)], int64(v+1))
		}
	}
	g.h = &History{Txns: make([]Txn, n)}
	g.inC = make([]bool, n)
	levels := []Level{RC, RA, CC, RR, PC, PSI, SI, SER}
	for i := range n {
		t := &g.h.Txns[i]
		g.fate(i, ns)
		if o.Level == Mixed && rng.Intn(5) != 0 {
			t.Level = levels[rng.Intn(len(levels))]
		}
		for range 1 + rng.Intn(o.MaxOps) {
			k := int64(firstRow + rng.Intn(o.RowKeys))
			v := int64(1 + rng.Intn(nv))
			switch r := rng.Float64(); {
			case r < o.PPredRead:
				t.Ops = append(t.Ops, Op{Kind: PredRead, Pred: g.randomPred()}) // rows filled in later
			case r < o.PPredRead+(1-o.PPredRead)*0.45:
				t.Ops = append(t.Ops, Op{Kind: Read, Key: k}) // value (or absence) filled in later
			case r < o.PPredRead+(1-o.PPredRead)*0.7:
				t.Ops = append(t.Ops, I(k, v))
			case r < o.PPredRead+(1-o.PPredRead)*0.85:
				t.Ops = append(t.Ops, W(k, v))
			default:
				t.Ops = append(t.Ops, D(k))
			}
		}
		// Half the transactions read first, then write: the shape of write
		// skew and of most anomalies through predicates.
		if rng.Intn(2) == 0 {
			slices.SortStableFunc(t.Ops, func(a, b Op) int {
				isRead := func(o Op) int {
					if o.Kind == Read || o.Kind == PredRead {
						return 0
					}
					return 1
				}
				return isRead(a) - isRead(b)
			})
		}
	}
}

// randomPred is a key range over the rows (sometimes all of them, with a
// key on either side that no operation names), and sometimes a value test
// (never with KeyRangesOnly).
func (g *gen) randomPred() *Predicate {
	o, rng := g.opt, g.rng
	p := &Predicate{Lo: firstRow - 1, Hi: int64(firstRow + o.RowKeys + 1)}
	if rng.Intn(3) != 0 {
		p.Lo = int64(firstRow + rng.Intn(o.RowKeys))
		p.Hi = p.Lo + 1 + int64(rng.Intn(firstRow+o.RowKeys-int(p.Lo)))
	}
	if o.KeyRangesOnly {
		return p
	}
	nv := max(o.RowValues, 1)
	switch rng.Intn(6) {
	case 0, 1:
		p.In = []int64{}
		for v := range nv {
			if rng.Intn(2) == 0 {
				p.In = append(p.In, int64(v+1))
			}
		}
	case 2:
		p.VLo = int64(1 + rng.Intn(nv))
		p.VHi = p.VLo + 1 + int64(rng.Intn(nv))
	case 3:
		// Elle's [:mod m r], with the modulus of either sign.
		m := int64(2 + rng.Intn(2))
		p.Mod, p.Rem = m, int64(rng.Intn(int(m)))
		if rng.Intn(2) == 0 {
			p.Mod, p.Rem = -m, -p.Rem
		}
	}
	return p
}

// rowEffect is what t's operations leave of row k: live with a value, or
// deleted; ok is false if t does not write k.
func rowEffect(t *Txn, k int64) (live bool, val int64, ok bool) {
	for _, op := range t.Ops {
		if op.Key != k || op.Kind == PredRead {
			continue
		}
		switch op.Kind {
		case Write, Insert:
			live, val, ok = true, op.Value, true
		case Delete:
			live, val, ok = false, 0, true
		}
	}
	return live, val, ok
}

// readRows fills in t's reads in the predicates profile and returns
// VIS(t). s is VIS(t) already chosen (levels other than RC); at RC and RR
// each read gets a set of its own, growing along the transaction, a
// predicate read one per row; at RR a point read, and a row a predicate
// read returns, is read at its AR-latest version.
func (g *gen) readRows(t int, l Level, pred uint32, before []int, s, so uint32, random func(uint32) uint32) uint32 {
	tx := &g.h.Txns[t]
	type ver struct {
		live bool
		val  int64
	}
	seen := func(k int64, v uint32) ver {
		for d := len(before) - 1; d >= 0; d-- {
			if u := before[d]; v&(1<<u) != 0 {
				if live, val, ok := rowEffect(&g.h.Txns[u], k); ok {
					return ver{live, val}
				}
			}
		}
		return ver{}
	}
	latest := func(k int64) uint32 {
		for d := len(before) - 1; d >= 0; d-- {
			if u := before[d]; pred&(1<<u) != 0 {
				if _, _, ok := rowEffect(&g.h.Txns[u], k); ok {
					return 1 << u
				}
			}
		}
		return 0
	}
	chain := l == RC || l == RR
	own := map[int64]ver{}
	var rs uint32
	for j := range tx.Ops {
		op := &tx.Ops[j]
		switch op.Kind {
		case Write, Insert:
			own[op.Key] = ver{true, op.Value}
		case Delete:
			own[op.Key] = ver{}
		case Read, ReadAbsent:
			o, ok := own[op.Key]
			if !ok {
				v := s
				if chain {
					rs |= random(pred)
					if l == RR {
						rs |= latest(op.Key)
					}
					v = rs
				}
				o = seen(op.Key, v)
			}
			op.Kind, op.Value = ReadAbsent, 0
			if o.live {
				op.Kind, op.Value = Read, o.val
			}
		case PredRead:
			op.Rows = []Row{}
			union := rs
			for k := int64(firstRow); k < int64(firstRow+g.opt.RowKeys); k++ {
				if !op.Pred.Covers(k) {
					continue
				}
				o, ok := own[k]
				if !ok && !chain {
					o = seen(k, s)
				} else if !ok {
					vk := rs | random(pred)
					o = seen(k, vk)
					if l == RR && o.live && op.Pred.Match(k, o.val) {
						vk |= latest(k)
						o = seen(k, vk)
					}
					union |= vk
				}
				if o.live && op.Pred.Match(k, o.val) {
					op.Rows = append(op.Rows, Row{k, o.val})
				}
			}
			rs = union
		}
	}
	if l == RC {
		return rs | so
	}
	return s
}

// perturbRows changes one recorded read in the predicates profile.
func (g *gen) perturbRows() {
	h, rng := g.h, g.rng
	type ref struct{ t, j int }
	var reads []ref
	for t, tx := range h.Txns {
		if tx.Status == Aborted {
			continue
		}
		for j, op := range tx.Ops {
			if op.Kind == Read || op.Kind == ReadAbsent || op.Kind == PredRead {
				reads = append(reads, ref{t, j})
			}
		}
	}
	if len(reads) == 0 {
		return
	}
	nv := int64(max(g.opt.RowValues, 1))
	r := reads[rng.Intn(len(reads))]
	op := &h.Txns[r.t].Ops[r.j]
	if op.Kind != PredRead {
		switch {
		case op.Kind == Read && rng.Intn(2) == 0:
			op.Kind, op.Value = ReadAbsent, 0
		default:
			old := *op
			for range 5 {
				op.Kind, op.Value = Read, 1+rng.Int63n(nv)
				if op.Kind != old.Kind || op.Value != old.Value {
					break
				}
			}
		}
		return
	}
	rows := slices.Clone(op.Rows)
	switch rng.Intn(3) {
	case 0: // drop a row
		if len(rows) > 0 {
			i := rng.Intn(len(rows))
			rows = slices.Delete(rows, i, i+1)
			break
		}
		fallthrough
	case 1: // add a matching row of a key it did not return
		for range 5 {
			k, v := int64(firstRow+rng.Intn(g.opt.RowKeys)), 1+rng.Int63n(nv)
			if op.Pred.Match(k, v) && !slices.ContainsFunc(rows, func(r Row) bool { return r.Key == k }) {
				rows = append(rows, Row{k, v})
				break
			}
		}
	case 2: // change a value, within the predicate
		if len(rows) > 0 {
			i := rng.Intn(len(rows))
			for range 5 {
				if v := 1 + rng.Int63n(nv); v != rows[i].Value && op.Pred.Match(rows[i].Key, v) {
					rows[i].Value = v
					break
				}
			}
		}
	}
	op.Rows = rows
}
