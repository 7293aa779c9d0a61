package main

// hyperiso elle-cli: elle-cli's command line, output and exit status, for
// the Elle histories elle-cli checks with Elle (list-append, rw-register),
// so that a pipeline that shells out to elle-cli switches by the binary's
// name (README "Drop-in for elle-cli"). The binary runs this mode when it
// is invoked as elle-cli (elleCLIArgs).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"olympos.io/encoding/edn"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
)

// elleCLIName is the subcommand, and the name under which the binary runs
// it without being told (argv[0]).
const elleCLIName = "elle-cli"

// elleCLIArgs is the command line run is given for the process's
// arguments argv: argv[1:], behind the subcommand when the binary was
// invoked as elle-cli (a link or a copy of that name).
func elleCLIArgs(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	name := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if name == elleCLIName {
		return append([]string{elleCLIName}, argv[1:]...)
	}
	return argv[1:]
}

// elle-cli's exit statuses: 0 when no history checked is invalid, 1 when
// one is, or the command line is wrong; 255 when a file could not be read
// or checked (elle-cli's uncaught exception).
const (
	elleExitValid   = 0
	elleExitInvalid = 1
	elleExitUsage   = 1
	elleExitCrash   = 255
)

// elleCLIWorkload is the workload of a --model value: elle-cli's Elle
// checkers, named as Elle names its workloads (elle-cli before 0.1.3:
// with elle- before it). elle-cli's Jepsen and Knossos checkers (bank,
// counter, set, long-fork, cas-register, mutex, …) are not hyperiso's.
func elleCLIWorkload(model string) (elle.Workload, bool) {
	for _, w := range []elle.Workload{elle.ListAppend, elle.RWRegister} {
		if model == w.String() || model == "elle-"+w.String() {
			return w, true
		}
	}
	return elle.AutoWorkload, false
}

// elleSynonyms are names Elle gives the model of a level besides the one
// in the level table's Elle column (Elle's canonical-model-names).
var elleSynonyms = map[string]history.Level{
	"strong-serializable": history.StrictSER,
	"PL-SS":               history.StrictSER,
	"PL-2":                history.RC,
	"PL-2.99":             history.RR,
}

// elleOnlyModels are Elle's consistency models that hyperiso has no level
// for (Elle's elle.consistency-model/all-models, less the level table's
// Elle column, elleSynonyms and the words history.ParseLevel takes).
var elleOnlyModels = []string{
	"1SR", "PL-1", "PL-2+", "PL-2L", "PL-3", "PL-3U", "PL-CS", "PL-FCV", "PL-MSR", "PL-SI", "PRAM", "ROLA",
	"conflict-serializable", "consistent-view", "cursor-stability", "forward-consistent-view", "linearizable",
	"monotonic-atomic-view", "monotonic-reads", "monotonic-snapshot-read", "monotonic-view", "monotonic-writes",
	"read-uncommitted", "read-your-writes", "sequential", "session-serializable",
	"strong-PL-1", "strong-PL-2", "strong-read-committed", "strong-read-uncommitted", "strong-session-PL-1",
	"strong-session-PL-2", "strong-session-read-committed", "strong-session-read-uncommitted",
	"strong-snapshot-isolation", "update-atomic", "update-serializable", "view-serializable", "writes-follow-reads",
}

// elleModelRows are the levels --consistency-models names, by the level
// table's Elle column: every level but mixed, which needs a level on each
// transaction and Elle histories have none.
func elleModelRows() []history.LevelRow {
	var out []history.LevelRow
	for _, r := range history.Levels {
		if r.Level != history.Mixed {
			out = append(out, r)
		}
	}
	return out
}

func elleModelList() string {
	var names []string
	for _, r := range elleModelRows() {
		names = append(names, r.Elle)
	}
	return strings.Join(names, ", ")
}

