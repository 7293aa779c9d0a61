// Command hyperiso checks recorded database histories against isolation
// levels. See README.md for the command reference, the report schema and
// the exit codes.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/awdit"
	cobrafmt "github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/memlimit"
	"github.com/hyperiso/hyperiso/internal/textsafe"
)

// Exit statuses (README "Exit codes").
const (
	exitSatisfied = 0
	exitViolated  = 1
	exitBadInput  = 2
	exitUnknown   = 3
)

// exitError carries an exit status through cobra's error return.
type exitError struct {
	code int
	err  error
	// usage, when set, is printed after the error as it is: it is the
	// command's own text, not input to escape.
	usage string
}

func (e *exitError) Error() string { return e.err.Error() }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

func main() {
	// A write to a closed pipe then fails with EPIPE, which run reports
	// (exit status 2), instead of killing the process with SIGPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(run(elleCLIArgs(os.Args), os.Stdout, os.Stderr))
}

// outWriter keeps the first error writing standard output: text output is
// written by many calls that cannot each stop the command, and a verdict
// that did not reach its reader must not exit 0 or 1.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = err
	}
	return n, err
}

// run executes the CLI and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	// An address-space limit too small for a check ends it here, with the
	// figures, rather than with the runtime's first failed reservation
	// (asguard_cgo.go stops one too small for the runtime itself).
	if err := memlimit.CheckStart(); err != nil {
		fmt.Fprintln(stderr, "hyperiso:", err)
		return exitUnknown
	}
	return runIn(args, nil, stdout, stderr)
}

// runIn is run with stdin as standard input (the path "-"); nil means
// os.Stdin.
func runIn(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := exitSatisfied
	out := &outWriter{w: stdout}
	stdout = out
	root := newRoot(stdout, &code)
	if stdin != nil {
		root.SetIn(stdin)
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	stopCPUProfile()
	if out.err != nil && (err == nil || errors.Is(err, out.err)) {
		err = fail(exitBadInput, "writing standard output: %v", out.err)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hyperiso:", esc(err.Error()))
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.usage != "" {
				fmt.Fprint(stderr, ee.usage)
			}
			return ee.code
		}
		return exitBadInput
	}
	return code
}

// readFlags are the input options shared by every command.
type readFlags struct {
	format  string
	flavour string
	lenient bool
	cmd     *cobra.Command // for its standard input, which "-" reads
}

func (r *readFlags) register(c *cobra.Command) {
	r.cmd = c
	c.Flags().StringVar(&r.format, "format", "auto", "input format: "+strings.Join(formats.Names, "|"))
	c.Flags().StringVar(&r.flavour, "cobra-flavour", "auto", "Cobra log reading: auto|unique|universal")
	c.Flags().BoolVar(&r.lenient, "lenient", false, "turn recoverable format errors into warnings")
}

func (r *readFlags) read(path string) (*history.History, error) {
	h, err := formats.Read(path, formats.Options{Format: r.format, Lenient: r.lenient, CobraFlavour: r.flavour, Stdin: r.cmd.InOrStdin()})
	if err != nil {
		return nil, &exitError{code: exitBadInput, err: err}
	}
	return h, nil
}

// checkInput is what check and explain share: a validated level and
// strategy, the history read (nil when the timeout came first), how long
// reading took, and a context bounded by the timeout (cancel must be
// called).
type checkInput struct {
	level  history.Level
	h      *history.History
	readMS float64
	ctx    context.Context
	cancel context.CancelFunc
	// keepDisplay leaves the stage display on after a check: more
	// checks of the history follow (check --level all).
	keepDisplay bool
}

func loadCheckInput(ctx context.Context, rf *readFlags, path, level, strategy string, timeout time.Duration) (*checkInput, error) {
	lv, ok := history.ParseLevel(level)
	if !ok {
		return nil, fail(exitBadInput, "--level must be one of %s (got %q)", history.LevelList(", ", nil), level)
	}
	names := check.StrategyNames(lv)
	if strategy != "" && len(names) == 0 {
		return nil, fail(exitBadInput, "--strategy: %s is decided by one strategy (got %q)", lv, strategy)
	}
	if strategy != "" && !slices.Contains(names, strategy) {
		return nil, fail(exitBadInput, "--strategy must be one of %s (got %q)", strings.Join(names, ", "), strategy)
	}
	in := &checkInput{level: lv}
	in.ctx, in.cancel = withDeadline(ctx, timeout)
	start := time.Now()
	h, err := readWithin(in.ctx, func() int64 { return formats.InputSize(path, rf.cmd.InOrStdin()) }, func() (*history.History, error) { return rf.read(path) })
	if err != nil && !isStop(err) {
		in.cancel()
		return nil, err
	}
	in.h, in.readMS = h, float64(time.Since(start).Microseconds())/1000
	return in, nil
}

