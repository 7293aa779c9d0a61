package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/explain"
)

// relColor is the colour of each relation in pictures.
var relColor = map[string]string{
	"so": "#7f8c8d",
	"wr": "#2471a3",
	"ww": "#d68910",
	"rw": "#c0392b",
	"co": "#8e44ad",
	"rt": "#16a085",
}

func colorOf(rel string) string {
	if c, ok := relColor[rel]; ok {
		return c
	}
	return "#34495e"
}

// dotString quotes s for DOT.
func dotString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}

// DOT writes the counterexamples as a Graphviz digraph: one cluster
// per counterexample (and per case of its case analysis), a node per
// transaction listing its operations, an edge per dependency of the cycle,
// coloured by relation.
func DOT(w io.Writer, rep *explain.Report) error {
	var b strings.Builder
	b.WriteString("digraph counterexamples {\n")
	b.WriteString("  graph [fontname=\"Helvetica\", labelloc=t, rankdir=LR];\n")
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f4f6fb\", color=\"#5d6d7e\", fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=10];\n")
	fmt.Fprintf(&b, "  label=%s;\n", dotString(fmt.Sprintf("%s: %s %s", rep.Source, strings.ToUpper(rep.Level), strings.ToUpper(rep.Verdict.String()))))
	if rep.Explanation != nil {
		for i, ce := range rep.Explanation.Counterexamples {
			writeDOTCluster(&b, namerOf(ce), fmt.Sprintf("c%d", i+1), fmt.Sprintf("counterexample %d: %s, %d transactions", i+1, classOf(ce), ce.Size), ce.Transactions, ce.Edges)
			for j, c := range ce.Cases {
				writeDOTCluster(&b, namerOf(ce), fmt.Sprintf("c%d_case%d", i+1, j+1), fmt.Sprintf("case %d: if %s: %s", j+1, strings.Join(c.Choices, " and "), c.Class), ce.Transactions, c.Edges)
			}
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func classOf(ce *explain.Counterexample) string {
	if ce.Class != "" {
		return ce.Class
	}
	return ce.Type
}

func writeDOTCluster(b *strings.Builder, nm namer, id, label string, txns []explain.Txn, edges []check.Edge) {
	fmt.Fprintf(b, "  subgraph cluster_%s {\n    label=%s;\n    color=\"#aab7b8\";\n", id, dotString(label))
	onCycle := map[int64]bool{}
	for _, e := range edges {
		onCycle[e.From], onCycle[e.To] = true, true
	}
	for _, t := range txns {
		var lines []string
		lines = append(lines, fmt.Sprintf("%s  (session %d #%d)", TxnName(t.TxnRef), t.Session, t.Index))
		for _, o := range t.Ops {
			s := OpString(o)
			if o.Dropped {
				s = "(" + s + ")"
			}
			lines = append(lines, s)
		}
		attrs := ""
		if !onCycle[t.ID] {
			attrs = ", style=\"rounded,dashed\""
		}
		fmt.Fprintf(b, "    %s [label=%s%s];\n", dotNode(id, t.ID), dotString(strings.Join(lines, "\n")), attrs)
	}
	for _, e := range edges {
		if e.From == nm.init || e.To == nm.init {
			fmt.Fprintf(b, "    %s [label=\"T⊥ (initial state)\"];\n", dotNode(id, nm.init))
			break
		}
	}
	for _, e := range edges {
		style := "solid"
		if e.Relation == "so" {
			style = "dashed"
		}
		fmt.Fprintf(b, "    %s -> %s [label=%s, color=%s, fontcolor=%s, style=%s, tooltip=%s];\n",
			dotNode(id, e.From), dotNode(id, e.To), dotString(nm.label(e)), dotString(colorOf(e.Relation)), dotString(colorOf(e.Relation)), style, dotString(e.Reason))
	}
	b.WriteString("  }\n")
}

func dotNode(cluster string, id int64) string {
	return dotString(fmt.Sprintf("%s_T%d", cluster, id))
}
