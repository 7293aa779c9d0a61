package bench

import "errors"

// PlotFormats are the file extensions WritePlot accepts.
var PlotFormats = []string{"svg", "png", "pdf"}

// ErrNoPlots is what the plotting functions return in a build without
// plots (-tags noplot, PlotsAvailable false).
var ErrNoPlots = errors.New("this hyperiso was built without plots (-tags noplot): build it without that tag to draw them")