func newRoot(stdout io.Writer, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:           "hyperiso",
		Short:         "Check database histories against isolation levels (" + strings.ToUpper(history.LevelList(", ", func(r history.LevelRow) bool { return r.Level != history.Mixed })) + ", or a mix)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitBadInput, err: err, usage: c.UsageString()}
	})
	root.AddCommand(stoppable(limitMemory(newCheck(stdout, code), true), true), stoppable(newConvert(stdout), false), stoppable(newStats(stdout), false), newCollect(stdout), limitMemory(newBench(stdout), false), stoppable(limitMemory(newExplain(stdout), true), true))
	root.AddCommand(newRobust(stdout, code), newAllocate(stdout))
	root.AddCommand(stoppable(limitMemory(newElleCLI(stdout, code), true), true))
	addVersion(root, stdout)
	// A CPU profile of any command, for whoever tunes the solver (go tool pprof).
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fail(exitBadInput, "--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fail(exitBadInput, "--cpuprofile: %v", err)
		}
		profileFile = f
		return nil
	}
	return root
}

// profileFile is the CPU profile being written, if any. The profiler is
// global to the process, and so is this.
var profileFile *os.File

// stopCPUProfile finishes the profile; run calls it whatever the command
// returned, since cobra skips post-run hooks after an error.
func stopCPUProfile() {
	if profileFile != nil {
		pprof.StopCPUProfile()
		profileFile.Close()
		profileFile = nil
	}
}

// defaultLevel parses --default-level, which only --level mixed takes.
func defaultLevel(level, def string) (history.Level, error) {
	if def == "" {
		return history.LevelNone, nil
	}
	if level != history.Mixed.String() {
		return 0, fail(exitBadInput, "--default-level goes with --level mixed")
	}
	l, ok := history.ParseLevel(def)
	switch r, _ := l.Row(); {
	case !ok, !r.Declarable:
		return 0, fail(exitBadInput, "--default-level must be one of %s (got %q)", history.LevelList(", ", history.IsDeclarable), def)
	}
	return l, nil
}

