// Package render turns an explained counterexample — an explain.Report,
// the check report with its explanation — into something for people: a
// text report (Text), the JSON report (JSON), a Graphviz digraph (DOT) and
// a self-contained HTML page with an inline SVG picture of each cycle and
// a timeline of the history around it (HTML). Package explain finds the counterexamples; render only draws
// them, and explain imports nothing of it.
package render

import (
	"encoding/json"
	"io"

	"github.com/hyperiso/hyperiso/explain"
)

// JSON writes the report as indented JSON: the check report schema
// plus the "explanation" object.
func JSON(w io.Writer, rep *explain.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
