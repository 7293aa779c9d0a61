package strong

import "github.com/hyperiso/hyperiso/strong/acyclic"

// NoHint is the default strategy without the history's own order
// (acyclic.NewUnhinted, no decision priorities): the path before it.
var NoHint = Strategy{Name: "veristrong/no-hint", Prune: true, TwoWidth: true,
	solve: cdclSolveHint(acyclic.LatestWriterPolarity, graphPlain, false)}

// NoProbe is the default strategy without the history-order probe
// (run.probe): the search alone.
var NoProbe = Strategies[1]

// ValueSeqOwnViolations makes the value-sequence search report every
// violation it finds itself, until restore is called.
func ValueSeqOwnViolations() (restore func()) {
	saved := valueSeqMaxPairs
	valueSeqMaxPairs = -1
	return func() { valueSeqMaxPairs = saved }
}