func newCheck(stdout io.Writer, code *int) *cobra.Command {
	var (
		rf       readFlags
		level    string
		strategy string
		timeout  time.Duration
		asJSON   bool
		asEDN    bool
		realtime bool
		deflevel string
		verbose  bool
		follow   bool
		failFast bool
		unique   bool
		every    time.Duration
	)
	c := &cobra.Command{
		Use:   "check [--level " + allLevels + "|L[,L...]] [flags] PATH|- [PATH...]",
		Short: "Decide whether a history satisfies an isolation level, or which levels it satisfies",
		Long:  "Decide whether a history satisfies an isolation level, or with --level " + allLevels + " (the default)\nor a list, which of the levels it satisfies.\n\n" + levelsHelp + "\n\n" + history.Definitions(78),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			req, err := parseLevelRequest(level)
			if err != nil {
				return err
			}
			mixedArg := level
			if slices.Contains(req.levels, history.Mixed) {
				mixedArg = history.Mixed.String()
			}
			def, err := defaultLevel(mixedArg, deflevel)
			if err != nil {
				return err
			}
			if err := req.checkStrategy(strategy); err != nil {
				return err
			}
			if follow {
				if err := followFlagsCheck(c, req, args, rf.format); err != nil {
					return err
				}
				ctx, cancel := withDeadline(c.Context(), timeout)
				defer cancel()
				fr := &followRun{levels: req.levels, opt: check.Options{Strategy: strategy, RealTime: realtime, DefaultLevel: def},
					unique: unique, failFast: failFast, every: every, lenient: rf.lenient, asJSON: asJSON, verbose: verbose,
					stdout: stdout, stderr: c.ErrOrStderr(), progress: terminalOf(c.ErrOrStderr())}
				n, err := fr.run(ctx, c, args[0])
				*code = n
				return err
			}
			if failFast || unique || c.Flags().Changed("every") {
				return fail(exitBadInput, "--fail-fast, --unique-values and --every go with --follow")
			}
			run := &checkRun{
				rf: &rf, req: req, opt: check.Options{Strategy: strategy, RealTime: realtime, DefaultLevel: def},
				timeout: timeout, asJSON: asJSON, asEDN: asEDN, verbose: verbose, stderr: c.ErrOrStderr(), cmd: c,
			}
			if len(args) == 1 {
				rep, err := run.file(args[0])
				if err != nil {
					return err
				}
				*code = rep.exitCode()
				return run.write(stdout, rep)
			}
			return run.files(stdout, args, code)
		},
	}
	rf.register(c)
	c.Flags().StringVar(&level, "level", allLevels, "isolation level, a comma-separated list of them, or "+allLevels+" (every level; mixed only when each transaction has a level, strict-ser only with real time): "+history.LevelList("|", nil))
	c.Flags().StringVar(&deflevel, "default-level", "", "with --level mixed (or a list or all holding it): the level of a transaction that declares none, "+history.LevelList("|", history.IsDeclarable)+" (default: every transaction must declare one)")
	c.Flags().BoolVar(&realtime, "realtime", false, "for ser/si: a transaction that completed before another was invoked precedes it (strict-ser implies it)")
	c.Flags().StringVar(&strategy, "strategy", "", "solver strategy for ser/si, or pc (cdcl-pc, lazy-gini-pc), or psi (cdcl-psi, lazy-gini-psi); with several levels, those whose table holds it (default: the best available)")
	c.Flags().DurationVar(&timeout, "timeout", 0, "give up on a file after this long (exit status 3), e.g. 30s")
	c.Flags().BoolVar(&asJSON, "json", false, "print the JSON report instead of text")
	c.Flags().BoolVar(&asEDN, "edn", false, "print an Elle-style EDN result map (:valid?, :anomaly-types, :anomalies, :not, :also-not) instead of text")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "text report: also each check's timings and counters")
	c.Flags().BoolVar(&follow, "follow", false, "check a JSONL history while it is written (a growing file, or - for a pipe such as collect -o -): each violation is printed once certain, the final verdict is the whole history's (docs/online.md)")
	c.Flags().BoolVar(&failFast, "fail-fast", false, "with --follow: stop at the first certain violation (exit status 1)")
	c.Flags().BoolVar(&unique, "unique-values", false, "with --follow: the stream writes no (key, value) twice (collect --unique), so a violation can be certain before the stream ends")
	c.Flags().DurationVar(&every, "every", time.Second, "with --follow: the least time between two checks of the stream so far")
	c.MarkFlagsMutuallyExclusive("json", "edn")
	return c
}

// shownWarnings is how many reader warnings text output lists.
const shownWarnings = 5

// Where printWarnings says the full list of warnings is.
const (
	seeReport = "in the --json report"
	seeStats  = "with hyperiso stats --json"
)

// printWarnings writes to w (standard error) how many warnings the reader
// gave about h, the first few, and where to see them all: text output must
// not hide that the input was not read as it stands.
func printWarnings(w io.Writer, h *history.History, where string) {
	if h == nil {
		return // the deadline or a signal came before the history was read
	}
	if h.Dropped.Any() {
		fmt.Fprintf(w, "hyperiso: %s: %s\n", esc(h.Source), droppedNote(h.Dropped))
	}
	n := len(h.Warnings)
	if n == 0 {
		return
	}
	if n <= shownWarnings {
		fmt.Fprintf(w, "hyperiso: %d warning(s) reading %s:\n", n, esc(h.Source))
	} else {
		fmt.Fprintf(w, "hyperiso: %d warnings reading %s, the first %d (all of them %s):\n", n, esc(h.Source), shownWarnings, where)
	}
	for _, x := range h.Warnings[:min(n, shownWarnings)] {
		fmt.Fprintf(w, "  %s\n", esc(x.String()))
	}
}

// droppedNote qualifies a verdict reached without what lenient reading
// dropped.
func droppedNote(d history.Dropped) string {
	return "lenient reading dropped " + d.String() + "; see warnings"
}

// esc escapes control characters and invalid UTF-8 in text that may hold
// names from the input (keys, values, file names), for text output only:
// JSON keeps them exact, and escapes them itself.
var esc = textsafe.String

// printResult writes the text report of one level: the history in one
// line, the verdict in one line, then each anomaly once with its cycle;
// with verbose, the timings and counters too.
func printResult(w io.Writer, res *check.Result, verbose bool) {
	printHistoryLine(w, res)
	fmt.Fprintf(w, "%s: %s%s\n", strings.ToUpper(res.Level), strings.ToUpper(res.Verdict.String()), resultNotes(res))
	for _, a := range res.Anomalies {
		printAnomaly(w, res.Level, a)
	}
	if len(res.Witness) > 0 {
		fmt.Fprintf(w, "witness order of %d transactions available with --json\n", len(res.Witness))
	}
	if verbose {
		printMeasures(w, "", res)
	}
}

