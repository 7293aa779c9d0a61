package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/explain"
	"github.com/hyperiso/hyperiso/history"
)

//go:embed report.html.tmpl
var htmlTemplate string

// classBlurb says in a sentence what a class means (history.Classes).
func classBlurb(name string) string {
	c, _ := history.ClassOf(name)
	return c.Summary
}

// classColor gives each class a badge colour.
func classColor(c string) string {
	switch c {
	case history.G0:
		return "#6c3483"
	case history.G1a, history.G1b, history.G1c, history.AbortedRead.String(), history.IntermediateRead.String():
		return "#a93226"
	case history.GSingle, history.Phantom, history.PMP:
		return "#ca6f1e"
	case history.G2Item, history.G2:
		return "#b7950b"
	case history.LostUpdate:
		return "#1e8449"
	case history.FracturedRead:
		return "#2874a6"
	case history.CausalityViolation:
		return "#7d3c98"
	}
	return "#566573"
}

type htmlOp struct {
	Hot       bool
	Text      string
	Class     string
	Title     string
	Dropped   bool
	Offending bool
}

type htmlTxn struct {
	Name, Where, Status string
	Ops                 []htmlOp
}

type htmlEdge struct {
	From, To, Label, Color, Reason string
}

type htmlCase struct {
	N       int
	Choices string
	Class   string
	Color   string
	Graph   template.HTML
	Edges   []htmlEdge
}

type htmlCE struct {
	N, Of         int
	Class         string
	Color         string
	Blurb         string
	Summary       string
	Story         string
	Size          int
	Total         int
	Minimal       bool
	Minimality    string
	Search        string
	Graph         template.HTML
	Edges         []htmlEdge
	Context       []htmlEdge
	Txns          []htmlTxn
	HasDropped    bool
	Cases         []htmlCase
	CasesComplete bool
	History       string
	Timeline      *htmlTimeline
}

type htmlAnomaly struct {
	Type, Description string
}

type htmlPage struct {
	Title      string
	Source     string
	Format     string
	Level      string
	Verdict    string
	VerdictCls string
	Reason     string
	Stats      string
	Note       string
	CEs        []htmlCE
	Others     []htmlAnomaly
	MoreOthers int
	Budget     string
	Legend     []htmlEdge
}

// HTML writes a single self-contained HTML page: no scripts, fonts,
// images or style sheets from elsewhere (a few lines of inline script zoom
// and filter the timelines), so it works offline and can be attached to a
// bug report. It shows the verdict, and per counterexample its class, the
// graph of its cycle (inline SVG), the reason of every edge, the
// transactions with their operations, a timeline of the history around
// them (a lane per session, the counterexample highlighted, the cycle's
// edges drawn), the cases of uncertain choices, how minimal it is, and the
// counterexample as JSON Lines.
//
// The page reads two URL parameters: zoom (a factor, e.g. ?zoom=0.5) and
// key (a key of the counterexample, as the filter lists it) set every
// timeline's zoom and key filter on load.
func HTML(w io.Writer, rep *explain.Report) error {
	t, err := template.New("report").Parse(htmlTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, htmlModel(rep))
}