// elleModelLevel is the level of Elle's consistency model name.
func elleModelLevel(name string) (history.Level, error) {
	for _, r := range elleModelRows() {
		if r.Elle == name {
			return r.Level, nil
		}
	}
	if l, ok := elleSynonyms[name]; ok {
		return l, nil
	}
	if l, ok := history.ParseLevel(name); ok && l != history.Mixed {
		// A word hyperiso takes for a level: its own name of it, or one
		// Elle gives a model of its own (serializable, snapshot-isolation,
		// causal), which hyperiso's level is not.
		e, also := rowOf(l).Elle, ""
		if name != l.String() {
			also = ", which it also calls " + name + ","
		}
		return 0, fmt.Errorf("--consistency-models: hyperiso has no model %s among Elle's; its level %s%s is Elle's %s: pass --consistency-models %s to check that (README \"Drop-in for elle-cli\" says where Elle's models differ)",
			name, l, also, e, e)
	}
	if slices.Contains(elleOnlyModels, name) {
		return 0, fmt.Errorf("--consistency-models: hyperiso has no model %s (one of Elle's); the models it checks: %s", name, elleModelList())
	}
	return 0, fmt.Errorf("--consistency-models: unknown consistency model %q; the models hyperiso checks: %s", name, elleModelList())
}

// elleAnomalyLevel is the weakest level that forbids the anomaly class
// name (the class table's Weakest).
func elleAnomalyLevel(name string) (history.Level, error) {
	if c, ok := history.ClassOf(name); ok {
		return c.Weakest, nil
	}
	var names []string
	for _, c := range history.Classes {
		names = append(names, c.Name)
	}
	return 0, fmt.Errorf("--anomalies: hyperiso cannot tell which level forbids %q; the anomalies it can: %s", name, strings.Join(names, ", "))
}

// elleList splits a comma-separated elle-cli option as elle-cli does: ""
// is none.
func elleList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func usageError(format string, args ...any) error {
	return &exitError{code: elleExitUsage, err: fmt.Errorf(format, args...)}
}

// elleCLIRun is one elle-cli command: what it asks and how it reports.
type elleCLIRun struct {
	workload elle.Workload
	syntax   elle.Syntax
	output   string
	// levels are those the models and anomalies name and every level
	// they imply, all of which the check decides so that :not names the
	// weakest models the history breaks, as Elle's does.
	levels []history.Level
	// byDefault: no --consistency-models was given, and strict
	// serializability is checked only when the history has real time
	// (as check's default).
	byDefault bool
	cmd       *cobra.Command
}

