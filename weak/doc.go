// Package weak decides the weak isolation levels read committed (RC), read
// atomic (RA) and causal consistency (CC) by saturation, following the
// algorithms of AWDIT (Møldrup and Pavlogiannis, PLDI 2025): it validates read consistency,
// resolves every read to the transaction it read from, builds the saturated
// commit relation co′ (so ∪ wr plus the orderings the level's axiom forces)
// and looks for cycles in it. A history satisfies the level iff it is read
// consistent (repeatable reads included for RA and CC) and co′ is acyclic.
//
// # Semantics
//
// T⊥ (history.InitTxn) precedes every transaction. Aborted transactions take
// no part: their writes are visible to nobody and they are in no session
// list. For a transaction T taken as committed:
//
//   - RA and CC read T's external reads (the first operation of T on a key,
//     when it is a read); every later read of the key must repeat the value
//     of the latest operation on it (validation's INT findings, among them
//     non-repeatable reads).
//   - RC reads every read of T that no write of T to the same key precedes,
//     re-reads included (RC allows non-repeatable reads); a read after an
//     own write must return the latest own write.
//
// Each such read event must have exactly one candidate writer: a committed
// (or taken-as-committed) transaction other than T whose final write of the
// key is the value read. The axioms, for a read event r of x in T3 that read
// from T1 and any other T2 that writes x, force T2 before T1 in co′ when
//
//   - RC: T3 read from T2 in a read event that precedes r in program order;
//   - RA: T2 precedes T3 in session order, or T3 read from T2;
//   - CC: T2 reaches T3 in (so ∪ wr)⁺.
//
// These match the definitions of internal/oracle, which the tests compare
// against.
//
// # Unknown-status transactions
//
// A transaction of unknown status is taken as not committed, unless a read
// event of a transaction taken as committed has it as its only candidate
// writer: then it is taken as committed too (and its own reads count, and
// are validated). With unique values this choice is exact: every
// transaction so taken is needed by every witness, and taking any other one
// only adds transactions, read events and writers to the premises of the
// axioms, so it can only add orderings. With duplicate values, the unknown
// transactions a read with several candidates could read from are decided
// by the search below (unknown.go). Result.Included lists the unknown
// transactions taken as committed.
//
// # Duplicate values
//
// When a read event has several candidate writers, wr and with it co′ are
// not determined: the level holds iff some choice of a writer per such read
// gives an acyclic co′. Each read's first guess is its latest candidate
// before it in a topological order of the certain part (the reads with one
// writer), ties broken by file order: the latest version, which is what a
// read usually returns. Check first probes those guesses, ordering the
// certain so ∪ wr and saturating the guess once: an acyclic co′ decides
// at once, in time linear in the history, where every later step costs in
// proportion to all the candidates. Otherwise candidates
// that close a cycle with the certain part are pruned, in rounds, since a
// read left with one candidate becomes certain: with the happens-before
// clocks of the certain so ∪ wr (a candidate the reader happens before,
// or one that happens before a writer the premise orders before it;
// clockprune.go), then, in histories small enough, with two reachability
// matrices of the certain co′ (prune.go). It then searches the choice
// (choose.go): a SAT solver (package cdcl) holds one variable per (read,
// candidate) with exactly-one clauses, created only for reads some clause
// mentions (the others keep their first guess). The solver's theory
// (theory.go) keeps acyclic, as literals are assigned, the co′ edges each
// chosen read forces with the certain part and with the other reads of its
// transaction (all of co′ at RC and RA); each model is then saturated like
// a unique-value history. An acyclic co′ is the answer (Result.Chosen the
// witness). Each cycle found instead yields a clause forbidding the choices
// its edges depend on: the reads behind its wr edges, and for each inferred
// edge the reads of its premise (the read of the key from To, the read
// from From, or the wr edges of a so ∪ wr path from From to the reader,
// found with the fewest choices). Premises only grow with wr, so every
// model that keeps those choices has the cycle too: the clause removes no
// acyclic choice, and an unsatisfiable solver means a violation, reported
// with the cycles of the first model and their choices (Violation.Choices).
// The verdict stays Undecided when list elements have several possible
// appenders, or after Options.MaxModels models.
//
// # Algorithms and the slips of the printed pseudocode
//
// RC (AWDIT Algorithm 1): per transaction, the first read event from each
// writer T2; then a reverse walk over the read events with, per key, a
// two-element stack of the earliest later writers read, intersecting the
// keys T2 writes with the keys read later, iterating over the smaller set.
// RA (Algorithm 2): per session, the so case through the session's last
// writer of each key, and the wr case by intersecting each writer's keys with
// the reader's keys (smaller set). CC (Algorithm 3): happens-before vector
// clocks, one per transaction, indexed by session, computed in a topological
// order of so ∪ wr; then per session monotone pointers into each other
// session's writers of a key. Three slips of the paper's pseudocode are
// handled here: Algorithm 4's own-write test must read "≠ ⊥" (validation in
// package history implements the intended test); Definition 2.8 needs
// (so ∪ wr)⁺, not so ∪ wr (Algorithm 3 computes the transitive closure
// through the clocks); and the happens-before join of Algorithm 3 must take
// in the wr-source transaction itself, not only its strict past (see
// joinWriter).
//
// co′ edges already implied by so ∪ wr are not added (for CC an edge T2 → T1
// where T2 happens before T1, for RC and RA where T2 precedes T1 in its
// session), which keeps co′ small without changing its transitive closure.
//
// # Violations
//
// Besides the read-consistency findings, Check reports one cycle per
// strongly connected component of co′: a component that contains a cycle
// of so ∪ wr alone is reported through one such cycle per component of
// so ∪ wr (G1c, a causality cycle); any other component through a cycle
// with as few inferred co′ edges as a bounded search finds (one whenever
// one exists). Every edge carries its relation, key and premise, so each
// can be explained in one line (Edge.Reason). A cycle is classified as G1c
// (so and wr only), fractured-read (an RA wr-case inference: a reader saw
// one of T2's writes but an older version of another key T2 wrote),
// causality-violation (an inference through session order or a longer
// happens-before path) or, for RC inferences only, cycle.
package weak
