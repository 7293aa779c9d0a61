package render

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/explain"
)

// The timeline is a lane layout, placed by hand because it is one (no
// graph layout is involved: every box's place follows from its session and
// its time or position): a lane per session, the counterexample's first;
// in a lane, a box per
// transaction at its real-time interval (a linear scale of the history's
// clock) or, without real time, one after another in session order, with a
// "… N more" marker where transactions are left out. The counterexample's
// transactions are highlighted and the cycle's edges are curves between
// them. The page's script zooms it (scaling the whole picture) and dims
// the transactions that do not touch a chosen key.

const (
	tlGutter  = 104.0 // lane labels
	tlTop     = 34.0  // axis or caption
	tlLaneH   = 72.0
	tlBoxH    = 30.0
	tlPad     = 14.0
	tlGap     = 8.0  // between boxes in session order
	tlMarkerW = 60.0 // a "… N more" marker; the margins of a timed lane
	// tlBase is the width the session-order layout and the time scale aim
	// at, before zoom.
	tlBase = 900.0
	// tlMaxW bounds the width of the time scale.
	tlMaxW = 24000.0
	// tlMinW is the least width of the lanes' picture.
	tlMinW = 640.0
	// tlMaxKeys bounds the keys offered by the key filter.
	tlMaxKeys = 200
)

// tlBox is where one transaction is drawn.
type tlBox struct {
	x, y, w float64
	lane    int
}

func (b tlBox) cx() float64     { return b.x + b.w/2 }
func (b tlBox) top() float64    { return b.y }
func (b tlBox) bottom() float64 { return b.y + tlBoxH }

// tlPicture is a drawn timeline: the lane labels (Side, which stays put)
// and the lanes (Main, which scrolls), both SVG elements of height H.
type tlPicture struct {
	Side, Main string
	W, H       float64
}

// timelineSVG draws tl; W and H are the natural size of the lanes'
// picture (the page's zoom scales both pictures).
func timelineSVG(tl *explain.Timeline, nm namer, idPrefix string) tlPicture {
	tl = laneOrder(tl)
	// T⊥ gets a lane of its own when the cycle passes through it.
	initLane := false
	for _, e := range tl.Edges {
		if !e.Context && (e.From == tl.InitID || e.To == tl.InitID) {
			initLane = true
		}
	}
	lane0 := 0
	if initLane {
		lane0 = 1
	}
	laneY := func(l int) float64 { return tlTop + float64(l)*tlLaneH }
	nLanes := lane0 + len(tl.Sessions)

	var side, body, boxes, markers strings.Builder
	ce := map[int64]tlBox{}
	lane := func(l int, cls, name, sub string, bold bool) {
		fmt.Fprintf(&body, `<rect class="%s" x="0" y="%.1f" width="100%%" height="%.0f"/>`, cls, laneY(l), tlLaneH)
		fmt.Fprintf(&side, `<rect class="%s" x="0" y="%.1f" width="100%%" height="%.0f"/>`, cls, laneY(l), tlLaneH)
		lcls := "tl-lname"
		if bold {
			lcls += " ce"
		}
		fmt.Fprintf(&side, `<text class="%s" x="8" y="%.1f">%s</text>`, lcls, laneY(l)+32, html.EscapeString(name))
		if sub != "" {
			fmt.Fprintf(&side, `<text class="tl-lsub" x="8" y="%.1f">%s</text>`, laneY(l)+47, sub)
		}
	}
	if initLane {
		lane(0, "tl-lane init", "initial state", "", true)
	}
	for i, s := range tl.Sessions {
		hasCE := false
		for _, t := range s.Txns {
			hasCE = hasCE || t.Counterexample
		}
		cls := "tl-lane"
		if i%2 == 1 {
			cls += " odd"
		}
		lane(lane0+i, cls, fmt.Sprintf("session %d", s.ID), fmt.Sprintf("%d of %d", len(s.Txns), s.Size), hasCE)
	}

	place := placeByIndex
	if tl.Timed {
		place = placeByTime
	}
	axis, boxOf, right := place(tl, lane0, laneY, &markers)
	width := math.Max(right+tlPad, tlMinW)
	var first *tlBox
	for i, s := range tl.Sessions {
		for j, t := range s.Txns {
			b := boxOf[i][j]
			if t.Counterexample {
				ce[t.ID] = b
				if first == nil {
					first = &b
				}
			}
			writeTxnBox(&boxes, nm, s, t, b)
		}
	}
	if initLane {
		// T⊥ comes before all: at the left edge of real time, or in the
		// column the lanes are aligned on.
		b := tlBox{x: 8, y: laneY(0) + (tlLaneH-tlBoxH)/2, w: 44, lane: 0}
		if !tl.Timed && first != nil {
			b.x, b.w = first.x, first.w
		}
		ce[tl.InitID] = b
		fmt.Fprintf(&boxes, `<g class="tl-txn ce cyc" data-keys="[]"><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="4"/><text class="tl-name" x="%.1f" y="%.1f" text-anchor="middle">T⊥</text><title>T⊥: the initial state</title></g>`,
			b.x, b.y, b.w, tlBoxH, b.cx(), b.y+19)
	}
	if tl.Timed {
		fmt.Fprintf(&side, `<text class="tl-axis" x="8" y="%.1f">real time →</text>`, tlTop-8)
	}

	edges, labels := timelineEdges(tl, nm, ce, idPrefix)
	height := laneY(nLanes) + tlPad
	pic := tlPicture{W: width, H: height}
	var out strings.Builder
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" class="tl-side" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" data-w="%.0f" data-h="%.0f" aria-hidden="true">%s</svg>`,
		tlGutter, height, tlGutter, height, tlGutter, height, side.String())
	pic.Side = out.String()
	out.Reset()
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" class="tl" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" data-w="%.0f" data-h="%.0f" role="img" aria-label="timeline of the history around the counterexample">`,
		width, height, width, height, width, height)
	out.WriteString("<defs>")
	for _, rel := range []string{"so", "wr", "ww", "rw", "co", "rt", "other"} {
		fmt.Fprintf(&out, `<marker id="%s-arrow-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`, idPrefix, rel, colorOf(rel))
	}
	out.WriteString("</defs>")
	out.WriteString(body.String())
	out.WriteString(axis)
	out.WriteString(markers.String())
	out.WriteString(boxes.String())
	out.WriteString(edges)
	out.WriteString(labels)
	out.WriteString("</svg>")
	pic.Main = out.String()
	return pic
}

