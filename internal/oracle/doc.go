// Package oracle decides the isolation level of tiny histories by brute
// force, straight from the definitions, for the tests of the real checkers.
// It is written to be obviously correct, not fast: it enumerates every choice
// the definitions leave open (which unknown transactions committed, which
// writer each read observed, which total order the transactions took) and
// prunes only where a partial choice already fails. It also generates random
// small histories (Generate) with a good mix of satisfied and violated ones.
//
// The oracle reads the operations of the history directly; it does not use
// history.Index, so that it stays independent of the code it checks.
//
// # Transactions taken as committed
//
// T⊥ (history.InitTxn) is committed and comes before every other
// transaction; its operations are its writes. Aborted transactions never
// committed and play no part at all (their reads are not checked, their
// writes are visible to nobody). A transaction of unknown status may or may
// not have committed: a history satisfies a level iff some subset of its
// unknown transactions, taken as committed with the rest taken as aborted,
// satisfies it. Every subset is tried. In what follows C is T⊥ plus the
// committed transactions plus the chosen unknown ones; session order SO is
// the order of the members of C within each session (T⊥ precedes all).
//
// # Reads and writes of one transaction
//
// The final write of key x by T is T's last write (OpWrite or OpAppend) of
// x. A read of x in T is internal
// if T has an earlier operation on x, read or write, and external otherwise.
//
// INT, required by SER, SI, CC and RA: every internal read returns the value
// of the latest earlier operation on the same key in the same transaction.
//
// RC asks less. A read of x that follows a write of x by its own transaction
// must return the latest such write; every other read of x, including one
// that follows only reads of x, is a read event of its own that may observe
// any committed version (read committed permits non-repeatable reads).
//
// # Serializability (SER)
//
// INT holds for every member of C, and there is a total order O on C with T⊥
// first that respects SO such that, executing C serially in O, every
// external read of x in T returns the final write of x of the last
// transaction before T in O that writes x. A read of a key that nobody
// before T writes (T⊥ included) cannot be satisfied.
//
// # Snapshot isolation (SI)
//
// INT holds, and there is a total commit order O on C with T⊥ first that
// respects SO, and for each T ≠ T⊥ a snapshot point p_T with 1 ≤ p_T ≤
// pos(T) (T sees exactly the transactions at positions below p_T, so T⊥
// always), such that every SO predecessor of T is visible to T; every
// external read of x in T returns the final write of x of the last
// transaction visible to T that writes x; and (NOCONFLICT) every W before T
// in O that writes a key T also writes is visible to T. Given O, the
// conditions on p_T mention no other snapshot point, so each T's point is
// chosen on its own.
//
// # Weak levels (RC, RA, CC) through a commit order
//
// Choose for every read event r of x in T (the external reads for RA and
// CC, the RC read events defined above for RC) a writer t1 ∈ C, t1 ≠ T,
// whose final write of x is the value r returned; wr is the set of those
// choices. The level holds iff for some choice there is a total order co on
// C, T⊥ first, containing SO and wr, such that for every read event r of x
// in T with writer t1 and every other t2 ∈ C that writes x:
//
//   - RC: if t2 is the chosen writer of a read event of T that precedes r
//     in T's program order (on any key), then t2 comes before t1 in co;
//   - RA: if t2 precedes T in SO, or t2 is the chosen writer of any read
//     event of T, then t2 comes before t1 in co;
//   - CC: if t2 reaches T in (SO ∪ wr)⁺, then t2 comes before t1 in co.
//
// The premises do not mention co, so for a fixed wr such an order exists iff
// the relation made of SO, wr, "T⊥ before everything" and the pairs the
// axiom demands is acyclic; the oracle checks that and returns one of its
// topological orders as co. The tests compare this against a literal
// enumeration of every total order on small histories.
//
// Histories with lists are refused: internal/execoracle decides them from
// executions (what every list read must return), where this oracle would
// restate the checker's rules.
//
// On every history SER ⇒ SI ⇒ CC ⇒ RA ⇒ RC.
//
// # Mixed levels (mixed.go)
//
// Mixed decides a history whose transactions each carry a level (RA, CC,
// PC, PSI, SI or SER) by the other framework, MixIso's: an arbitration
// order AR and a visibility relation VIS ⊆ AR such that each transaction
// satisfies the axioms of its own level (INT, EXT, SESSION, TRANSVis,
// PREFIX, NoConflict, TOTALVis). It shares only the per-transaction facts
// above with the commit-order search, and on uniform histories the two
// agree, which tests both (TestMixedAgreesOnUniformHistories).
package oracle