func newElleCLI(stdout io.Writer, code *int) *cobra.Command {
	var (
		model, format, output, models, anomalies string
		directory, plotFormat                    string
		verbose, version                         bool
		cycleTimeout, plotTimeout, maxPlotBytes  int
	)
	c := &cobra.Command{
		Use:   elleCLIName + " -m list-append|rw-register [flags] FILE...",
		Short: "Run as elle-cli: its command line, output and exit status (also when the binary is named elle-cli)",
		Long: `Check Elle histories as elle-cli does, with elle-cli's command line, output and
exit status, for a pipeline that shells out to elle-cli (the binary runs this
when invoked as elle-cli). For each file it prints the path, a tab and
whether the history obeys the consistency models (true, false or :unknown),
or with --output json (or -v) Elle's result map. Exit status: 0 when no
history is invalid, 1 when one is or the command line is wrong, 255 when a
file cannot be read or checked. The models are those of the level table's
Elle column: ` + elleModelList() + `.
What differs from elle-cli: README "Drop-in for elle-cli".`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if version {
				_, err := io.WriteString(stdout, buildVersion())
				return err
			}
			if model == "" {
				// elle-cli prints its usage and exits 0 without a model.
				_, err := io.WriteString(stdout, c.UsageString())
				return err
			}
			r := &elleCLIRun{cmd: c, byDefault: !c.Flags().Changed("consistency-models")}
			w, ok := elleCLIWorkload(model)
			if !ok {
				return usageError("--model: hyperiso checks Elle's transactional histories, %s or %s (got %q)", elle.ListAppend, elle.RWRegister, model)
			}
			r.workload = w
			switch format {
			case "":
				r.syntax = elle.AutoSyntax
			case "edn":
				r.syntax = elle.EDN
			case "json":
				r.syntax = elle.JSON
			default:
				return usageError("--format must be one of edn, json (got %q)", format)
			}
			r.output = output
			if verbose {
				r.output = "json"
			}
			if !slices.Contains([]string{"text", "json", "edn"}, r.output) {
				return usageError("--output must be one of text, json, edn (got %q)", output)
			}
			for _, m := range elleList(models) {
				l, err := elleModelLevel(m)
				if err != nil {
					return &exitError{code: elleExitUsage, err: err}
				}
				r.ask(l)
			}
			for _, a := range elleList(anomalies) {
				l, err := elleAnomalyLevel(a)
				if err != nil {
					return &exitError{code: elleExitUsage, err: err}
				}
				r.ask(l)
			}
			if directory != "" {
				fmt.Fprintf(c.ErrOrStderr(), "hyperiso: --directory %s: hyperiso writes no plots or cycle files; the result map (--output json) has the anomalies\n", esc(directory))
			}
			status := elleExitValid
			for _, path := range args {
				res, err := r.file(path)
				if err != nil {
					// elle-cli stops at the first file it cannot check.
					*code = status
					return err
				}
				if res.Valid == false {
					status = elleExitInvalid
				}
				if err := r.write(stdout, path, res); err != nil {
					return err
				}
			}
			*code = status
			return nil
		},
	}
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: elleExitUsage, err: err, usage: c.UsageString()}
	})
	f := c.Flags()
	f.StringVarP(&model, "model", "m", "", "the history's workload: list-append or rw-register (elle-cli's Elle checkers)")
	f.StringVarP(&format, "format", "f", "", "the history's syntax: edn or json (default: recognised from the content)")
	f.StringVar(&output, "output", "text", "what to print for each file: text (the path, a tab and the verdict), json (Elle's result map) or edn (the same map in EDN)")
	f.BoolVarP(&verbose, "verbose", "v", false, "print Elle's result map in JSON (--output json)")
	f.BoolVar(&version, "version", false, "print the version and build information")
	f.StringVarP(&models, "consistency-models", "c", rowOf(history.StrictSER).Elle, "comma-separated consistency models the history should obey, by Elle's names: "+elleModelList())
	f.StringVarP(&anomalies, "anomalies", "a", history.G0, "comma-separated anomaly classes the history should not show (each checked at the weakest level that forbids it)")
	f.IntVarP(&cycleTimeout, "cycle-search-timeout", "s", 1000, "accepted for elle-cli's sake and ignored: hyperiso's search is complete")
	f.StringVarP(&directory, "directory", "d", "", "accepted and ignored: hyperiso writes no plots or cycle files")
	f.StringVarP(&plotFormat, "plot-format", "p", "svg", "accepted and ignored (no plots)")
	f.IntVarP(&plotTimeout, "plot-timeout", "t", 5000, "accepted and ignored (no plots)")
	f.IntVarP(&maxPlotBytes, "max-plot-bytes", "b", 65536, "accepted and ignored (no plots)")
	return c
}

// ask adds l and the levels it implies to those checked, in the table's
// order (strongest first).
func (r *elleCLIRun) ask(l history.Level) {
	for _, w := range elleModelRows() {
		if l.AtLeast(w.Level) && !slices.Contains(r.levels, w.Level) {
			r.levels = append(r.levels, w.Level)
		}
	}
	slices.SortFunc(r.levels, func(a, b history.Level) int { return tableIndex(a) - tableIndex(b) })
}

