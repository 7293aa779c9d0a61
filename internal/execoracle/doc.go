// Package execoracle is a brute-force, definitional referee for tiny
// histories of registers and lists (at most MaxTxns transactions, a few
// keys). It owns its own history types and imports only the standard
// library, so that nothing it concludes comes from the checker it judges.
//
// # What it decides
//
// A history satisfies a level iff some abstract execution reproduces every
// read of every transaction taken as committed. An execution chooses:
//
//   - a fate for each transaction of unknown status (committed or aborted);
//     C is T⊥ plus the committed transactions;
//   - a total arbitration order AR on C, T⊥ first, containing session order
//     (at every level) and, at strict-ser, real-time order (A before B when
//     both are timed and A ends before B starts);
//   - a visible set VIS(T) ⊆ AR-predecessors of T for every T in C, and, for
//     a transaction at RC, one set V(α) ⊆ VIS(T) per read α, growing along
//     T's program order.
//
// Each transaction obeys the axioms of its level (MixIso, Table 2):
// SESSION (RA and up: session predecessors are visible), TRANSVis (CC, PSI),
// PREFIX (PC, SI), NoConflict (PSI, SI: an AR-earlier transaction writing a
// key T writes is visible), TOTALVis (SER: everything AR-earlier is
// visible). An RC transaction's VIS(T) holds its session predecessors and
// every V(α) (that is what the TRANSVis of others sees of it, as in
// docs/mixed.md), but its reads see only their own V(α).
//
// Reads: a register read after an own write of the key returns the latest
// own write; otherwise it returns the final write of the AR-latest visible
// writer of the key (0 if none). A list read of k returns E followed by the
// reader's own earlier appends to k, where E is [] if no appender of k is
// visible, else the concatenation, in AR order, of the append blocks of every
// appender of k up to and including W, the AR-latest visible one; every
// appender AR-before W must be visible too.
//
// # How
//
// Decide enumerates fates, then builds AR one transaction at a time and
// chooses each transaction's VIS among the transactions already placed. All
// axioms of T look only at AR-earlier transactions and their (already
// chosen) visible sets, so a failing axiom or read prunes at once. A larger
// VIS(T) can only hurt later transactions (only their TRANSVis reads it), so
// the search branches on the inclusion-minimal valid sets alone; the tests
// check this against an unpruned enumeration.
package execoracle
