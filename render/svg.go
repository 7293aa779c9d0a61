package render

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/explain"
)

// The counterexample graph is laid out by hand: the transactions of the
// cycle on a circle in cycle order (so the cycle reads clockwise), the
// other transactions of the counterexample after them, each edge a
// quadratic curve bent to its left so that the two directions between a
// pair of transactions stay apart, with its label on a white plate.

const (
	// maxGraphTxns bounds the transactions drawn besides the cycle's.
	maxGraphTxns = 40
	nodeW        = 96.0
	nodeH        = 46.0
)

type point struct{ x, y float64 }

// graphSVG renders txns and edges as an inline SVG element.
func graphSVG(nm namer, txns []explain.Txn, edges, context []check.Edge, idPrefix string, scale float64) string {
	// Order: cycle transactions in cycle order, then the rest.
	var order []int64
	seen := map[int64]bool{}
	for _, e := range edges {
		if !seen[e.From] {
			seen[e.From] = true
			order = append(order, e.From)
		}
	}
	for _, e := range edges {
		if !seen[e.To] {
			seen[e.To] = true
			order = append(order, e.To)
		}
	}
	byID := map[int64]explain.Txn{}
	for _, t := range txns {
		byID[t.ID] = t
		// A large counterexample shows only the cycle's transactions.
		if !seen[t.ID] && len(txns) <= maxGraphTxns {
			seen[t.ID] = true
			order = append(order, t.ID)
		}
	}
	n := len(order)
	r := 0.0
	if n > 1 {
		// Neighbouring boxes keep a gap of at least a box width.
		r = math.Max(120, 2*nodeW/(2*math.Sin(math.Pi/float64(n))))
		if n == 2 {
			r = 150
		}
	}
	pos := map[int64]point{}
	for i, id := range order {
		// Start at the top (or the left for two) and go clockwise.
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		if n == 2 {
			a = math.Pi + math.Pi*float64(i)
		}
		pos[id] = point{r * math.Cos(a), r * math.Sin(a)}
	}
	// The picture's box: the nodes, and the bends of the edges, plus room
	// for labels.
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	grow := func(p point, dx, dy float64) {
		minX, maxX = math.Min(minX, p.x-dx), math.Max(maxX, p.x+dx)
		minY, maxY = math.Min(minY, p.y-dy), math.Max(maxY, p.y+dy)
	}
	for _, p := range pos {
		grow(p, nodeW/2+12, nodeH/2+12)
	}
	for _, e := range edges {
		p0, p2 := pos[e.From], pos[e.To]
		grow(point{(p0.x + p2.x) / 2, (p0.y + p2.y) / 2}, 50, 20)
	}
	const pad = 24.0
	// Shift everything so that the box starts at (pad, pad).
	for id, p := range pos {
		pos[id] = point{p.x - minX + pad, p.y - minY + pad}
	}
	w := maxX - minX + 2*pad
	hgt := maxY - minY + 2*pad
	if n == 2 {
		hgt += 70 // the two bends of a two-edge cycle
		for id, p := range pos {
			pos[id] = point{p.x, p.y + 35}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="graph" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="counterexample graph">`, w, hgt, w*scale, hgt*scale)
	b.WriteString("<defs>")
	for _, rel := range []string{"so", "wr", "ww", "rw", "co", "rt", "other"} {
		fmt.Fprintf(&b, `<marker id="%s-arrow-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`, idPrefix, rel, colorOf(rel))
	}
	b.WriteString("</defs>")
	// Count parallel edges so that each gets its own bend.
	type pair struct{ a, b int64 }
	total := map[pair]int{}
	for _, e := range edges {
		total[pair{e.From, e.To}]++
	}
	for _, e := range context {
		total[pair{e.From, e.To}]++
	}
	used := map[pair]int{}
	var labels strings.Builder
	all := append(append([]check.Edge(nil), context...), edges...)
	for i, e := range all {
		faint := i < len(context)
		if _, ok := pos[e.From]; !ok {
			continue
		}
		if _, ok := pos[e.To]; !ok {
			continue
		}
		p0, p2 := pos[e.From], pos[e.To]
		k := used[pair{e.From, e.To}]
		used[pair{e.From, e.To}]++
		dx, dy := p2.x-p0.x, p2.y-p0.y
		d := math.Hypot(dx, dy)
		if d == 0 {
			continue
		}
		// Bend to the left of the direction of travel.
		bend := 0.18*d + 34*float64(k)
		if total[pair{e.To, e.From}] == 0 && total[pair{e.From, e.To}] == 1 && n > 2 {
			bend = 0.08 * d
		}
		mid := point{(p0.x + p2.x) / 2, (p0.y + p2.y) / 2}
		nx, ny := dy/d, -dx/d
		ctrl := point{mid.x + nx*bend, mid.y + ny*bend}
		start := boxExit(p0, ctrl)
		end := boxExit(p2, ctrl)
		rel := e.Relation
		if _, ok := relColor[rel]; !ok {
			rel = "other"
		}
		dash := ""
		if e.Relation == "so" {
			dash = ` stroke-dasharray="6 4"`
		}
		width, opacity := "2.2", ""
		if faint {
			width, opacity = "1.3", ` opacity="0.45"`
		}
		fmt.Fprintf(&b, `<path d="M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="%s"%s%s marker-end="url(#%s-arrow-%s)"><title>%s</title></path>`,
			start.x, start.y, ctrl.x, ctrl.y, end.x, end.y, colorOf(e.Relation), width, opacity, dash, idPrefix, rel, html.EscapeString(e.Reason))
		// Label at the curve's midpoint.
		lx := 0.25*start.x + 0.5*ctrl.x + 0.25*end.x
		ly := 0.25*start.y + 0.5*ctrl.y + 0.25*end.y
		text := nm.label(e)
		tw := 7.2*float64(len([]rune(text))) + 10
		if faint {
			fmt.Fprintf(&b, `<text class="clabel" x="%.1f" y="%.1f" text-anchor="middle" fill="%s">%s<title>%s</title></text>`,
				lx, ly-4, colorOf(e.Relation), html.EscapeString(text), html.EscapeString(e.Reason))
			continue
		}
		fmt.Fprintf(&labels, `<g class="elabel"><rect x="%.1f" y="%.1f" width="%.1f" height="19" rx="9" fill="#fff" stroke="%s" stroke-width="1.2"/><text x="%.1f" y="%.1f" text-anchor="middle" fill="%s">%s</text><title>%s</title></g>`,
			lx-tw/2, ly-10, tw, colorOf(e.Relation), lx, ly+4, colorOf(e.Relation), html.EscapeString(text), html.EscapeString(e.Reason))
	}
	for _, id := range order {
		p := pos[id]
		t, ok := byID[id]
		sub := "initial state"
		if ok {
			sub = fmt.Sprintf("session %d · #%d", t.Session, t.Index)
		}
		cls := "node"
		if ok && !onEdges(edges, id) {
			cls = "node off"
		}
		fmt.Fprintf(&b, `<g class="%s"><rect x="%.1f" y="%.1f" width="%.0f" height="%.0f" rx="10"/><text x="%.1f" y="%.1f" class="tname" text-anchor="middle">%s</text><text x="%.1f" y="%.1f" class="tsub" text-anchor="middle">%s</text></g>`,
			cls, p.x-nodeW/2, p.y-nodeH/2, nodeW, nodeH, p.x, p.y-2, html.EscapeString(nm.txn(id)), p.x, p.y+14, html.EscapeString(sub))
	}
	b.WriteString(labels.String())
	b.WriteString("</svg>")
	return b.String()
}

func onEdges(edges []check.Edge, id int64) bool {
	for _, e := range edges {
		if e.From == id || e.To == id {
			return true
		}
	}
	return false
}

// boxExit returns where the segment from a node's centre c towards p leaves
// the node's box (with a small gap for the arrowhead).
func boxExit(c, p point) point {
	dx, dy := p.x-c.x, p.y-c.y
	if dx == 0 && dy == 0 {
		return c
	}
	hw, hh := nodeW/2+4, nodeH/2+4
	s := math.Inf(1)
	if dx != 0 {
		s = math.Min(s, hw/math.Abs(dx))
	}
	if dy != 0 {
		s = math.Min(s, hh/math.Abs(dy))
	}
	return point{c.x + s*dx, c.y + s*dy}
}