// elleResult is Elle's result map: {:valid? true} when the history obeys
// every model, else with the anomalies found (by type), :not, the weakest
// models the history breaks, and :also-not, the stronger ones it breaks
// with them. Error is hyperiso's: why the verdict is unknown. The fields
// hold EDN types (keywords, sets) for --output edn and plain ones for
// json.
type elleResult struct {
	// The fields are interfaces so that omitempty leaves out only what
	// is not set: a result that is not valid has every key, empty or not,
	// as Elle's has.
	Valid        any    `json:"valid?" edn:"valid?"`
	AnomalyTypes any    `json:"anomaly-types,omitempty" edn:"anomaly-types,omitempty"`
	Anomalies    any    `json:"anomalies,omitempty" edn:"anomalies,omitempty"`
	Not          any    `json:"not,omitempty" edn:"not,omitempty"`
	AlsoNot      any    `json:"also-not,omitempty" edn:"also-not,omitempty"`
	Error        string `json:"error,omitempty" edn:"error,omitempty"`
	// own are the anomalies, each once, and not and alsoNot the models,
	// before they are put in a format's types.
	own          []check.Anomaly
	not, alsoNot []history.Level
	// empty: no transaction may have committed, which check refuses and
	// Elle calls an empty transaction graph, verdict :unknown.
	empty bool
}

// elleEmptyGraph is Elle's anomaly for a history that gives it no
// dependency to analyse.
const elleEmptyGraph = "empty-transaction-graph"

// elleCLIAnomaly is one anomaly of the result map: its type, hyperiso's
// description, the transactions (by id) and the steps of its cycle, as
// check --edn gives them.
type elleCLIAnomaly struct {
	Type        any           `json:"type" edn:"type"`
	Description string        `json:"description" edn:"description"`
	Txns        []int64       `json:"txns" edn:"txns"`
	Steps       []elleCLIStep `json:"steps,omitempty" edn:"steps,omitempty"`
}

type elleCLIStep struct {
	Type        any    `json:"type" edn:"type"`
	From        int64  `json:"from" edn:"from"`
	To          int64  `json:"to" edn:"to"`
	Key         any    `json:"key,omitempty" edn:"key,omitempty"`
	Explanation string `json:"explanation" edn:"explanation"`
}

// file reads and checks one history.
func (r *elleCLIRun) file(path string) (*elleResult, error) {
	c := r.cmd
	in := &checkInput{}
	if len(r.levels) > 0 {
		in.level = r.levels[0]
	}
	in.ctx, in.cancel = withDeadline(c.Context(), 0)
	defer in.cancel()
	opt := elle.Options{Workload: r.workload, Syntax: r.syntax}
	h, err := readWithin(in.ctx, func() int64 { return formats.InputSize(path, c.InOrStdin()) }, func() (*history.History, error) {
		if path == formats.StdinPath {
			return elle.Parse(c.InOrStdin(), formats.StdinName, opt)
		}
		return elle.Read(path, opt)
	})
	if err != nil && !isStop(err) {
		return nil, &exitError{code: elleExitCrash, err: err}
	}
	in.h = h
	printWarnings(c.ErrOrStderr(), h, seeStats)
	if h != nil && !slices.ContainsFunc(h.Txns[1:], func(t history.Txn) bool { return t.Status != history.Aborted }) {
		return &elleResult{Valid: edn.Keyword("unknown"), empty: true,
			Error: fmt.Sprintf("nothing to check: %d transactions read, none committed or of unknown outcome", len(h.Txns)-1)}, nil
	}
	if len(r.levels) == 0 {
		if in.h == nil {
			return &elleResult{Valid: edn.Keyword("unknown"), Error: "interrupted while reading"}, nil
		}
		return &elleResult{Valid: true}, nil
	}
	cr := &checkRun{req: levelRequest{levels: r.levels, all: r.byDefault}, stderr: c.ErrOrStderr(), cmd: c}
	rep, err := cr.levels(in, path, "none")
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			err = ee.err
		}
		return nil, &exitError{code: elleExitCrash, err: err}
	}
	for _, s := range rep.Skipped {
		l, _ := history.ParseLevel(s.Level)
		fmt.Fprintf(c.ErrOrStderr(), "hyperiso: %s: %s not checked: %s; the models it implies were\n", esc(path), rowOf(l).Elle, esc(s.Reason))
	}
	return elleResultOf(rep), nil
}

