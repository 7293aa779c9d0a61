package workload

// The predicate workload: rows that come and go under range reads
// (docs/predicates.md). Keys 1…Keys are rows, all absent at first.

// PointReads is the share of the predicate workload's reads that read one
// row rather than a range.
const PointReads = 0.25

// Rows reports whether the workload inserts, deletes, moves and reads rows
// by key range (Insert, Delete, Move, Select): its store must hold rows
// (collect.RowStore), every key absent at first.
func (w *Workload) Rows() bool { return w.name == "predicate" }

// nextPredicate: Ops operations. Each is a read with probability Reads —
// of one row (PointReads of them) or of a range of 1 to Keys/2 keys
// starting at a uniform key (SELECT … WHERE k BETWEEN lo AND hi) — or
// else, in equal shares, an insert of a unique value, a delete, or a move
// of a row to another key with a unique value (an UPDATE of its key, which
// takes it out of the ranges that hold its old key and into those that
// hold the new one).
func nextPredicate(g *Session) Txn {
	n := g.w.cfg.Keys
	for range g.w.cfg.Ops {
		if g.ops.Float64() < g.w.cfg.Reads {
			if g.ops.Float64() < PointReads {
				g.buf = append(g.buf, Op{Kind: ReadRow, Key: g.key()})
				continue
			}
			lo := g.key()
			hi := min(lo+1+g.ops.Int64N(max(1, n/2)), n+1)
			g.buf = append(g.buf, Op{Kind: Select, Key: lo, To: hi})
			continue
		}
		switch k := g.key(); g.ops.IntN(3) {
		case 0:
			g.buf = append(g.buf, Op{Kind: Insert, Key: k, Value: g.value(k)})
		case 1:
			g.buf = append(g.buf, Op{Kind: Delete, Key: k})
		default:
			// A key other than k, uniformly (Keys >= 2).
			to := 1 + (k+g.ops.Int64N(n-1))%n
			g.buf = append(g.buf, Op{Kind: Move, Key: k, To: to, Value: g.value(to)})
		}
	}
	return Txn{}
}
