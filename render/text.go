package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/explain"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/textsafe"
)

// OpString renders an operation compactly: r(5)=7, w(5)=8, append(5,3),
// r(5)=[1 2 3]; a nil value reads "nil".
func OpString(o explain.Op) string {
	key := fmt.Sprint(o.Key)
	if o.KeyName != "" {
		key = o.KeyName
	}
	val := valString(o.Value)
	if o.ValueName != "" {
		val = o.ValueName
	}
	switch o.Kind {
	case "append":
		return fmt.Sprintf("append(%s,%s)", key, val)
	case "r-list":
		parts := make([]string, len(o.List))
		for i, v := range o.List {
			parts[i] = valString(v)
		}
		if len(o.ListNames) == len(o.List) {
			copy(parts, o.ListNames)
		}
		return fmt.Sprintf("r(%s)=[%s]", key, strings.Join(parts, " "))
	}
	return fmt.Sprintf("%s(%s)=%s", o.Kind, key, val)
}

func valString(v int64) string {
	if v == history.EmptyList {
		return "nil"
	}
	return fmt.Sprint(v)
}

// TxnName renders a transaction reference as reasons do: T<id>, T⊥.
func TxnName(r check.TxnRef) string {
	if r.Index < 0 {
		return "T⊥"
	}
	return fmt.Sprintf("T%d", r.ID)
}

// namer names the transactions and keys of one counterexample: T⊥ by its
// id, keys by their symbolic names where the history has them.
type namer struct {
	init int64
	keys map[int64]string
}

func namerOf(ce *explain.Counterexample) namer {
	n := namer{init: ce.InitID, keys: map[int64]string{}}
	for _, t := range ce.Transactions {
		for _, o := range t.Ops {
			if o.KeyName != "" {
				n.keys[o.Key] = o.KeyName
			}
		}
	}
	return n
}

// txn names an edge's end: T<id>, or T⊥ (a weak level's commit order can
// put a transaction before the initial state, which closes its cycle).
func (n namer) txn(id int64) string {
	if id == n.init {
		return "T⊥"
	}
	return fmt.Sprintf("T%d", id)
}

func (n namer) label(e check.Edge) string {
	if e.Key == nil {
		return e.Relation
	}
	if name, ok := n.keys[*e.Key]; ok {
		return fmt.Sprintf("%s(%s)", e.Relation, name)
	}
	return fmt.Sprintf("%s(%d)", e.Relation, *e.Key)
}

// esc escapes control characters and invalid UTF-8 in what the text
// report prints from the input (names, file names); JSON keeps them exact.
var esc = textsafe.String

// maxInlineHistory bounds the counterexamples whose JSON Lines the text
// and HTML reports include (the JSON report always does).
const maxInlineHistory = 200