// elleResultOf is the result map of rep, as writeLevelsEDN reads it:
// false when a level is violated, :unknown when none is but one is
// unknown, true otherwise.
func elleResultOf(rep *levelsReport) *elleResult {
	res := &elleResult{Valid: true}
	var reasons []string
	for _, e := range rep.Levels {
		switch e.Verdict {
		case check.Violated:
			res.Valid = false
		case check.Unknown:
			if res.Valid == true {
				res.Valid = edn.Keyword("unknown")
			}
			reasons = append(reasons, rowOf(levelOf(e.Level)).Elle+": "+e.Reason)
		}
	}
	if res.Valid == true {
		return res
	}
	if res.Valid != false {
		res.Error = strings.Join(reasons, "; ")
	}
	own, _ := rep.ownAnomalies()
	for i := len(rep.Levels) - 1; i >= 0; i-- { // weakest first
		res.own = append(res.own, own[rep.Levels[i].Level]...)
	}
	for _, n := range rep.WeakestViolated {
		res.not = append(res.not, levelOf(n))
	}
	res.alsoNot = alsoNot(res.not)
	return res
}

func levelOf(name string) history.Level {
	l, _ := history.ParseLevel(name)
	return l
}

// elleAnomalyName is a's type in Elle's result map: its Adya/Elle class
// where it has one, as check --edn names it.
func elleAnomalyName(a check.Anomaly) string {
	if a.Class != "" && a.Class != history.Internal {
		return a.Class
	}
	return a.Type
}

// fill puts res's anomalies and models in the types of the output: EDN
// keywords and sets, or JSON strings and arrays.
func (res *elleResult) fill(asEDN bool) {
	if res.Valid == true {
		return
	}
	word := func(s string) any {
		if asEDN {
			return edn.Keyword(s)
		}
		return s
	}
	models := func(ls []history.Level) any {
		if asEDN {
			set := map[edn.Keyword]bool{}
			for _, l := range ls {
				set[edn.Keyword(rowOf(l).Elle)] = true
			}
			return set
		}
		names := []string{}
		for _, l := range ls {
			names = append(names, rowOf(l).Elle)
		}
		slices.Sort(names)
		return names
	}
	res.Not, res.AlsoNot = models(res.not), models(res.alsoNot)
	if res.empty {
		res.AnomalyTypes = []any{word(elleEmptyGraph)}
		res.Anomalies = map[edn.Keyword]any{elleEmptyGraph: true} // not a bool map, which EDN writes as a set
		return
	}
	anomalies := map[edn.Keyword][]elleCLIAnomaly{}
	var types []string
	for _, a := range res.own {
		name := edn.Keyword(elleAnomalyName(a))
		if _, seen := anomalies[name]; !seen {
			types = append(types, string(name))
		}
		e := elleCLIAnomaly{Type: word(string(name)), Description: a.Description, Txns: []int64{}}
		for _, t := range a.Txns {
			e.Txns = append(e.Txns, t.ID)
		}
		for _, ed := range a.Edges {
			st := elleCLIStep{Type: word(ed.Relation), From: ed.From, To: ed.To, Explanation: ed.Reason}
			switch {
			case ed.KeyName != "" && asEDN:
				st.Key = edn.RawMessage(elle.EDNText(ed.KeyName))
			case ed.KeyName != "":
				st.Key = ed.KeyName
			case ed.Key != nil:
				st.Key = *ed.Key
			}
			e.Steps = append(e.Steps, st)
		}
		anomalies[name] = append(anomalies[name], e)
	}
	slices.Sort(types)
	words := []any{}
	for _, t := range types {
		words = append(words, word(t))
	}
	res.Anomalies, res.AnomalyTypes = anomalies, words
}

// write prints res of the history at path as --output asks: elle-cli's
// line (the path, a tab and the verdict, as Clojure's println prints
// them), or the result map.
func (r *elleCLIRun) write(w io.Writer, path string, res *elleResult) error {
	switch r.output {
	case "json":
		res.fill(false)
		b, err := json.MarshalIndent(res, "", " ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case "edn":
		res.fill(true)
		b, err := edn.MarshalIndent(res, "", " ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	verdict := fmt.Sprint(res.Valid)
	if k, ok := res.Valid.(edn.Keyword); ok {
		verdict = ":" + string(k)
	}
	_, err := fmt.Fprintf(w, "%s \t %s\n", esc(path), verdict)
	return err
}