// printHistoryLine writes the history's line of a text report, and the
// duplicate values line when reads have several candidate writers.
func printHistoryLine(w io.Writer, res *check.Result) {
	s := res.History
	if res.Format != "" { // else the history was not read
		fmt.Fprintf(w, "history %s (%s): %d sessions, %d transactions (%d committed, %d aborted, %d unknown), %d operations, %d keys\n",
			esc(res.Source), esc(res.Format), s.Sessions, s.Transactions, s.Committed, s.Aborted, s.Unknown, s.Operations, s.Keys)
	}
	if s.MultiWriterReads > 0 {
		fmt.Fprintf(w, "duplicate values: %d of %d external reads have more than one candidate writer (up to %d)\n",
			s.MultiWriterReads, s.ExternalReads, s.MaxCandidates)
	}
}

// resultNotes is what qualifies a verdict, " (…)", or "": the reason of
// an unknown verdict, what lenient reading dropped.
func resultNotes(res *check.Result) string {
	var notes []string
	if res.Reason != "" {
		notes = append(notes, esc(res.Reason))
	}
	if res.Dropped != nil {
		notes = append(notes, droppedNote(*res.Dropped))
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// printMeasures writes res's timings and counters (check -v), each line
// after prefix.
func printMeasures(w io.Writer, prefix string, res *check.Result) {
	fmt.Fprintf(w, "%stimings:%s\n", prefix, formatMap(res.TimingsMS, " ms"))
	if len(res.Counters) > 0 {
		fmt.Fprintf(w, "%scounters:%s\n", prefix, formatMap(res.Counters, ""))
	}
}

// printAnomaly writes a, found at level, as one line naming it once, then
// its cycle's edges.
func printAnomaly(w io.Writer, level string, a check.Anomaly) {
	head, blame := anomalyWords(level, a)
	fmt.Fprintf(w, "  %s\n", esc(head))
	if blame != "" {
		fmt.Fprintf(w, "    %s\n", esc(blame))
	}
	for _, e := range a.Edges {
		fmt.Fprintf(w, "    T%d -%s-> T%d: %s\n", e.From, esc(e.Relation), e.To, esc(e.Reason))
	}
}

// anomalyWords words a for the text report: its type once (with its
// Adya/Elle class when that differs), then what its description says
// beyond the level and the type; blame is, for a mixed check, whose level
// fails and why. The JSON report keeps the description whole.
func anomalyWords(level string, a check.Anomaly) (head, blame string) {
	d := a.Description
	if i := strings.Index(d, strings.ToUpper(level)+" violation: "); i >= 0 {
		blame = strings.TrimSpace(d[:i])
		d = d[i+len(level)+len(" violation: "):]
	}
	name := a.Type
	if a.Class != "" && a.Class != a.Type {
		name += " (" + a.Class + ")"
	}
	if rest, ok := cutName(d, a.Type); ok {
		return name + rest, blame
	}
	return name + ": " + d, blame
}

// cutName returns what follows name at the start of d, matched as words
// (case and hyphens aside: "lost update" is lost-update), and whether it
// is there.
func cutName(d, name string) (string, bool) {
	if len(d) < len(name) {
		return "", false
	}
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", " ")) }
	if norm(d[:len(name)]) != norm(name) {
		return "", false
	}
	rest := d[len(name):]
	if rest != "" && !strings.ContainsRune(" :(;,", rune(rest[0])) {
		return "", false
	}
	return rest, true
}

func formatMap[V int64 | float64](m map[string]V, unit string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s %v%s", k, m[k], unit)
	}
	return b.String()
}

// convertTargets are the formats convert writes.
var convertTargets = []string{"jsonl", "dbcop", "cobra", "text", "edn", "awdit", "viper"}

func newConvert(stdout io.Writer) *cobra.Command {
	var (
		rf      readFlags
		out     string
		to      string
		flavour string
	)
	c := &cobra.Command{
		Use:   "convert [flags] PATH|-",
		Short: "Convert a history to hyperiso's JSON Lines or another checker's format",
		Long: `Convert a history in any supported format to another: hyperiso's JSON
Lines (the default), dbcop's history.bincode, a Cobra log directory, the
Plume/PolySI text format, Jepsen EDN, AWDIT's test format or a Viper log
directory. A history the target format cannot hold (aborted or
unknown-outcome transactions, list operations, real-time intervals, ...
see docs/formats.md) is refused with exit 2 and a message naming what the
format lacks; nothing is written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !slices.Contains(convertTargets, to) {
				return fail(exitBadInput, "--to must be one of %s (got %q)", strings.Join(convertTargets, ", "), to)
			}
			fl, ok := cobrafmt.ParseFlavour(flavour)
			if !ok || fl == cobrafmt.Auto && flavour != "" && flavour != "auto" {
				return fail(exitBadInput, "--to-cobra-flavour must be unique or universal (got %q)", flavour)
			}
			if (to == "cobra" || to == "viper") && (out == "" || out == "-") {
				return fail(exitBadInput, "--to %s writes a directory of log files: give it with -o DIR", to)
			}
			h, err := rf.read(args[0])
			if err != nil {
				return err
			}
			// The file written carries no warnings: they are said here.
			printWarnings(c.ErrOrStderr(), h, seeStats)
			if to == "cobra" || to == "viper" {
				if to == "cobra" {
					err = cobrafmt.Write(out, h, cobrafmt.WriteOptions{Flavour: fl})
				} else {
					err = viper.Write(out, h)
				}
				if err != nil {
					return fail(exitBadInput, "writing %s: %v", out, err)
				}
				return nil
			}
			write := map[string]func(io.Writer, *history.History) error{
				"jsonl": jsonl.Write,
				"dbcop": dbcop.Write,
				"text":  text.Write,
				"edn":   elle.Write,
				"awdit": awdit.Write,
			}[to]
			// Written whole or not at all: a refusal leaves no partial
			// output, and an existing file untouched.
			var buf bytes.Buffer
			if err := write(&buf, h); err != nil {
				return fail(exitBadInput, "writing %s: %v", to, err)
			}
			if out == "" || out == "-" {
				_, err := stdout.Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return fail(exitBadInput, "%v", err)
			}
			return nil
		},
	}
	rf.register(c)
	c.Flags().StringVarP(&out, "output", "o", "", "output file, or directory for --to cobra and --to viper (default: standard output)")
	c.Flags().StringVar(&to, "to", "jsonl", "output format: "+strings.Join(convertTargets, "|"))
	c.Flags().StringVar(&flavour, "to-cobra-flavour", "unique", "Cobra logs written: unique (classic Cobra, reads name their writer) or universal (reads match by value)")
	return c
}

func newStats(stdout io.Writer) *cobra.Command {
	var (
		rf     readFlags
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "stats [flags] PATH|-",
		Short: "Print a history's size, statuses and duplicate-value degree",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			h, err := rf.read(args[0])
			if err != nil {
				return err
			}
			st := h.Stats()
			if asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				msgs := make([]string, len(h.Warnings))
				for i, w := range h.Warnings {
					msgs[i] = w.String()
				}
				return enc.Encode(struct {
					Source string `json:"source"`
					Format string `json:"format"`
					history.Stats
					Warnings        int              `json:"warnings"`
					WarningMessages []string         `json:"warning_messages,omitempty"`
					Dropped         *history.Dropped `json:"dropped,omitempty"`
				}{h.Source, h.Format, st, len(h.Warnings), msgs, h.Dropped.Reported()})
			}
			printWarnings(c.ErrOrStderr(), h, seeStats)
			fmt.Fprintf(stdout, "source              %s\nformat              %s\n", esc(h.Source), esc(h.Format))
			fmt.Fprintf(stdout, "sessions            %d\ntransactions        %d\n  committed         %d\n  aborted           %d\n  unknown           %d\n",
				st.Sessions, st.Transactions, st.Committed, st.Aborted, st.Unknown)
			fmt.Fprintf(stdout, "operations          %d (%d reads, %d writes)\nkeys                %d\ninitial writes      %d (%s)\n",
				st.Operations, st.Reads, st.Writes, st.Keys, st.InitWrites, h.InitKind)
			fmt.Fprintf(stdout, "external reads      %d\nmulti-writer reads  %d (max %d candidates)\nduplicate versions  %d\naborted writes      %d\nwarnings            %d\n",
				st.ExternalReads, st.MultiWriterReads, st.MaxCandidates, st.DuplicateVersions, st.AbortedWrites, len(h.Warnings))
			if h.Dropped.Any() {
				fmt.Fprintf(stdout, "lenient drops       %s\n", h.Dropped)
			}
			return nil
		},
	}
	rf.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
