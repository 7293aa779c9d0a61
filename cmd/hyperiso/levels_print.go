package main

// Reports of checks at several levels: text, JSON and the summary of
// several files (levels.go decides them).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// anomalyKey identifies an anomaly across levels, whose descriptions name
// the level and whose cycles may start anywhere: its type, transactions
// and edges as sets, and the read it is about.
func anomalyKey(a check.Anomaly) string {
	var txns, edges []string
	for _, t := range a.Txns {
		txns = append(txns, fmt.Sprint(t.ID))
	}
	for _, e := range a.Edges {
		k := fmt.Sprintf("%d-%s-%d", e.From, e.Relation, e.To)
		if e.Key != nil {
			k += fmt.Sprintf(":%d", *e.Key)
		}
		edges = append(edges, k)
	}
	slices.Sort(txns)
	slices.Sort(edges)
	k := fmt.Sprintf("%s|%s|%s|%s", a.Type, a.Class, strings.Join(txns, ","), strings.Join(edges, ","))
	if a.Key != nil && a.Value != nil && a.Op != nil {
		k += fmt.Sprintf("|%d=%d@%d", *a.Key, *a.Value, *a.Op)
	}
	return k
}

// ownAnomalies gives each checked violated level the anomalies no weaker
// level showed: each anomaly is named once, at the weakest level it was
// found at. shownAt names, for a checked violated level none of whose
// anomalies is its own, the level they are shown under.
func (r *levelsReport) ownAnomalies() (own map[string][]check.Anomaly, shownAt map[string]string) {
	own, shownAt = map[string][]check.Anomaly{}, map[string]string{}
	seen := map[string]string{}
	for i := len(r.Levels) - 1; i >= 0; i-- { // the table lists stronger levels first
		e := r.Levels[i]
		if e.ImpliedBy != "" || e.Verdict != check.Violated {
			continue
		}
		for _, a := range e.Anomalies {
			k := anomalyKey(a)
			if at, ok := seen[k]; ok {
				if shownAt[e.Level] == "" {
					shownAt[e.Level] = at
				}
				continue
			}
			seen[k] = e.Level
			own[e.Level] = append(own[e.Level], a)
		}
	}
	for l := range own {
		delete(shownAt, l)
	}
	return own, shownAt
}

