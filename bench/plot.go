//go:build !noplot

package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotsAvailable says whether this build draws plots (not under -tags
// noplot).
const PlotsAvailable = true

// WritePlot draws the median wall time of each strategy on each history as
// grouped bars on a logarithmic axis, one panel per level, and saves it to
// path; the extension picks the format (.svg, .png or .pdf). A run that
// timed out is drawn up to the timeout as a hollow bar marked "T/O"; a
// failed run is left out. Each bar is labelled with its time.
func WritePlot(path string, r *Report) error {
	return savePlot(path, r, DrawPlot)
}

// savePlot draws r with draw into path, in the format its extension names.
func savePlot(path string, r *Report, draw func(io.Writer, string, *Report) error) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if !slices.Contains(PlotFormats, ext) {
		return fmt.Errorf("%s: plot format must be one of .%s", path, strings.Join(PlotFormats, ", ."))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := draw(f, ext, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DrawPlot writes the plot of WritePlot in format (svg, png or pdf) to w.
func DrawPlot(w io.Writer, format string, r *Report) error {
	if len(r.Measurements) == 0 {
		return fmt.Errorf("nothing to plot: no measurements")
	}
	var plots [][]*plot.Plot
	for _, lv := range r.Levels {
		p, err := levelPlot(r, lv)
		if err != nil {
			return err
		}
		plots = append(plots, []*plot.Plot{p})
	}
	width := max(6*vg.Inch, vg.Length(len(r.Histories)*len(r.Strategies))*0.35*vg.Inch+1.5*vg.Inch)
	height := vg.Length(len(plots)) * 3.6 * vg.Inch
	c, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadY: vg.Points(10), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(plots, tiles, draw.New(c))
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	_, err = c.WriteTo(w)
	return err
}

func levelPlot(r *Report, level string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: wall time per strategy", strings.ToUpper(level))
	if r.Repeat > 1 {
		p.Title.Text += fmt.Sprintf(" (median of %d runs)", r.Repeat)
	}
	p.Y.Label.Text = "seconds (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}

	bars := &groupedBars{nGroups: len(r.Histories)}
	lo, hi := math.Inf(1), math.Inf(-1)
	for si, s := range r.LevelStrategies(level) {
		var vals []float64
		var tos []bool
		for _, h := range r.Histories {
			v, to := math.NaN(), false
			if m := r.Find(h, level, s); m != nil && !strings.Contains(m.Verdict, VerdictError) {
				v, to = m.WallMedianMS/1000, m.TimedOut()
				if to && r.Timeout > 0 {
					v = r.Timeout.Seconds()
				}
			}
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			} else {
				v = math.NaN()
			}
			vals = append(vals, v)
			tos = append(tos, to)
		}
		bars.values = append(bars.values, vals)
		bars.timeouts = append(bars.timeouts, tos)
		clr := plotutil.Color(si)
		bars.colors = append(bars.colors, clr)
		p.Legend.Add(StrategyLabel(s), swatch{clr})
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0.001, 1
	}
	// Bars rise from the decade below the fastest run; the space above the
	// slowest holds the legend and the timeout labels.
	// (Nudged outwards so that rounding cannot drop the end ticks.)
	bars.base = math.Pow(10, math.Floor(math.Log10(lo))) * (1 - 1e-9)
	bars.top = math.Pow(10, math.Ceil(math.Log10(hi)+0.6)) * (1 + 1e-9)
	p.Add(gridLines{}, bars)
	p.NominalX(r.Histories...)
	if len(r.Histories) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 8
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(10)
	return p, nil
}

// groupedBars draws one bar per strategy (series) and history (group) on
// any axis scale, rising from base.
type groupedBars struct {
	nGroups   int
	values    [][]float64 // [series][group], NaN when absent
	timeouts  [][]bool
	colors    []color.Color
	base, top float64
}

const groupWidth = 0.8

func (b *groupedBars) barX(series, group int) (x0, x1 float64) {
	w := groupWidth / float64(len(b.values))
	x0 = float64(group) - groupWidth/2 + float64(series)*w
	return x0, x0 + w
}

// Plot implements plot.Plotter.
func (b *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	label := draw.TextStyle{
		Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(6)),
		Handler: p.Title.TextStyle.Handler, XAlign: draw.XCenter, YAlign: draw.YBottom,
	}
	for s, vals := range b.values {
		for g, v := range vals {
			if math.IsNaN(v) {
				continue
			}
			x0, x1 := b.barX(s, g)
			y0, y1 := trY(b.base), trY(v)
			pts := []vg.Point{{X: trX(x0), Y: y0}, {X: trX(x1), Y: y0}, {X: trX(x1), Y: y1}, {X: trX(x0), Y: y1}}
			outline := draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
			if b.timeouts[s][g] {
				outline = draw.LineStyle{Color: b.colors[s], Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(1.5)}}
				c.StrokeLines(outline, append(pts, pts[0]))
				c.FillText(label, vg.Point{X: trX((x0 + x1) / 2), Y: y1 + vg.Points(1)}, "T/O")
				continue
			}
			c.FillPolygon(b.colors[s], pts)
			c.StrokeLines(outline, append(pts, pts[0]))
			c.FillText(label, vg.Point{X: trX((x0 + x1) / 2), Y: y1 + vg.Points(1)}, FormatMS(v*1000))
		}
	}
}

// DataRange implements plot.DataRanger.
func (b *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(b.nGroups) - 0.5, b.base, b.top
}

// gridLines draws horizontal lines at the major ticks of the Y axis.
type gridLines struct{}

func (gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.Gray{Y: 220}, Width: vg.Points(0.4)}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
	}
}

// swatch is a legend thumbnail: a filled square.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}
