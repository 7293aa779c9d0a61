// Package prune owns the reachability of the known graph of a
// hyper-polygraph (bitset rows, or per-chain vectors over a chain cover,
// filled in reverse topological order) and the width-one pruning fixpoint that runs before encoding: a version-order
// option or a read-from candidate whose edges, together with the RW edges
// they derive from known edges, would close a cycle with known edges is
// dropped, and a constraint left with one option becomes known.
//
// For SER the graph is SO ∪ WR ∪ WW ∪ RW. For SI it is the doubled graph in
// which every transaction v has two states: v1, entered by an SO, WR or WW
// edge, and v0, entered by an RW edge. A non-RW edge a→b becomes a0→b1 and
// a1→b1, an RW edge a→b becomes a1→b0. A cycle of the doubled graph is a
// cycle in which every RW edge follows a non-RW edge, so the doubled graph is
// acyclic iff the induced SI graph (SO ∪ WR ∪ WW) ; RW? is.
//
// Internally v1 has every successor of v0 (a1→b1 for each a0→b1), so the
// state graph stores only a0→b1 and lets v1 inherit v0's successors: v1's
// row is v0's row plus v1's RW successors. The inheritance is an ordering
// constraint v1 before v0, which closes no cycle: v0 ⇝ v1 would start with
// an edge v1 has too.
//
// Files by concern:
//
//	fixpoint.go  Prune, Stats, the passes of cases I–III, new known edges
//	reach.go     the state graph (CSR), topological order, bitset rows
//	             (after a pass that added few edges, only the words that
//	             may have changed are recomputed, and passWW skips the
//	             pairs whose writers' rows did not change)
//	chains.go    Reach, its strategies and queries, the chain cover and vectors
//	order.go     each key's known version order as a transitive reduction:
//	             cases I and III key by key (listing a key's pairs there when
//	             Build left them pending), and the compaction between passes
//	parallel.go  a pass's keys decided on two goroutines, applied in key order
//	conflict.go  Conflict and the concrete cycles that prove it
//	options.go   Options, ErrTooLarge, the memory budget of what pruning allocates
package prune
