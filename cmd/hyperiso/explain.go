package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/explain"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/render"
)

func newExplain(stdout io.Writer) *cobra.Command {
	var (
		rf       readFlags
		level    string
		strategy string
		timeout  time.Duration
		asJSON   bool
		htmlOut  string
		dotOut   string
		budget   string
		output   string
		max      int
		deflevel string
	)
	c := &cobra.Command{
		Use:   "explain [--level L] [--format F] [--output text|json|dot|html] [--json] [--html FILE] [--dot FILE] [--explain-budget N] PATH|-",
		Short: "Check a history and explain each violation with a minimal counterexample",
		Long: `explain checks the history like "check" and, when it violates the level,
finds the smallest set of transactions that still violates it on its own
(re-checking each candidate), names the anomaly (G0, G1a, G1b, G1c, G-single,
G2-item, lost update, fractured read, causality violation, ...) and says why
each dependency of its cycle holds. It writes text (default), JSON, DOT or
HTML to standard output (--output; --json is --output json), and optionally
a Graphviz DOT file and a self-contained HTML page (--dot FILE, --html FILE).
--format is the input format, as for every command.

--explain-budget bounds the search: a number of re-checks (200), a time
(30s), or both (200,30s); when it runs out the result is reported as small
but not proven minimal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			switch output {
			case "", "text", "json", "dot", "html":
			default:
				return fail(exitBadInput, "--output must be one of text, json, dot, html (got %q)", output)
			}
			b, err := explain.ParseBudget(budget)
			if err != nil {
				return fail(exitBadInput, "--explain-budget: %v", err)
			}
			def, err := defaultLevel(level, deflevel)
			if err != nil {
				return err
			}
			in, err := loadCheckInput(c.Context(), &rf, args[0], level, strategy, timeout)
			if err != nil {
				return err
			}
			defer in.cancel()
			rep, err := in.explain(args[0], explain.Options{Strategy: strategy, DefaultLevel: def, Budget: b, Max: max})
			if rep != nil && rep.Result != nil {
				rep.TimingsMS["read"] = in.readMS
			}
			switch {
			case errors.Is(err, check.ErrUnavailable), errors.Is(err, check.ErrInput):
				// As for check: a history refused (nothing left to check,
				// strict-ser without timing) is bad input, not a verdict.
				printWarnings(c.ErrOrStderr(), in.h, seeStats)
				return fail(exitBadInput, "%s: %v", args[0], err)
			case errors.Is(err, context.DeadlineExceeded) && rep != nil && rep.Result != nil && rep.Explanation == nil:
				rep.Verdict, rep.Reason = check.Unknown, fmt.Sprintf("timeout after %s during %s", timeout, rep.Stage)
			case err != nil:
				printWarnings(c.ErrOrStderr(), in.h, seeStats)
				return fail(exitUnknown, "%s: %v", args[0], err)
			}
			if asJSON {
				output = "json"
			}
			if output != "json" {
				printWarnings(c.ErrOrStderr(), in.h, seeStats)
			}
			toStdout := false
			for _, o := range []struct {
				path  string
				write func(io.Writer, *explain.Report) error
			}{{htmlOut, render.HTML}, {dotOut, render.DOT}} {
				if o.path == "" {
					continue
				}
				if o.path == "-" {
					toStdout = true
					if err := o.write(stdout, rep); err != nil {
						return fail(exitBadInput, "%v", err)
					}
					continue
				}
				if err := writeFile(o.path, rep, o.write); err != nil {
					return fail(exitBadInput, "%v", err)
				}
			}
			switch {
			case output == "json":
				err = render.JSON(stdout, rep)
			case output == "dot":
				err = render.DOT(stdout, rep)
			case output == "html":
				err = render.HTML(stdout, rep)
			case !toStdout:
				err = render.Text(stdout, rep)
			}
			if err != nil {
				return err
			}
			// The exit status follows "check"; its one-line reason goes to
			// standard error.
			// (The text report's verdict line is explain's; what lenient
			// reading dropped is said here and with the warnings.)
			note := ""
			if rep.Dropped != nil {
				note = " (" + droppedNote(*rep.Dropped) + ")"
			}
			switch rep.Verdict {
			case check.Satisfied:
				return nil
			case check.Violated:
				return &exitError{code: exitViolated, err: fmt.Errorf("%s violated: %s%s", strings.ToUpper(rep.Level), summaryLine(rep), note)}
			}
			return &exitError{code: exitUnknown, err: fmt.Errorf("%s unknown: %s%s", strings.ToUpper(rep.Level), rep.Reason, note)}
		},
	}
	rf.register(c)
	c.Flags().StringVar(&level, "level", history.SER.String(), "isolation level: "+history.LevelList("|", nil))
	c.Flags().StringVar(&deflevel, "default-level", "", "with --level mixed: the level of a transaction that declares none, "+history.LevelList("|", history.IsDeclarable))
	c.Flags().StringVar(&strategy, "strategy", "", "solver strategy for ser/si, or pc (cdcl-pc, lazy-gini-pc), or psi (cdcl-psi, lazy-gini-psi) (default: the best available)")
	c.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (exit status 3), e.g. 30s")
	c.Flags().BoolVar(&asJSON, "json", false, "print the JSON report (the check report plus an \"explanation\" object)")
	c.Flags().StringVar(&output, "output", "", "what to write to standard output: text (default), json, dot or html")
	c.Flags().StringVar(&htmlOut, "html", "", "write a self-contained HTML report to this file (- for standard output)")
	c.Flags().StringVar(&dotOut, "dot", "", "write the counterexample graph in Graphviz DOT to this file (- for standard output)")
	c.Flags().StringVar(&budget, "explain-budget", "", fmt.Sprintf("bound the search: re-checks (200), time (30s) or both (200,30s); default %d,%s", explain.DefaultChecks, explain.DefaultTime))
	c.Flags().IntVar(&max, "explain-max", 1, "how many of the report's anomalies to explain")
	return c
}

// writeFile writes rep with write to a new file at path.
func writeFile[R any](path string, rep R, write func(io.Writer, R) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f, rep); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// summaryLine names the first counterexample: class and size.
func summaryLine(rep *explain.Report) string {
	if rep.Explanation == nil || len(rep.Explanation.Counterexamples) == 0 {
		return fmt.Sprintf("%d anomalies", len(rep.Anomalies))
	}
	ce := rep.Explanation.Counterexamples[0]
	cls := ce.Class
	if cls == "" {
		cls = ce.Type
	}
	m := "small"
	if ce.Minimal {
		m = "minimal"
	}
	return fmt.Sprintf("%s, %s counterexample of %d transaction(s)", cls, m, ce.Size)
}
