package render

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/explain"
	"github.com/hyperiso/hyperiso/history"
)

// svgElem is one element of a parsed SVG: its name, attributes, the text
// directly inside it, and the classes of its ancestors' groups.
type svgElem struct {
	name  string
	attr  map[string]string
	text  string
	group string // the class of the innermost enclosing <g>
	gattr map[string]string
}

func (e svgElem) num(t *testing.T, a string) float64 {
	v, err := strconv.ParseFloat(e.attr[a], 64)
	require.NoError(t, err, "%s of %s", a, e.name)
	return v
}

// parseSVG checks that s is well-formed XML and returns its elements in
// document order.
func parseSVG(t *testing.T, s string) []svgElem {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	var out []svgElem
	var stack []int
	type g struct {
		class string
		attr  map[string]string
	}
	var groups []g
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "not well-formed SVG")
		switch tok := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			if len(groups) > 0 {
				e.group, e.gattr = groups[len(groups)-1].class, groups[len(groups)-1].attr
			}
			if e.name == "g" {
				groups = append(groups, g{e.attr["class"], e.attr})
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			if out[stack[len(stack)-1]].name == "g" {
				groups = groups[:len(groups)-1]
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].text += string(tok)
			}
		}
	}
	require.Empty(t, stack)
	return out
}

// pick returns the elements named name whose class (or, with inGroup, whose
// enclosing group's class) has every class of want.
func pick(es []svgElem, name, want string, inGroup bool) []svgElem {
	var out []svgElem
	for _, e := range es {
		cls := e.attr["class"]
		if inGroup {
			cls = e.group
		}
		if e.name != name || !hasClasses(cls, want) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func hasClasses(cls, want string) bool {
	have := map[string]bool{}
	for _, c := range strings.Fields(cls) {
		have[c] = true
	}
	for _, c := range strings.Fields(want) {
		if !have[c] {
			return false
		}
	}
	return true
}

func texts(es []svgElem) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.text)
	}
	return out
}

// TestTimelineSVGSmall: the timeline of a 2-transaction write skew in a
// 4-transaction history: the whole history, the cycle's lanes first and
// aligned, both edges drawn and labelled in the gap between the lanes,
// nothing outside the picture.
func TestTimelineSVGSmall(t *testing.T) {
	h := readHistory(t, "../testdata/explain/g2-item.jsonl")
	rep, err := explain.Explain(context.Background(), h, history.SER, explain.Options{})
	require.NoError(t, err)
	ce := rep.Explanation.Counterexamples[0]
	pic := timelineSVG(ce.Timeline, namerOf(ce), "t")
	main, side := parseSVG(t, pic.Main), parseSVG(t, pic.Side)

	require.Equal(t, "svg", main[0].name)
	require.Equal(t, fmt.Sprintf("0 0 %.0f %.0f", pic.W, pic.H), main[0].attr["viewBox"])
	require.Equal(t, main[0].attr["width"], main[0].attr["data-w"])
	require.Equal(t, side[0].attr["height"], main[0].attr["height"])
	// One lane per session, the cycle's sessions (1 and 2) first.
	require.Len(t, pick(main, "rect", "tl-lane", false), 3)
	require.Equal(t, []string{"session 1", "session 2", "session 3"}, texts(pick(side, "text", "tl-lname", false)))
	require.Equal(t, []string{"session 1", "session 2"}, texts(pick(side, "text", "tl-lname ce", false)))
	require.Contains(t, texts(pick(main, "text", "tl-axis", false))[0], "position in session order")

	boxes := pick(main, "rect", "tl-txn", true)
	require.Len(t, boxes, 4)
	cyc := pick(main, "rect", "tl-txn ce cyc", true)
	require.Len(t, cyc, 2)
	require.Equal(t, cyc[0].num(t, "x"), cyc[1].num(t, "x"), "lanes aligned on the counterexample")
	require.Less(t, cyc[0].num(t, "y"), cyc[1].num(t, "y"))
	for _, b := range boxes {
		require.GreaterOrEqual(t, b.num(t, "width"), 100.0, "a short timeline has wide boxes")
		require.LessOrEqual(t, b.num(t, "x")+b.num(t, "width"), pic.W)
		require.LessOrEqual(t, b.num(t, "y")+b.num(t, "height"), pic.H)
	}
	// Names and operations in the boxes; the keys each touches for the filter.
	require.ElementsMatch(t, []string{"T1", "T2", "T3", "T4"}, texts(pick(main, "text", "tl-name", false)))
	require.Contains(t, texts(pick(main, "text", "tl-ops", false)), "r(x)=0 r(y)=0 w(x)=1")
	var keys []string
	for _, b := range boxes {
		keys = append(keys, b.gattr["data-keys"])
	}
	require.ElementsMatch(t, []string{`["x","y"]`, `["z"]`, `["x","y"]`, `["x","y","z"]`}, keys)

	// The two rw edges, each with its key for the filter and its label on
	// a plate between the lanes.
	paths := pick(main, "path", "tl-edge", true)
	require.Len(t, paths, 2)
	var ekeys []string
	for _, p := range paths {
		ekeys = append(ekeys, p.gattr["data-key"])
		require.Equal(t, colorOf("rw"), p.attr["stroke"])
		require.Equal(t, "url(#t-arrow-rw)", p.attr["marker-end"])
	}
	require.ElementsMatch(t, []string{"x", "y"}, ekeys)
	labels := pick(main, "text", "tl-elabel", true)
	require.ElementsMatch(t, []string{"rw(x)", "rw(y)"}, texts(labels))
	plates := pick(main, "rect", "tl-elabel", true)
	require.Len(t, plates, 2)
	gapTop, gapBottom := cyc[0].num(t, "y")+cyc[0].num(t, "height"), cyc[1].num(t, "y")
	for i, p := range plates {
		y, hgt := p.num(t, "y"), p.num(t, "height")
		require.GreaterOrEqual(t, y, gapTop, "label %d covers a box", i)
		require.LessOrEqual(t, y+hgt, gapBottom, "label %d covers a box", i)
	}
	x0, x1 := plates[0].num(t, "x"), plates[1].num(t, "x")
	require.True(t, x0+plates[0].num(t, "width") <= x1 || x1+plates[1].num(t, "width") <= x0, "labels overlap")
}

