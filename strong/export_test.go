package strong

import "github.com/hyperiso/hyperiso/strong/acyclic"

// NoHint is the default strategy without the history's own order
// (acyclic.NewUnhinted, no decision priorities): the path before it.
var NoHint = Strategy{Name: "veristrong/no-hint", Prune: true, TwoWidth: true,
	solve: cdclSolveWith(acyclic.LatestWriterPolarity, graphPlain, false, chronoLevels)}

// NoProbe is the default strategy without the history-order probe
// (run.probe): the search alone.
var NoProbe = Strategies[1]

// ValueSeqAlways makes the value-sequence search run on every one-key
// history, however few its writers, until restore is called.
func ValueSeqAlways() (restore func()) {
	saved := valueSeqMinPairs
	valueSeqMinPairs = -1
	return func() { valueSeqMinPairs = saved }
}