// laneOrder puts the sessions of the cycle's transactions first, then
// those of the counterexample's other transactions, then the rest, each
// group in the history's order: the counterexample is then at the top and
// its edges short, however many sessions the history has.
func laneOrder(tl *explain.Timeline) *explain.Timeline {
	rank := func(s explain.TimelineSession) int {
		r := 2
		for _, t := range s.Txns {
			switch {
			case t.Cycle:
				return 0
			case t.Counterexample:
				r = 1
			}
		}
		return r
	}
	out := *tl
	out.Sessions = slices.Clone(tl.Sessions)
	sort.SliceStable(out.Sessions, func(i, j int) bool { return rank(out.Sessions[i]) < rank(out.Sessions[j]) })
	return &out
}

// placeByIndex lays each lane out in session order: boxes one after
// another, a marker where transactions are left out, the lanes aligned on
// the counterexample's transactions. Boxes are wide when lanes are short,
// so that a two-transaction timeline reads as well as a long one.
func placeByIndex(tl *explain.Timeline, lane0 int, laneY func(int) float64, markers *strings.Builder) (string, [][]tlBox, float64) {
	items := 1
	for _, s := range tl.Sessions {
		n := len(s.Txns)
		for _, t := range s.Txns {
			if t.MoreBefore > 0 {
				n++
			}
		}
		if s.MoreAfter > 0 {
			n++
		}
		items = max(items, n)
	}
	boxW := math.Max(48, math.Min(150, (tlBase-tlGutter)/float64(items)-tlGap))
	markW := math.Max(48, math.Min(tlMarkerW, boxW))
	right := 0.0
	boxOf := make([][]tlBox, len(tl.Sessions))
	marker := func(x, y float64, n int) {
		fmt.Fprintf(markers, `<g class="tl-more"><text x="%.1f" y="%.1f" text-anchor="middle">… %d</text><text class="tl-lsub" x="%.1f" y="%.1f" text-anchor="middle">more</text><title>%d transaction%s of this session left out</title></g>`,
			x+markW/2, y+13, n, x+markW/2, y+25, n, plural(n))
	}
	// Positions in different sessions say nothing about each other: align
	// the lanes on the first of the counterexample's transactions in each,
	// so that its transactions sit near each other.
	pre := make([]float64, len(tl.Sessions))
	most := 0.0
	for i, s := range tl.Sessions {
		x, found := 0.0, false
		for _, t := range s.Txns {
			if t.Counterexample {
				found = true
				break
			}
			if t.MoreBefore > 0 {
				x += markW + tlGap
			}
			x += boxW + tlGap
		}
		if found {
			pre[i] = x
			most = math.Max(most, x)
		} else {
			pre[i] = -1
		}
	}
	for i, s := range tl.Sessions {
		y := laneY(lane0+i) + (tlLaneH-tlBoxH)/2
		x := tlPad
		if pre[i] >= 0 {
			x += most - pre[i]
		}
		for _, t := range s.Txns {
			if t.MoreBefore > 0 {
				marker(x, y, t.MoreBefore)
				x += markW + tlGap
			}
			boxOf[i] = append(boxOf[i], tlBox{x: x, y: y, w: boxW, lane: lane0 + i})
			x += boxW + tlGap
		}
		if s.MoreAfter > 0 {
			marker(x, y, s.MoreAfter)
			x += markW + tlGap
		}
		right = math.Max(right, x)
	}
	axis := fmt.Sprintf(`<text class="tl-axis" x="%.1f" y="20">position in session order → (no real time: the lanes are aligned on the counterexample)</text>`, tlPad)
	return axis, boxOf, right
}