// TestTimelineSVGTimed: with real time, boxes sit at their intervals on a
// linear scale with ticks; an open transaction runs to the end; markers
// say what is left out; a cycle through T⊥ gets the initial-state lane.
func TestTimelineSVGTimed(t *testing.T) {
	iv := func(a, b int64) *explain.Interval { return &explain.Interval{Start: a, End: b} }
	tl := &explain.Timeline{Timed: true, Total: 30, Shown: 4, MoreSessions: 2, InitID: -1, Keys: []string{"k"},
		Sessions: []explain.TimelineSession{
			{ID: 7, Size: 12, MoreAfter: 5, Txns: []explain.TimelineTxn{
				{ID: 1, Index: 3, Status: "committed", MoreBefore: 3, Time: iv(100, 200), Ops: "w(k)=1", Keys: []string{"k"}, Counterexample: true, Cycle: true},
				{ID: 2, Index: 6, Status: "aborted", MoreBefore: 2, Time: iv(500, 600), Ops: "r(j)=0", Keys: []string{"j"}},
			}},
			{ID: 8, Size: 2, Txns: []explain.TimelineTxn{
				{ID: 3, Index: 0, Status: "committed", Time: iv(150, 300), Ops: "r(k)=0", Keys: []string{"k"}, Counterexample: true, Cycle: true},
				{ID: 4, Index: 1, Status: "unknown", Time: &explain.Interval{Start: 900, End: 900, Open: true}, Ops: "w(k)=2", Keys: []string{"k"}},
			}},
		},
		Edges: []explain.TimelineEdge{{From: 3, To: 1, Relation: "rw", Key: "k"}, {From: 1, To: -1, Relation: "co"}, {From: -1, To: 3, Relation: "wr", Key: "k"}},
	}
	pic := timelineSVG(tl, namer{init: -1}, "t")
	main, side := parseSVG(t, pic.Main), parseSVG(t, pic.Side)
	require.Equal(t, []string{"initial state", "session 7", "session 8"}, texts(pick(side, "text", "tl-lname", false)))
	require.Equal(t, []string{"real time →"}, texts(pick(side, "text", "tl-axis", false)))
	require.NotEmpty(t, pick(main, "text", "tl-tick", false))
	require.NotEmpty(t, pick(main, "line", "tl-grid", false))

	boxes := pick(main, "rect", "tl-txn", true)
	require.Len(t, boxes, 5, "4 transactions and T⊥")
	byName := map[string]svgElem{}
	names := pick(main, "text", "tl-name", false)
	require.Len(t, names, 5)
	for _, b := range boxes {
		for _, n := range names {
			if n.group == b.group && n.gattr["data-keys"] == b.gattr["data-keys"] && n.num(t, "x") >= b.num(t, "x") && n.num(t, "x") <= b.num(t, "x")+b.num(t, "width") && n.num(t, "y") > b.num(t, "y")-5 && n.num(t, "y") < b.num(t, "y")+b.num(t, "height") {
				byName[n.text] = b
			}
		}
	}
	require.Len(t, byName, 5, "every box carries its name")
	// Linear in time: T1 [100,200], T2 [500,600], T3 [150,300] over [100, 900].
	x := func(n string) float64 { return byName[n].num(t, "x") }
	w := func(n string) float64 { return byName[n].num(t, "width") }
	scale := w("T1") / 100
	require.InDelta(t, 400*scale, x("T2")-x("T1"), 0.2)
	require.InDelta(t, 50*scale, x("T3")-x("T1"), 0.2)
	require.InDelta(t, 150*scale, w("T3"), 0.2)
	require.InDelta(t, 800*scale, x("T4")-x("T1"), 0.2)
	require.Greater(t, x("T4")+w("T4"), x("T1")+800*scale, "the open transaction runs past the last time")
	require.Contains(t, byName["T2"].group, "aborted")
	require.Contains(t, byName["T4"].group, "unknown")
	require.Contains(t, byName["T⊥"].group, "cyc")
	require.Less(t, byName["T⊥"].num(t, "y"), byName["T1"].num(t, "y"), "the initial state's lane on top")

	// Markers: 3 before T1, 2 between T1 and T2, 5 after T2.
	more := texts(pick(main, "text", "tl-more", true))
	require.Equal(t, []string{"… 3 more", "… 2 more", "… 5 more"}, more)

	// Every edge drawn, T⊥'s included.
	require.Len(t, pick(main, "path", "tl-edge", true), 3)
	require.ElementsMatch(t, []string{"rw(k)", "co", "wr(k)"}, texts(pick(main, "text", "tl-elabel", true)))
}