// Text writes the report for people: the verdict, then per
// counterexample its class, transactions with their operations, the cycle
// with a reason per edge, the cases of uncertain choices, and how minimal
// it is.
func Text(w io.Writer, rep *explain.Report) error {
	var b strings.Builder
	res := rep.Result
	s := res.History
	fmt.Fprintf(&b, "history %s (%s): %d sessions, %d transactions (%d committed, %d aborted, %d unknown), %d operations, %d keys\n",
		esc(res.Source), esc(res.Format), s.Sessions, s.Transactions, s.Committed, s.Aborted, s.Unknown, s.Operations, s.Keys)
	fmt.Fprintf(&b, "%s: %s", strings.ToUpper(res.Level), strings.ToUpper(res.Verdict.String()))
	if res.Reason != "" {
		fmt.Fprintf(&b, " (%s)", esc(res.Reason))
	}
	if n := len(res.Anomalies); n > 0 {
		fmt.Fprintf(&b, " (%d anomal%s)", n, map[bool]string{true: "y", false: "ies"}[n == 1])
	}
	b.WriteString("\n")
	ex := rep.Explanation
	if ex == nil {
		_, err := io.WriteString(w, b.String())
		return err
	}
	if ex.Note != "" {
		fmt.Fprintf(&b, "%s\n", esc(ex.Note))
	}
	for i, ce := range ex.Counterexamples {
		writeCounterexample(&b, res, ce, i, len(ex.Counterexamples))
	}
	if ex.Unexplained > 0 {
		fmt.Fprintf(&b, "\n%d more anomal%s of the report not explained (raise --explain-max):\n", ex.Unexplained, map[bool]string{true: "y", false: "ies"}[ex.Unexplained == 1])
		shown := 0
		for _, a := range res.Anomalies[len(res.Anomalies)-ex.Unexplained:] {
			if shown == 10 {
				fmt.Fprintf(&b, "  …\n")
				break
			}
			fmt.Fprintf(&b, "  %s: %s\n", esc(a.Type), esc(a.Description))
			shown++
		}
	}
	u := ex.Budget
	fmt.Fprintf(&b, "\nexplain budget: %d of %d re-checks, %.0f of %.0f ms%s\n", u.UsedChecks, u.Checks, u.UsedMS, u.TimeMS, map[bool]string{true: " (exhausted)", false: ""}[u.Exhausted])
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCounterexample(b *strings.Builder, res *check.Result, ce *explain.Counterexample, i, n int) {
	cls := esc(ce.Type)
	if ce.Class != "" && ce.Class != ce.Type {
		cls = fmt.Sprintf("%s [%s]", esc(ce.Type), esc(ce.Class))
	}
	fmt.Fprintf(b, "\nCounterexample %d of %d: %s, %d transaction%s of %d", i+1, n, cls, ce.Size, plural(ce.Size), res.History.Transactions)
	if ce.Minimal {
		b.WriteString(", minimal")
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "  %s\n", esc(ce.Summary))
	if ce.Story != "" {
		fmt.Fprintf(b, "  %s.\n", esc(ce.Story))
	}
	b.WriteString("\n  Transactions:\n")
	for _, t := range ce.Transactions {
		fmt.Fprintf(b, "    %-8s session %d #%d", TxnName(t.TxnRef), t.Session, t.Index)
		if t.Status != "" && t.Status != "committed" {
			fmt.Fprintf(b, " (%s)", esc(t.Status))
		}
		b.WriteString(":")
		for _, o := range t.Ops {
			s := esc(OpString(o))
			switch {
			case o.Dropped:
				s = "(" + s + ")"
			case o.Offending:
				s = "»" + s + "«"
			}
			b.WriteString(" " + s)
		}
		b.WriteString("\n")
	}
	if hasDropped(ce) {
		b.WriteString("    (reads in parentheses could have read from transactions outside the counterexample and are left out of it)\n")
	}
	if len(ce.Edges) > 0 {
		b.WriteString("\n  Cycle:\n")
		writeEdges(b, namerOf(ce), ce.Edges, "    ")
	}
	if len(ce.Edges) > 0 && len(ce.Context) > 0 {
		b.WriteString("\n  Other certain dependencies among them:\n")
		writeEdges(b, namerOf(ce), ce.Context, "    ")
	}
	if len(ce.Cases) > 0 {
		fmt.Fprintf(b, "\n  Every choice the history leaves open closes a cycle")
		if !ce.CasesComplete {
			b.WriteString(" (case analysis cut short; the re-check covers the rest)")
		}
		b.WriteString(":\n")
		for j, c := range ce.Cases {
			fmt.Fprintf(b, "    case %d: if %s: %s\n", j+1, esc(strings.Join(c.Choices, " and ")), esc(c.Class))
			writeEdges(b, namerOf(ce), c.Edges, "      ")
		}
	}
	fmt.Fprintf(b, "\n  Minimality: %s\n", esc(ce.Minimality))
	core := ""
	if ce.Core != "" {
		core = "; " + esc(ce.Core)
	}
	fmt.Fprintf(b, "  Search: started from %s%s; %d re-check%s in %.1f ms; the counterexample alone is %s at %s\n",
		methodWords(ce.Method), core, ce.Checks, plural(ce.Checks), ce.ElapsedMS, ce.Recheck, strings.ToUpper(res.Level))
	if ce.History != "" && ce.Size > maxInlineHistory {
		fmt.Fprintf(b, "\n  Counterexample history: %d transactions, in the JSON report (--json)\n", ce.Size)
	} else if ce.History != "" {
		b.WriteString("\n  Counterexample history (hyperiso JSON Lines):\n")
		for _, line := range strings.Split(strings.TrimRight(ce.History, "\n"), "\n") {
			fmt.Fprintf(b, "    %s\n", esc(line))
		}
	}
}

func writeEdges(b *strings.Builder, n namer, edges []check.Edge, indent string) {
	for _, e := range edges {
		fmt.Fprintf(b, "%s%s -%s-> %s: %s\n", indent, n.txn(e.From), esc(n.label(e)), n.txn(e.To), esc(e.Reason))
	}
}

func hasDropped(ce *explain.Counterexample) bool {
	for _, t := range ce.Transactions {
		for _, o := range t.Ops {
			if o.Dropped {
				return true
			}
		}
	}
	return false
}

func methodWords(m string) string {
	switch m {
	case "read-consistency":
		return "the finding itself (a read and the writers of its value)"
	case "anomaly":
		return "the reported anomaly's transactions"
	case "grown":
		return "the reported anomaly's transactions plus the writers their reads need"
	case "whole-history":
		return "the whole history"
	}
	return m
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
