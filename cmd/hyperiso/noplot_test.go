//go:build noplot

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchNoPlot: a build without plots refuses --plot before it runs
// anything, saying how to get plots.
func TestBenchNoPlot(t *testing.T) {
	code, out, errs := runCLI(t, "bench", "--plot", t.TempDir()+"/p.svg", "../../testdata/bank.jsonl")
	require.Equal(t, exitBadInput, code, errs)
	require.Empty(t, out)
	require.Contains(t, errs, "built without plots (-tags noplot)")
}