func htmlModel(rep *explain.Report) htmlPage {
	res := rep.Result
	s := res.History
	p := htmlPage{
		Title:   fmt.Sprintf("%s %s — hyperiso explain", strings.ToUpper(res.Level), strings.ToUpper(res.Verdict.String())),
		Source:  res.Source,
		Format:  res.Format,
		Level:   strings.ToUpper(res.Level),
		Verdict: strings.ToUpper(res.Verdict.String()),
		Reason:  res.Reason,
		Stats: fmt.Sprintf("%d sessions · %d transactions (%d committed, %d aborted, %d unknown) · %d operations · %d keys",
			s.Sessions, s.Transactions, s.Committed, s.Aborted, s.Unknown, s.Operations, s.Keys),
	}
	switch res.Verdict {
	case check.Violated:
		p.VerdictCls = "bad"
	case check.Satisfied:
		p.VerdictCls = "good"
	default:
		p.VerdictCls = "unknown"
	}
	present := map[string]bool{}
	if rep.Explanation != nil {
		for _, ce := range rep.Explanation.Counterexamples {
			for _, e := range ce.Edges {
				present[e.Relation] = true
			}
			for _, c := range ce.Cases {
				for _, e := range c.Edges {
					present[e.Relation] = true
				}
			}
		}
	}
	for _, rel := range []string{"so", "wr", "ww", "rw", "co"} {
		if !present[rel] {
			continue
		}
		p.Legend = append(p.Legend, htmlEdge{Label: rel, Color: colorOf(rel), Reason: map[string]string{
			"so": "session order", "wr": "read from (write → read)", "ww": "version order (write → later write)",
			"rw": "anti-dependency (read → overwriting write)", "co": "commit order a weak level forces",
		}[rel]})
	}
	ex := rep.Explanation
	if ex == nil {
		return p
	}
	p.Note = ex.Note
	u := ex.Budget
	p.Budget = fmt.Sprintf("explain budget: %d of %d re-checks, %.0f of %.0f ms used", u.UsedChecks, u.Checks, u.UsedMS, u.TimeMS)
	if u.Exhausted {
		p.Budget += " (exhausted)"
	}
	explained := map[int]bool{}
	for i, ce := range ex.Counterexamples {
		explained[ce.Anomaly] = true
		cls := classOf(ce)
		nm := namerOf(ce)
		h := htmlCE{
			N: i + 1, Of: len(ex.Counterexamples), Class: cls, Color: classColor(cls), Blurb: classBlurb(cls),
			Summary: ce.Summary, Story: ce.Story, Size: ce.Size, Total: s.Transactions, Minimal: ce.Minimal, Minimality: ce.Minimality,
			Search: fmt.Sprintf("Search started from %s%s; %d re-check%s in %.1f ms; the counterexample alone is %s at %s.",
				methodWords(ce.Method), coreWords(ce), ce.Checks, plural(ce.Checks), ce.ElapsedMS, ce.Recheck, strings.ToUpper(res.Level)),
			Graph:         template.HTML(graphSVG(nm, ce.Transactions, ce.Edges, ce.Context, fmt.Sprintf("g%d", i+1), 1)),
			Edges:         htmlEdges(nm, ce.Edges),
			Context:       htmlEdges(nm, ce.Context),
			CasesComplete: ce.CasesComplete,
			History:       inlineHistory(ce),
			HasDropped:    hasDropped(ce),
		}
		h.Timeline = timelineModel(ce.Timeline, nm, i+1)
		// The operations on the keys of the cycle's edges are the ones that
		// matter: highlight them.
		type txnKey struct{ t, k int64 }
		hot := map[txnKey]bool{}
		for _, e := range ce.Edges {
			if e.Key != nil {
				hot[txnKey{e.From, *e.Key}], hot[txnKey{e.To, *e.Key}] = true, true
			}
		}
		for _, t := range ce.Transactions {
			ht := htmlTxn{Name: TxnName(t.TxnRef), Where: fmt.Sprintf("session %d · #%d", t.Session, t.Index)}
			if t.Status != "" && t.Status != "committed" {
				ht.Status = t.Status
			}
			for _, o := range t.Ops {
				op := htmlOp{Text: OpString(o), Dropped: o.Dropped, Offending: o.Offending, Hot: hot[txnKey{t.ID, o.Key}] && !o.Dropped}
				switch {
				case o.Kind == "w" || o.Kind == "append":
					op.Class = "w"
				default:
					op.Class = "r"
				}
				if o.Dropped {
					op.Title = "left out of the counterexample: it could have read from a transaction outside it"
				}
				if o.Offending {
					op.Title = "the read this finding is about"
				}
				ht.Ops = append(ht.Ops, op)
			}
			h.Txns = append(h.Txns, ht)
		}
		for j, c := range ce.Cases {
			h.Cases = append(h.Cases, htmlCase{
				N: j + 1, Choices: strings.Join(c.Choices, " and "), Class: c.Class, Color: classColor(c.Class),
				Graph: template.HTML(graphSVG(nm, ce.Transactions, c.Edges, nil, fmt.Sprintf("g%dc%d", i+1, j+1), 0.75)),
				Edges: htmlEdges(nm, c.Edges),
			})
		}
		p.CEs = append(p.CEs, h)
	}
	for i, a := range res.Anomalies {
		if explained[i] {
			continue
		}
		if len(p.Others) == 50 {
			p.MoreOthers++
			continue
		}
		p.Others = append(p.Others, htmlAnomaly{Type: a.Type, Description: a.Description})
	}
	return p
}

func htmlEdges(nm namer, edges []check.Edge) []htmlEdge {
	var out []htmlEdge
	for _, e := range edges {
		out = append(out, htmlEdge{From: nm.txn(e.From), To: nm.txn(e.To), Label: nm.label(e), Color: colorOf(e.Relation), Reason: e.Reason})
	}
	return out
}

func coreWords(ce *explain.Counterexample) string {
	if ce.Core == "" {
		return ""
	}
	return "; " + ce.Core
}

func inlineHistory(ce *explain.Counterexample) string {
	if ce.Size > maxInlineHistory {
		return ""
	}
	return ce.History
}
