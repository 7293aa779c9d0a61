//go:build noplot

package bench

import "io"

// The release build (-tags noplot) leaves gonum/plot out, about 70 of the
// packages it compiles: bench measures and tabulates as usual, and a plot
// is refused before anything runs.

// PlotsAvailable says whether this build draws plots.
const PlotsAvailable = false

// WritePlot refuses: no plots in this build.
func WritePlot(string, *Report) error { return ErrNoPlots }

// DrawPlot refuses: no plots in this build.
func DrawPlot(io.Writer, string, *Report) error { return ErrNoPlots }

// WriteScalePlot refuses: no plots in this build.
func WriteScalePlot(string, *Report) error { return ErrNoPlots }

// DrawScalePlot refuses: no plots in this build.
func DrawScalePlot(io.Writer, string, *Report) error { return ErrNoPlots }