// TestTimelineSVGLarge: a 400-transaction window (two lanes of 200 with
// markers) stays readable: every box named, wide enough for its name, no
// two boxes of a lane overlapping, the width bounded, and the page's zoom
// slider reaching down to about a page's width.
func TestTimelineSVGLarge(t *testing.T) {
	tl := &explain.Timeline{Total: 5000, Shown: 400, MoreSessions: 8, Keys: []string{"1", "2"}}
	id := int64(1)
	for s := int64(1); s <= 2; s++ {
		sess := explain.TimelineSession{ID: s, Size: 2500, MoreAfter: 2000}
		for i := 0; i < 200; i++ {
			tx := explain.TimelineTxn{ID: id, Index: 300 + i, Status: "committed", Ops: fmt.Sprintf("w(%d)=%d", 1000+id, id), Keys: []string{fmt.Sprint(1000 + id)}}
			if i == 0 {
				tx.MoreBefore = 300
			}
			if i == 100 {
				tx.Counterexample, tx.Cycle, tx.Keys = true, true, []string{"1", "2"}
			}
			sess.Txns = append(sess.Txns, tx)
			id++
		}
		tl.Sessions = append(tl.Sessions, sess)
	}
	tl.Edges = []explain.TimelineEdge{{From: 101, To: 301, Relation: "rw", Key: "2"}, {From: 301, To: 101, Relation: "rw", Key: "1"}}
	pic := timelineSVG(tl, namer{init: 0}, "t")
	main := parseSVG(t, pic.Main)
	boxes := pick(main, "rect", "tl-txn", true)
	require.Len(t, boxes, 400)
	require.Len(t, pick(main, "text", "tl-name", false), 400, "every box named")
	require.Len(t, pick(main, "g", "tl-more", false), 4, "a marker before and after each window")
	var counts []string
	for _, e := range pick(main, "text", "tl-more", true) {
		if e.attr["class"] == "" {
			counts = append(counts, e.text)
		}
	}
	require.Equal(t, []string{"… 300", "… 2000", "… 300", "… 2000"}, counts)
	lanes := map[float64][]svgElem{}
	for _, b := range boxes {
		require.GreaterOrEqual(t, b.num(t, "width"), 44.0)
		lanes[b.num(t, "y")] = append(lanes[b.num(t, "y")], b)
	}
	require.Len(t, lanes, 2)
	for _, bs := range lanes {
		for i := 1; i < len(bs); i++ {
			require.Greater(t, bs[i].num(t, "x"), bs[i-1].num(t, "x")+bs[i-1].num(t, "width"), "boxes overlap")
		}
	}
	cyc := pick(main, "rect", "tl-txn cyc", true)
	require.Len(t, cyc, 2)
	require.Equal(t, cyc[0].num(t, "x"), cyc[1].num(t, "x"), "lanes aligned on the counterexample")
	require.Less(t, pic.W, 13000.0)
	require.Len(t, pick(main, "path", "tl-edge", true), 2)

	m := timelineModel(tl, namer{}, 1)
	zmin, err := strconv.ParseFloat(m.ZoomMin, 64)
	require.NoError(t, err)
	require.LessOrEqual(t, zmin*pic.W, 1100.0, "zoomed out, the window fits about a page")
}

