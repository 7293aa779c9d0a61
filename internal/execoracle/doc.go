// Package execoracle is a brute-force, definitional referee for tiny
// histories of registers, lists and rows read by predicates (at most
// MaxTxns transactions, a few keys). It owns its own history types and
// imports only the standard library, so that nothing it concludes comes
// from the checker it judges.
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
//     a transaction at RC or RR, one set V(α) ⊆ VIS(T) per read α, growing
//     along T's program order (a predicate read has one set per key, see
//     Rows).
//
// Each transaction obeys the axioms of its level (MixIso, Table 2):
// SESSION (RA and up: session predecessors are visible), TRANSVis (CC, PSI),
// PREFIX (PC, SI), NoConflict (PSI, SI: an AR-earlier transaction writing a
// key T writes is visible), TOTALVis (SER, RR: everything AR-earlier is
// visible). An RC transaction's VIS(T) holds its session predecessors and
// every V(α) (that is what the TRANSVis of others sees of it, as in
// docs/mixed.md), but its reads see only their own V(α). RR is defined
// below (Repeatable read).
//
// Reads: a register read after an own write of the key returns the latest
// own write; otherwise it returns the final write of the AR-latest visible
// writer of the key (0 if none). A list read of k returns E followed by the
// reader's own earlier appends to k, where E is [] if no appender of k is
// visible, else the concatenation, in AR order, of the append blocks of every
// appender of k up to and including W, the AR-latest visible one; every
// appender AR-before W must be visible too.
//
// # Rows
//
// A key is a list (appended to or read as a list), a row, or a register. A
// row is a key that some operation inserts, deletes or reads as absent, that
// a predicate read returns, or that lies in the key range of a predicate
// read: the key ranges declare the closed universe that predicate reads
// range over, so a key a range covers is a row whatever else is done to it.
// A list cannot be a row.
//
// Versions. T⊥ installs the version "unborn" of every row (and 0 of every
// register). A committed transaction that writes, inserts or deletes row k
// installs one version of k, from its last such operation on k: "live with
// value v" for w(k,v) and insert(k,v), "dead" for delete(k). Unborn and dead
// are both absent: no read tells them apart (they differ only in the
// dependencies below, where both fail to match every predicate). The
// version order of k is the AR order of its writers, T⊥ first.
//
// Insert and update are blind writes: insert(k,v) has the effect of w(k,v)
// whatever the row's state, and delete(k) makes it dead whatever its state.
// A successful insert does not state that the row was absent: databases
// check uniqueness against the latest committed state, outside the
// transaction's snapshot, and a failed insert is not an operation of the
// history. A history that observed the absence records a read.
//
// Point reads. r(k)=v finds the version "live with value v"; r(k)=absent
// finds it unborn or dead. The version a point read finds is chosen as a
// register read's: the reader's own latest write, insert or delete of k
// before it, if any; else the version of the AR-latest writer of k in the
// read's set (VIS(T), or V(α) at RC and RR); else T⊥'s.
//
// Predicate reads. select(P)=S, where P is a key range [lo,hi) and a value
// test (Predicate.Match: any test of a key and a value; a set of values and
// a range of values so far) and S a set of (key, value). Its universe is
// every row in [lo,hi); a key in the range that no operation names is
// unborn in every version and never matches, so it changes nothing. The
// read observes, for every key k of its universe, one version of k, chosen
// as a point read of k at the read's place would choose it (own writes
// first). S is exactly the set of (k, v) whose observed version is live with
// value v that P matches: a row missing from S was observed unborn, dead or
// with a value P rejects. So S names no key twice and only rows that match.
//
// Which set a predicate read observes each key with: from RA up, VIS(T) for
// every key (the read is atomic, as every read of such a transaction is).
// At RC and RR each key k of the read is observed as by a point read of its
// own at the read's place, with a set V(α,k) that contains the previous
// read's set; the read's V(α), which the next read's set contains, is the
// union of the V(α,k). So a scan may see different keys at different
// moments (PostgreSQL re-checks a row it waited for at read committed; a
// lock-based scan passes keys one by one) but never less than the
// transaction saw before.
//
// # Repeatable read
//
// An RR transaction T has VIS(T) = every AR-predecessor (TOTALVis, as at
// SER), and reads as an RC transaction does (each read α with its own set
// V(α) ⊆ VIS(T), growing along program order, a predicate read's per key),
// with one more rule: every item read observes its AR-latest version. The
// item reads are the point reads (register, row or list) and the rows a
// predicate read returns; for each, the AR-latest writer of its key before
// T, if any, is in the read's set. A key that a predicate read does not
// return is constrained by the set rule only: it may be observed at any
// version at least as new as what T's earlier reads saw.
//
// Why this is PL-2.99. Adya defines PL-2.99 (repeatable read) as
// proscribing G1 and G2-item, "completely isolated from other transactions
// with respect to data items" with "PL-2 guarantees for predicate-based
// reads", and models a query as a predicate read (which objects match)
// followed by item reads of the objects that matched: here, the returned
// rows. Give each execution the direct serialization graph with SO, ww (the
// version order), wr (item and predicate read-from) and rw (item and
// predicate anti-dependencies, below). In an RR execution every SO, ww, wr
// and item rw edge goes forward in AR, so no cycle is made of them alone: no
// G1c and no G2-item; G1a and G1b cannot occur (reads see only committed
// final versions). Predicate rw edges may point backwards in AR: phantoms,
// predicate-many-preceders and write skew through predicates are allowed.
// Conversely, without predicate reads all reads are item reads and RR is
// SER.
//
// Equivalently, as a dependency-graph condition: a history satisfies RR iff
// for some fates, some total order AR of the committed transactions (also
// every key's version order, WW) and some choice of the version each read
// observed, every one of these edges points forward in AR: SO; WR, item and
// predicate (a read observes a version installed before its reader); item
// RW (a point read or a returned row observes the last version before its
// reader); and RC's edges (a read of T observed a version by t2, of any key,
// t2 writes x, and a later read of T, not the same predicate read, observed
// x's version by t1: then t2 = t1 or t2 is before t1). Predicate RW edges
// are free. From an execution, take its AR and the versions its reads
// observed; from such an order, let each read's set be the writers of what
// T's reads up to it observed. rrGraph (rrgraph_test.go) decides RR this
// way and agrees with Decide.
//
// Two readings are choices. (1) Adya's G2-item is "a cycle with one or more
// item anti-dependency edges"; read literally it also forbids a cycle
// closed by one item and one predicate anti-dependency. The locking
// implementation of repeatable read that PL-2.99 describes (long item
// locks, short predicate read locks) produces such cycles, and Jepsen reads
// G2-item as a cycle of ww, wr and item rw edges; RR here allows them
// (example "G2 with an item and a predicate anti-dependency"). (2) This
// package's RC is stronger than Adya's PL-2 (a transaction's reads never see
// less than its earlier reads did), and RR's predicate reads are RC's; so
// RR ⊆ RC ∩ PL-2.99, and a predicate read that misses a row the same
// transaction read before violates RR (example "phantom after a point
// read").
//
// Where it sits: strict-ser ⊆ SER ⊆ RR ⊆ RC. RR is incomparable with RA,
// CC, PC, PSI and SI: a phantom satisfies RR and none of them (they give a
// transaction one visible set), and write skew through point reads
// satisfies all of them and not RR. RR's item reads see the session (AR
// contains session order), its predicate reads need not for rows they do not
// return, as at RC.
//
// # Dependencies
//
// The oracle decides by executions alone; these derived relations name what
// the examples and docs/predicates.md describe, and what a checker builds.
// In an execution, with the version order of each key as above, let α be a
// predicate read of T over P, and k a key of its universe:
//
//   - predicate read-from: T depends on the writer of the version of k that
//     α observed (for a returned row this is also an item read-from);
//   - predicate anti-dependency: T → U, where U is the first writer after
//     that version, in k's version order, whose version changes whether k
//     matches P (the row appears, disappears, or its value enters or leaves
//     the value test). A write that leaves the match unchanged (a row that
//     does not match updated to another value that does not, a dead row
//     deleted again) makes none.
//
// A phantom is a predicate anti-dependency that points backwards in AR (the
// reader saw a state that a transaction before it had changed); G2 is a
// cycle with at least one anti-dependency (item or predicate), G2-item one
// whose anti-dependencies are all item ones.
//
// # How
//
// Decide enumerates fates, then builds AR one transaction at a time and
// chooses each transaction's VIS among the transactions already placed. All
// axioms of T look only at AR-earlier transactions and their (already
// chosen) visible sets, so a failing axiom or read prunes at once. A larger
// VIS(T) can only hurt later transactions (only their TRANSVis reads it), so
// the search branches on the inclusion-minimal valid sets alone; at RC and
// RR it walks the chains of read sets, and a predicate read's per-key sets
// are taken minimal too (the previous set plus at most one writer of the
// key), since a larger set with the same latest writer only grows what the
// later reads must contain. The tests check all this against an unpruned
// enumeration.
package execoracle
