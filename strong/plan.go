package strong

import (
	"github.com/hyperiso/hyperiso/history"
	hp "github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// plan is how Decide settles one level, as data: which graph it builds,
// what it tries before its own search, how it prunes and how it reads a
// witness off an acyclic compatible graph. Decide reads the row and never
// the level's name; a level the engine gains is a row here plus its
// theory (TestPlansCoverStrongLevels holds the table to history.Levels).
type plan struct {
	// graph is the level whose hyper-polygraph is built: SI's doubled
	// graph (a snapshot and a commit state per transaction) or SER's one
	// state per transaction.
	graph history.Level
	// perTxn: each transaction is held to a level of its own through the
	// per-model test of hyperpolygraph.NewMixed: the one it declares
	// (Levels), or, with uniform, the plan's level for every one.
	perTxn, uniform bool
	// stronger: the whole history is tried at SER and then at SI first
	// (serFirst, siFirst). Their witnesses are this level's (MixIso,
	// Theorem 3.4), and their pruning is stronger than this level's
	// search has, so a history recorded at a strong level is settled fast.
	stronger bool
	// probe says when the history-order probe runs.
	probe probeAt
	// snapshots: the probe's guess reads snapshots (SI's graph states),
	// not one serial order.
	snapshots bool
	// lazyPairs: when nothing is optional, the build leaves the
	// version-order pairs pending, since only pruning reads them.
	lazyPairs bool
	// arbitration: the graph is pruned only of options whose cycles lie
	// in the arbitration order (hyperpolygraph.PruneMixed), since pruning
	// for SER and SI would drop options whose cycles this level allows.
	// The strategy's Prune (prune.Prune, for SER and SI) comes after.
	arbitration bool
	// order reads the witness off an acyclic compatible graph: the
	// transactions in order, T⊥ left out, and, for levels with snapshots,
	// the index of the last transaction each one saw (-1: none).
	order func(r *run, c *hp.Compatible) (order []history.TxnID, snaps []int, ok bool)
	// accept, where set, checks a probed graph for the forbidden cycles
	// order does not see (the search's theory rules them out itself).
	accept func(r *run, c *hp.Compatible) bool
	// core: Core's UNSAT-core shortcut encodes this level's cycles.
	core bool
	// plain, when set, is the level this one is on a history without
	// predicate reads (RR is SER there): such a history is decided at
	// plain, with its pipeline and witness.
	plain history.Level
	// refuteItems: before the search, decide plain on the history's item
	// part (History.ItemReads): a violation there is one here (RR orders
	// item reads as SER does), found by SER's pruning and solver rather
	// than by refuting every model of the search.
	refuteItems bool
	// valueSeq: a history on one key is first searched for as a walk
	// through the key's values (package valueseq; SER and SI agree there).
	valueSeq bool
}

// probeAt is when the history-order probe runs.
type probeAt uint8

const (
	// probeInSearch: after the build, before optional transactions split.
	probeInSearch probeAt = iota
	// probeBeforeAll: before the stronger levels and the level's own
	// build, which lists every version-order pair; the probe's own build
	// leaves them pending, so it costs what SER's lazy build does.
	probeBeforeAll
	// probeAfterModels: once the per-transaction models are ready, and
	// only when no transaction is optional (the optional part is the
	// search's alone).
	probeAfterModels
)

// plans holds one row per level the strong engine decides.
var plans = map[history.Level]plan{
	history.SER: {graph: history.SER, probe: probeInSearch, lazyPairs: true,
		order: graphOrder((*hp.Compatible).Order), core: true, valueSeq: true},
	history.StrictSER: {graph: history.SER, probe: probeInSearch,
		order: graphOrder((*hp.Compatible).Order)},
	history.SI: {graph: history.SI, probe: probeInSearch, snapshots: true, lazyPairs: true,
		order: snapshotOrder((*hp.Compatible).SnapshotOrder), core: true, valueSeq: true},
	history.PSI: {graph: history.SER, stronger: true, probe: probeBeforeAll, snapshots: true, arbitration: true,
		// PSIOrder orders the edges other than RW; PSI also forbids
		// cycles with one RW edge.
		order:  graphOrder((*hp.Compatible).PSIOrder),
		accept: func(_ *run, c *hp.Compatible) bool { return len(c.FindPSICycles(1)) == 0 }},
	history.PC: {graph: history.SER, stronger: true, probe: probeBeforeAll, snapshots: true, arbitration: true,
		order: snapshotOrder((*hp.Compatible).PCOrder)},
	// RR is the mixed search with every transaction at RR: item reads
	// ordered as at SER, the rows a predicate read did not return as at
	// RC (hyperpolygraph.Read.Pred), serFirst settling what SER allows.
	history.RR: {graph: history.SER, perTxn: true, uniform: true, stronger: true, probe: probeAfterModels, snapshots: true, arbitration: true,
		plain: history.SER, refuteItems: true,
		order: func(r *run, c *hp.Compatible) ([]history.TxnID, []int, bool) {
			o, s := mixedWitness(c, r.mixed)
			return o, s, true
		},
		accept: func(r *run, c *hp.Compatible) bool {
			cyc, _ := c.FindMixedCycles(r.mixed.For(c.G), 1)
			return len(cyc) == 0
		}},
	history.Mixed: {graph: history.SER, perTxn: true, stronger: true, probe: probeAfterModels, snapshots: true, arbitration: true,
		order: func(r *run, c *hp.Compatible) ([]history.TxnID, []int, bool) {
			o, s := mixedWitness(c, r.mixed)
			return o, s, true
		},
		accept: func(r *run, c *hp.Compatible) bool {
			cyc, _ := c.FindMixedCycles(r.mixed.For(c.G), 1)
			return len(cyc) == 0
		}},
}

// planFor returns level's plan; ok is false for a level this engine does
// not decide.
func planFor(level history.Level) (p plan, ok bool) {
	p, ok = plans[level]
	return p, ok
}

// graphOrder is a witness that is one order (serial, or PSI's commit order
// of the edges other than RW): T⊥ left out, no snapshots.
func graphOrder(f func(*hp.Compatible) ([]history.TxnID, bool)) func(*run, *hp.Compatible) ([]history.TxnID, []int, bool) {
	return func(_ *run, c *hp.Compatible) ([]history.TxnID, []int, bool) {
		all, ok := f(c)
		if !ok {
			return nil, nil, false
		}
		order := make([]history.TxnID, 0, len(all))
		for _, t := range all {
			if t != history.InitTxn {
				order = append(order, t)
			}
		}
		return order, nil, true
	}
}

// snapshotOrder is a witness that is a commit order with snapshots (SI,
// PC): T⊥ comes first in f's order and is left out of both lists.
func snapshotOrder(f func(*hp.Compatible) ([]history.TxnID, []int, bool)) func(*run, *hp.Compatible) ([]history.TxnID, []int, bool) {
	return func(_ *run, c *hp.Compatible) (order []history.TxnID, snaps []int, ok bool) {
		all, snap, ok := f(c)
		if !ok {
			return nil, nil, false
		}
		for i, t := range all {
			if t == history.InitTxn {
				continue
			}
			order = append(order, t)
			snaps = append(snaps, max(snap[i]-1, 0))
		}
		return order, snaps, true
	}
}