// printLevels writes the text report of several levels: the history, one
// line per level, the strongest satisfied, then each violated level's
// anomalies (each once), and with verbose each check's timings and
// counters.
func printLevels(w io.Writer, rep *levelsReport, verbose bool) error {
	if len(rep.Levels) > 0 {
		printHistoryLine(w, rep.Levels[0].Result)
	}
	own, shownAt := rep.ownAnomalies()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range history.Levels {
		name := strings.ToUpper(r.Name) + ":"
		if e, ok := rep.level(r.Level); ok {
			note := strings.TrimPrefix(resultNotes(e.Result), " ")
			switch {
			case e.ImpliedBy != "":
				note = "implied by " + strings.ToUpper(e.ImpliedBy)
			case shownAt[e.Level] != "":
				note = "anomalies as " + strings.ToUpper(shownAt[e.Level])
			}
			fmt.Fprintf(tw, "%s\t%s%s\n", name, strings.ToUpper(e.Verdict.String()), cell(note))
			continue
		}
		for _, s := range rep.Skipped {
			if s.Level == r.Name {
				fmt.Fprintf(tw, "%s\t%s%s\n", name, "skipped", cell(esc(s.Reason)))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	strongest := "none"
	if len(rep.StrongestSatisfied) > 0 {
		strongest = strings.ToUpper(strings.Join(rep.StrongestSatisfied, ", "))
	}
	fmt.Fprintf(w, "strongest satisfied: %s\n", strongest)
	for _, e := range rep.Levels {
		if as := own[e.Level]; len(as) > 0 {
			fmt.Fprintf(w, "%s violated:\n", strings.ToUpper(e.Level))
			for _, a := range as {
				printAnomaly(w, e.Level, a)
			}
		}
	}
	if verbose {
		fmt.Fprintf(w, "timings: read %v ms\n", rep.TimingsMS["read"])
		for _, e := range rep.Levels {
			if e.ImpliedBy == "" {
				printMeasures(w, strings.ToUpper(e.Level)+" ", e.Result)
			}
		}
	}
	return nil
}

// cell is a last column of a table: none when empty, so that lines carry
// no trailing blanks.
func cell(s string) string {
	if s == "" {
		return ""
	}
	return "\t" + s
}

// write prints rep as --json, --edn or text ask.
func (cr *checkRun) write(w io.Writer, rep *fileReport) error {
	switch {
	case cr.asEDN && rep.single != nil:
		return writeEDN(w, rep.single)
	case cr.asEDN:
		return writeLevelsEDN(w, rep.multi, "")
	case cr.asJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if rep.single != nil {
			return enc.Encode(rep.single)
		}
		return enc.Encode(rep.multi)
	case rep.single != nil:
		printResult(w, rep.single, cr.verbose)
		return nil
	}
	return printLevels(w, rep.multi, cr.verbose)
}

// filesReport is the JSON report of several files.
type filesReport struct {
	Schema int          `json:"hyperiso_report"`
	Files  []fileResult `json:"files"`
}

// fileResult is one file of a filesReport: its report (one level's Result
// or several levels' report), or the error that kept it from being
// checked.
type fileResult struct {
	Source string `json:"source"`
	Error  string `json:"error,omitempty"`
	Report any    `json:"report,omitempty"`
}

// files checks each path in turn; a file that cannot be checked is said on
// standard error and the others go on. Text prints each file's report and
// then a table of the verdicts; --json one object; --edn one map per file.
// The exit status is the worst of the files' (worse).
func (cr *checkRun) files(w io.Writer, paths []string, code *int) error {
	if n := slices.Index(paths, "-"); n >= 0 && slices.Index(paths[n+1:], "-") >= 0 {
		return fail(exitBadInput, "standard input (-) can be read once")
	}
	all := filesReport{Schema: 1}
	var reps []*fileReport
	status := exitSatisfied
	for i, p := range paths {
		rep, err := cr.file(p)
		reps = append(reps, rep)
		fr := fileResult{Source: p}
		if err != nil {
			c := exitBadInput
			var ee *exitError
			if errors.As(err, &ee) {
				c = ee.code
			}
			status = worse(status, c)
			fmt.Fprintln(cr.stderr, "hyperiso:", esc(err.Error()))
			fr.Error = err.Error()
			if cr.asEDN {
				if err := writeEDNError(w, p, err.Error()); err != nil {
					return err
				}
			}
			all.Files = append(all.Files, fr)
			continue
		}
		status = worse(status, rep.exitCode())
		switch {
		case cr.asJSON:
			if rep.single != nil {
				fr.Report = rep.single
			} else {
				fr.Report = rep.multi
			}
		case cr.asEDN:
			var err error
			if rep.single != nil {
				err = writeEDNSource(w, rep.single, p)
			} else {
				err = writeLevelsEDN(w, rep.multi, p)
			}
			if err != nil {
				return err
			}
		default:
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := cr.write(w, rep); err != nil {
				return err
			}
		}
		all.Files = append(all.Files, fr)
	}
	switch {
	case cr.asJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return err
		}
	case !cr.asEDN:
		fmt.Fprintln(w)
		if err := cr.summary(w, paths, reps); err != nil {
			return err
		}
	}
	*code = status
	return nil
}

// summary prints a table of the files' verdicts: a row per file, a column
// per level asked, and the strongest levels satisfied.
func (cr *checkRun) summary(w io.Writer, paths []string, reps []*fileReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "file")
	for _, l := range cr.req.levels {
		fmt.Fprintf(tw, "\t%s", l)
	}
	if !cr.req.single() {
		fmt.Fprint(tw, "\tstrongest satisfied")
	}
	fmt.Fprintln(tw)
	for i, p := range paths {
		fmt.Fprint(tw, esc(p))
		rep := reps[i]
		for _, l := range cr.req.levels {
			cell := "error"
			switch {
			case rep == nil:
			case rep.single != nil:
				cell = rep.single.Verdict.String()
			default:
				cell = "skipped"
				if e, ok := rep.multi.level(l); ok {
					cell = e.Verdict.String()
				}
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		if !cr.req.single() {
			strongest := "-"
			if rep != nil && len(rep.multi.StrongestSatisfied) > 0 {
				strongest = strings.Join(rep.multi.StrongestSatisfied, ", ")
			}
			fmt.Fprintf(tw, "\t%s", strongest)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