// placeByTime lays each transaction out at its real-time interval on a
// linear scale of the shown span; an open transaction (no completion)
// runs to the end. Markers sit in the gaps they stand for.
func placeByTime(tl *explain.Timeline, lane0 int, laneY func(int) float64, markers *strings.Builder) (string, [][]tlBox, float64) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	most := 1
	for _, s := range tl.Sessions {
		most = max(most, len(s.Txns))
		for _, t := range s.Txns {
			lo, hi = min(lo, t.Time.Start), max(hi, t.Time.End, t.Time.Start)
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	// The margins hold the markers of what comes before and after.
	x0 := tlMarkerW + 24
	w := math.Max(tlBase-tlGutter-2*x0, math.Min(tlMaxW, 44*float64(most)))
	xOf := func(v int64) float64 { return x0 + float64(v-lo)/float64(hi-lo)*w }
	end := x0 + w
	boxOf := make([][]tlBox, len(tl.Sessions))
	text := func(x, y float64, anchor string, n int) {
		fmt.Fprintf(markers, `<g class="tl-more"><text x="%.1f" y="%.1f" text-anchor="%s">… %d more</text><title>%d transaction%s of this session left out</title></g>`,
			x, y, anchor, n, n, plural(n))
	}
	for i, s := range tl.Sessions {
		y := laneY(lane0+i) + (tlLaneH-tlBoxH)/2
		prevEnd := 0.0
		for j, t := range s.Txns {
			x := xOf(t.Time.Start)
			bw := math.Max(4, xOf(t.Time.End)-x)
			if t.Time.Open {
				bw = math.Max(4, end+tlMarkerW/2-x)
			}
			if t.MoreBefore > 0 {
				switch {
				case j == 0:
					text(x-4, y+19, "end", t.MoreBefore)
				case x-prevEnd >= 64:
					text((x+prevEnd)/2, y+19, "middle", t.MoreBefore)
				default:
					fmt.Fprintf(markers, `<g class="tl-more"><text x="%.1f" y="%.1f" text-anchor="middle">⋯</text><title>%d transaction%s of this session left out</title></g>`,
						(x+prevEnd)/2, y-2, t.MoreBefore, plural(t.MoreBefore))
				}
			}
			boxOf[i] = append(boxOf[i], tlBox{x: x, y: y, w: bw, lane: lane0 + i})
			prevEnd = x + bw
		}
		if s.MoreAfter > 0 {
			text(prevEnd+4, y+19, "start", s.MoreAfter)
		}
	}
	// Ticks at round values of the clock, as a grid over the lanes; on a
	// clock far from zero (Jepsen's :time in nanoseconds, wall clocks) at
	// round offsets from the first time shown, t₀.
	var axis strings.Builder
	bottom := laneY(lane0 + len(tl.Sessions))
	step := niceStep(float64(hi-lo) / math.Max(2, math.Min(12, w/110)))
	base, first := 0.0, math.Ceil(float64(lo)/step)*step
	if math.Abs(float64(lo)) >= 1e6 {
		base, first = float64(lo), float64(lo)
		fmt.Fprintf(&axis, `<text class="tl-axis" x="%.1f" y="12">t₀ = %d</text>`, x0, lo)
	}
	for v := first; v <= float64(hi); v += step {
		x := x0 + (v-float64(lo))/float64(hi-lo)*w
		label := compactNumber(v - base)
		if base != 0 {
			label = "t₀+" + label
		}
		fmt.Fprintf(&axis, `<line class="tl-grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text class="tl-tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			x, tlTop-4, x, bottom, x, tlTop-8, label)
	}
	return axis.String(), boxOf, end + x0
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten (at
// least 1: clocks count in integers).
func niceStep(raw float64) float64 {
	if raw <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// compactNumber writes a tick's value: whole up to 99999, then with k, M,
// G, T (powers of 1000) and up to three significant digits.
func compactNumber(v float64) string {
	a := math.Abs(v)
	if a < 1e5 {
		return fmt.Sprintf("%.0f", v)
	}
	for _, u := range []struct {
		div  float64
		name string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if a >= u.div {
			return strconv.FormatFloat(v/u.div, 'g', 3, 64) + u.name
		}
	}
	return fmt.Sprintf("%.0f", v)
}

// writeTxnBox draws one transaction: its name, and its operations when the
// box is wide enough; a tooltip says everything.
func writeTxnBox(b *strings.Builder, nm namer, s explain.TimelineSession, t explain.TimelineTxn, box tlBox) {
	cls := "tl-txn"
	if t.Counterexample {
		cls += " ce"
	}
	if t.Cycle {
		cls += " cyc"
	}
	if t.Status != "committed" {
		cls += " " + t.Status
	}
	keys, _ := json.Marshal(t.Keys)
	name := nm.txn(t.ID)
	when := fmt.Sprintf("session %d #%d", s.ID, t.Index)
	if t.Time != nil {
		if t.Time.Open {
			when += fmt.Sprintf(" · invoked at %d, no completion", t.Time.Start)
		} else {
			when += fmt.Sprintf(" · [%d, %d]", t.Time.Start, t.Time.End)
		}
	}
	title := fmt.Sprintf("%s · %s · %s\n%s\nkeys: %s", name, when, t.Status, t.Ops, strings.Join(t.Keys, " "))
	fmt.Fprintf(b, `<g class="%s" data-keys="%s"><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="4"/>`,
		cls, html.EscapeString(string(keys)), box.x, box.y, box.w, tlBoxH)
	nameW := 6.8*float64(len([]rune(name))) + 6
	switch {
	case box.w >= nameW:
		ty := box.y + 19
		if box.w >= 60 && t.Ops != "" {
			ty = box.y + 12
			if n := int((box.w - 8) / 5.5); n >= 4 {
				fmt.Fprintf(b, `<text class="tl-ops" x="%.1f" y="%.1f">%s</text>`, box.x+4, box.y+25, html.EscapeString(cut(t.Ops, n)))
			}
		}
		fmt.Fprintf(b, `<text class="tl-name" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, box.cx(), ty, html.EscapeString(name))
	case t.Counterexample:
		// Too narrow: the name above the box.
		fmt.Fprintf(b, `<text class="tl-name" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, box.cx(), box.y-3, html.EscapeString(name))
	}
	fmt.Fprintf(b, `<title>%s</title></g>`, html.EscapeString(title))
}

// cut shortens s to n characters, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// timelineEdges draws the edges between the boxes of the counterexample's
// transactions: between lanes a curve from one box's edge to the other's
// (downward edges leave left of centre and bow left, upward ones right,
// so that the two directions between a pair stay apart); within a lane an
// arc above it. Each label sits on a white plate on its curve, in the gap
// between two lanes nearest the curve's middle that no earlier label
// holds, so that labels cover neither boxes nor each other.
func timelineEdges(tl *explain.Timeline, nm namer, ce map[int64]tlBox, idPrefix string) (string, string) {
	var paths, labels strings.Builder
	type pair struct{ a, b int64 }
	seen := map[pair]int{}
	var placed []rect
	for _, e := range tl.Edges {
		from, ok1 := ce[e.From]
		to, ok2 := ce[e.To]
		if !ok1 || !ok2 || e.From == e.To {
			continue
		}
		k := float64(seen[pair{e.From, e.To}])
		seen[pair{e.From, e.To}]++
		var c cubic
		switch {
		case from.lane == to.lane:
			sx, ex := from.cx()+6*k, to.cx()+6*k
			lift := 18 + 8*k + math.Min(14, math.Abs(ex-sx)/10)
			c = cubic{point{sx, from.top() - 2}, point{sx, from.top() - 2 - lift}, point{ex, to.top() - 2 - lift}, point{ex, to.top() - 2}}
		case from.lane < to.lane:
			off := -math.Min(from.w, to.w)/6 - 6*k
			s, t := point{from.cx() + off, from.bottom() + 2}, point{to.cx() + off, to.top() - 2}
			dy, bow := (t.y-s.y)/2, 36+8*k
			c = cubic{s, point{s.x - bow, s.y + dy}, point{t.x - bow, t.y - dy}, t}
		default:
			off := math.Min(from.w, to.w)/6 + 6*k
			s, t := point{from.cx() + off, from.top() - 2}, point{to.cx() + off, to.bottom() + 2}
			dy, bow := (s.y-t.y)/2, 36+8*k
			c = cubic{s, point{s.x + bow, s.y - dy}, point{t.x + bow, t.y + dy}, t}
		}
		rel := e.Relation
		if _, ok := relColor[rel]; !ok {
			rel = "other"
		}
		key := ""
		if e.Key != "" {
			key = fmt.Sprintf(` data-key="%s"`, html.EscapeString(e.Key))
		}
		label := e.Relation
		if e.Key != "" {
			label = fmt.Sprintf("%s(%s)", e.Relation, e.Key)
		}
		cls, width := "tl-edge", "2.2"
		if e.Context {
			cls, width = "tl-edge context", "1.2"
		}
		title := fmt.Sprintf("%s → %s: %s", nm.txn(e.From), nm.txn(e.To), label)
		fmt.Fprintf(&paths, `<g class="%s"%s><path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="%s" marker-end="url(#%s-arrow-%s)"/><title>%s</title></g>`,
			cls, key, c[0].x, c[0].y, c[1].x, c[1].y, c[2].x, c[2].y, c[3].x, c[3].y, colorOf(e.Relation), width, idPrefix, rel, html.EscapeString(title))
		if e.Context {
			continue
		}
		tw := 7.2*float64(len([]rune(label))) + 10
		p := labelSpot(c, from, to, tw, placed)
		placed = append(placed, rect{p.x - tw/2, p.y - 9, tw, 18})
		fmt.Fprintf(&labels, `<g class="tl-elabel"%s><rect x="%.1f" y="%.1f" width="%.1f" height="18" rx="9" fill="#fff" stroke="%s" stroke-width="1.2"/><text x="%.1f" y="%.1f" text-anchor="middle" fill="%s">%s</text><title>%s</title></g>`,
			key, p.x-tw/2, p.y-9, tw, colorOf(e.Relation), p.x, p.y+4, colorOf(e.Relation), html.EscapeString(label), html.EscapeString(title))
	}
	return paths.String(), labels.String()
}

// cubic is a cubic Bézier curve.
type cubic [4]point

func (c cubic) at(t float64) point {
	u := 1 - t
	a, b, cc, d := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
	return point{a*c[0].x + b*c[1].x + cc*c[2].x + d*c[3].x, a*c[0].y + b*c[1].y + cc*c[2].y + d*c[3].y}
}

// atY returns the point of a curve monotone in y where it crosses y.
func (c cubic) atY(y float64) point {
	lo, hi := 0.0, 1.0
	down := c[3].y > c[0].y
	for range 40 {
		m := (lo + hi) / 2
		if (c.at(m).y < y) == down {
			lo = m
		} else {
			hi = m
		}
	}
	return c.at((lo + hi) / 2)
}

type rect struct{ x, y, w, h float64 }

func (r rect) overlaps(o rect) bool {
	return r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h
}

// labelSpot chooses where a label of width w goes on curve c from box a to
// box b: the middle of a gap between lanes that the curve crosses, the
// gap nearest the curve's middle first, avoiding the labels placed; when
// every gap is taken, the middle one, moved right until it is free.
func labelSpot(c cubic, a, b tlBox, w float64, placed []rect) point {
	free := func(p point) bool {
		r := rect{p.x - w/2, p.y - 9, w, 18}
		for _, o := range placed {
			if r.overlaps(o) {
				return false
			}
		}
		return true
	}
	if a.lane == b.lane {
		p := c.at(0.5)
		for i := 0; i < 20 && !free(p); i++ {
			p.y -= 10
		}
		return p
	}
	// The gaps crossed: below lane l for l from the upper box's lane.
	upper, lower := a, b
	if upper.lane > lower.lane {
		upper, lower = b, a
	}
	gap0 := upper.bottom() + (tlLaneH-tlBoxH)/2
	n := lower.lane - upper.lane
	mid := (gap0 + gap0 + float64(n-1)*tlLaneH) / 2
	var spots []point
	for i := 0; i < n; i++ {
		spots = append(spots, c.atY(gap0+float64(i)*tlLaneH))
	}
	sort.SliceStable(spots, func(i, j int) bool { return math.Abs(spots[i].y-mid) < math.Abs(spots[j].y-mid) })
	for _, p := range spots {
		if free(p) {
			return p
		}
	}
	p := spots[0]
	for i := 0; i < 50 && !free(p); i++ {
		p.x += w / 2
	}
	return p
}

// htmlTimeline is a counterexample's timeline on the page.
type htmlTimeline struct {
	ID         string
	Side, Main template.HTML
	Caption    string
	Keys       []string
	// MoreKeys counts the keys left out of the filter.
	MoreKeys int
	// ZoomMin is the slider's lower end: small enough to see the whole
	// width in about a page.
	ZoomMin string
}

func timelineModel(tl *explain.Timeline, nm namer, n int) *htmlTimeline {
	if tl == nil || len(tl.Sessions) == 0 {
		return nil
	}
	id := fmt.Sprintf("timeline-%d", n)
	pic := timelineSVG(tl, nm, fmt.Sprintf("tl%d", n))
	w := pic.W
	m := &htmlTimeline{ID: id, Side: template.HTML(pic.Side), Main: template.HTML(pic.Main), Keys: tl.Keys}
	if len(m.Keys) > tlMaxKeys {
		m.Keys, m.MoreKeys = m.Keys[:tlMaxKeys], len(m.Keys)-tlMaxKeys
	}
	m.ZoomMin = fmt.Sprintf("%.2f", math.Max(0.02, math.Min(0.5, 1000/w)))
	var what string
	if tl.Whole {
		what = fmt.Sprintf("The whole history: %d transaction%s in %d session%s", tl.Total, plural(tl.Total), len(tl.Sessions), plural(len(tl.Sessions)))
	} else {
		what = fmt.Sprintf("The %d session%s of the counterexample's transactions", len(tl.Sessions), plural(len(tl.Sessions)))
		if tl.MoreSessions > 0 {
			what += fmt.Sprintf(" (%d other%s not shown)", tl.MoreSessions, plural(tl.MoreSessions))
		}
		what += fmt.Sprintf(", %d of the history's %d transactions around them; “… N more” marks those left out", tl.Shown, tl.Total)
	}
	if tl.Timed {
		what += ", at their real-time intervals"
	} else {
		what += ", in session order (the history has no real time)"
	}
	what += "; the counterexample's sessions come first."
	m.Caption = what + " Highlighted: the counterexample's transactions (darker on the cycle), with the cycle's dependencies. The slider (or Ctrl + wheel) zooms; choosing a key dims the transactions that do not touch it."
	return m
}
