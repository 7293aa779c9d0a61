//go:build !noplot

package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteScalePlot draws the scale bench: for each variant (a column), the
// median wall time (top), the CPU time (middle, less disturbed by other
// work on the machine) and the peak memory (bottom) of each level against
// the number of transactions, both axes logarithmic, with the reading time
// as a dashed floor line under the times, and in the CPU and memory panels
// the growth target as a dotted line: from the costliest level at a tenth
// of the largest size, growthTarget times as much at the largest (a level
// whose line ends below it grew less). Runs that timed out or stopped
// without a verdict are left out. The extension of path picks the format.
func WriteScalePlot(path string, r *Report) error {
	return savePlot(path, r, DrawScalePlot)
}

// DrawScalePlot writes the plot of WriteScalePlot in format to w.
func DrawScalePlot(w io.Writer, format string, r *Report) error {
	points := ScalePoints(r)
	if len(points) == 0 {
		return fmt.Errorf("nothing to plot: no scale measurements")
	}
	var variants []string
	for _, p := range points {
		if !slices.Contains(variants, p.Variant) {
			variants = append(variants, p.Variant)
		}
	}
	rows := [][]*plot.Plot{make([]*plot.Plot, len(variants)), make([]*plot.Plot, len(variants)), make([]*plot.Plot, len(variants))}
	for ci, v := range variants {
		tp, cp, mp := scalePanel(v+": wall time", "seconds"), scalePanel(v+": CPU time (user + system)", "seconds"), scalePanel(v+": peak memory", "MB")
		for li, l := range r.Levels {
			var ts, cs, ms plotter.XYs
			for _, p := range points {
				if p.Variant != v || p.Level != l || !finished(p.M) {
					continue
				}
				ts = append(ts, plotter.XY{X: float64(p.N), Y: p.M.WallMedianMS / 1000})
				cs = append(cs, plotter.XY{X: float64(p.N), Y: p.M.CPUMedianMS() / 1000})
				ms = append(ms, plotter.XY{X: float64(p.N), Y: float64(p.M.PeakRSS) / (1 << 20)})
			}
			if err := addLine(tp, ts, li, strings.ToUpper(l)); err != nil {
				return err
			}
			if err := addLine(cp, cs, li, strings.ToUpper(l)); err != nil {
				return err
			}
			if err := addLine(mp, ms, li, strings.ToUpper(l)); err != nil {
				return err
			}
		}
		// Every level reads the same file: one floor per size.
		var floor plotter.XYs
		seen := map[int]bool{}
		for _, p := range points {
			if p.Variant == v && !seen[p.N] {
				seen[p.N] = true
				if f := readFloor(r, p.M.History); f > 0 {
					floor = append(floor, plotter.XY{X: float64(p.N), Y: f / 1000})
				}
			}
		}
		slices.SortFunc(floor, func(a, b plotter.XY) int { return int(a.X - b.X) })
		if len(floor) > 0 {
			l, err := plotter.NewLine(floor)
			if err != nil {
				return err
			}
			l.Color, l.Width, l.Dashes = color.Black, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
			tp.Add(l)
			tp.Legend.Add("read (floor)", l)
		}
		if err := addGrowthTarget(cp, points, v, func(m *Measurement) float64 { return m.CPUMedianMS() / 1000 }); err != nil {
			return err
		}
		if err := addGrowthTarget(mp, points, v, func(m *Measurement) float64 { return float64(m.PeakRSS) / (1 << 20) }); err != nil {
			return err
		}
		rows[0][ci], rows[1][ci], rows[2][ci] = tp, cp, mp
	}
	width := vg.Length(len(variants)) * 5 * vg.Inch
	height := 12 * vg.Inch
	c, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 3, Cols: len(variants), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadX: vg.Points(16), PadY: vg.Points(12), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(rows, tiles, draw.New(c))
	for i := range rows {
		for j := range rows[i] {
			rows[i][j].Draw(canvases[i][j])
		}
	}
	_, err = c.WriteTo(w)
	return err
}

func scalePanel(title, unit string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "transactions (log scale)"
	p.Y.Label.Text = unit + " (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds a level's points as a line with markers in the level's
// colour (nothing if it has no points).
func addLine(p *plot.Plot, xys plotter.XYs, i int, name string) error {
	xys = slices.DeleteFunc(xys, func(xy plotter.XY) bool { return !(xy.Y > 0) || math.IsInf(xy.Y, 0) })
	if len(xys) == 0 {
		return nil
	}
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
	pts.Shape = plotutil.Shape(i)
	p.Add(l, pts)
	p.Legend.Add(name, l, pts)
	return nil
}

// addGrowthTarget draws on p the growth target of variant v: a dotted line
// from the highest y among the levels at a = largest/growthStep to
// growthTarget times that at the largest size. Nothing when a was not
// measured.
func addGrowthTarget(p *plot.Plot, points []ScalePoint, v string, y func(*Measurement) float64) error {
	b := 0
	for _, pt := range points {
		if pt.Variant == v && finished(pt.M) {
			b = max(b, pt.N)
		}
	}
	if b%growthStep != 0 {
		return nil
	}
	a, top := b/growthStep, 0.0
	for _, pt := range points {
		if pt.Variant == v && pt.N == a && finished(pt.M) {
			top = max(top, y(pt.M))
		}
	}
	if !(top > 0) {
		return nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: float64(a), Y: top}, {X: float64(b), Y: growthTarget * top}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = color.Gray{Y: 100}, vg.Points(1), []vg.Length{vg.Points(1), vg.Points(3)}
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("×%d per ×%d n (target)", growthTarget, growthStep), l)
	return nil
}