// TestTimelineInPage: the page carries each counterexample's timeline with
// its controls, keys and script, and nothing from elsewhere.
func TestTimelineInPage(t *testing.T) {
	h := readHistory(t, "../testdata/explain/g2-item.jsonl")
	rep, err := explain.Explain(context.Background(), h, history.SER, explain.Options{})
	require.NoError(t, err)
	var page bytes.Buffer
	require.NoError(t, HTML(&page, rep))
	s := page.String()
	for _, want := range []string{`<div class="timeline" id="timeline-1">`, `class="tl-zoom"`, `<select class="tl-key"><option value="">all keys</option><option value="y">y</option><option value="x">x</option></select>`,
		`<svg xmlns="http://www.w3.org/2000/svg" class="tl"`, `<svg xmlns="http://www.w3.org/2000/svg" class="tl-side"`, `new URLSearchParams(location.search)`, "The whole history: 4 transactions in 3 sessions"} {
		require.True(t, strings.Contains(s, want), "the page lacks %s", want)
	}
	require.NotContains(t, s, "<script src")
}

// TestTimelineTicks: round ticks; a clock far from zero is labelled by
// offsets from the first time shown.
func TestTimelineTicks(t *testing.T) {
	require.Equal(t, 1.0, niceStep(0.3))
	require.Equal(t, 20.0, niceStep(13))
	require.Equal(t, 5e8, niceStep(3.1e8))
	require.Equal(t, "99999", compactNumber(99999))
	require.Equal(t, "250k", compactNumber(250000))
	require.Equal(t, "1.23M", compactNumber(1234567))
	require.Equal(t, "2.5G", compactNumber(2.5e9))

	iv := func(a, b int64) *explain.Interval { return &explain.Interval{Start: a, End: b} }
	const t0 = 1_700_000_000_000_000_000
	tl := &explain.Timeline{Timed: true, Total: 2, Shown: 2, Whole: true, Keys: []string{"k"},
		Sessions: []explain.TimelineSession{
			{ID: 1, Size: 1, Txns: []explain.TimelineTxn{{ID: 1, Status: "committed", Time: iv(t0, t0+2e9), Keys: []string{"k"}, Counterexample: true, Cycle: true}}},
			{ID: 2, Size: 1, Txns: []explain.TimelineTxn{{ID: 2, Status: "committed", Time: iv(t0+1e9, t0+3e9), Keys: []string{"k"}, Counterexample: true, Cycle: true}}},
		}}
	main := parseSVG(t, timelineSVG(tl, namer{}, "t").Main)
	ticks := texts(pick(main, "text", "tl-tick", false))
	require.Equal(t, []string{"t₀+0", "t₀+1G", "t₀+2G", "t₀+3G"}, ticks)
	require.Contains(t, texts(pick(main, "text", "tl-axis", false)), "t₀ = 1700000000000000000")

	tl.Sessions[0].Txns[0].Time, tl.Sessions[1].Txns[0].Time = iv(3, 9), iv(12, 40)
	main = parseSVG(t, timelineSVG(tl, namer{}, "t").Main)
	require.Equal(t, []string{"10", "20", "30", "40"}, texts(pick(main, "text", "tl-tick", false)))
}
