package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hyperiso/hyperiso/bench"
	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

var benchLong = `Compare solver strategies: run each strategy at each level on each history,
repeat, and report per history, level and strategy the verdict, the wall
time (median and minimum over the repeats), the peak memory, the time of
each stage and the solver's counters.

Every run is a separate process (this binary, as "hyperiso bench --worker"),
so runs do not disturb each other: the wall time is that process's, reading
the history included, and the peak memory is its maximum resident set size
as the kernel reports it. A run that exceeds --timeout is recorded as
"timeout" and its remaining repeats are skipped. Runs go one at a time.
On Linux a worker dies with bench, however bench ends (SIGTERM, SIGKILL).

PATH is a history file; a directory holding history.bincode or Cobra *.log
files (one history); any other directory (every history inside it); or a
generated history (below).

The table goes to standard output; --csv, --json and --plot (.svg, .png or
.pdf: time per strategy and history, log scale, one panel per level) write
files ("-" sends CSV or JSON to standard output instead of the table).
--max-memory bounds each run's memory (the worker's budget, as check's).
--ablation BASE adds a table comparing BASE with the other strategies (each
switching one optimisation off): conflicts and time, relative to BASE.
--from REPORT.json prints, plots or compares a saved report again without
running anything.
A progress bar is shown when standard error is a terminal.

` + benchGenHelp + "\n\n" + scaleHelp

func newBench(stdout io.Writer) *cobra.Command {
	var (
		rf          readFlags
		strategies  []string
		levels      []string
		repeat      int
		timeout     time.Duration
		csvOut      string
		jsonOut     string
		plotOut     string
		ablation    string
		ablationCtr string
		verbose     bool
		worker      bool
		from        string
		scale       bool
		scaleSizes  []int
		scaleDir    string
		scaleVars   []string
		markdown    string
	)
	c := &cobra.Command{
		Use:   "bench [--strategy a,b,...] [--level ser,si] [--repeat N] [--timeout D] [--max-memory SIZE] [--csv F] [--plot F] PATH... | --scale [--scale-sizes N,...]",
		Short: "Measure solver strategies on histories: verdict, time, memory, counters",
		Long:  benchLong,
		RunE: func(c *cobra.Command, args []string) error {
			if worker {
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
				defer stop()
				return bench.ServeWorker(ctx, c.InOrStdin(), stdout)
			}
			if plotOut != "" {
				if !bench.PlotsAvailable {
					return fail(exitBadInput, "--plot: %v", bench.ErrNoPlots)
				}
				ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(plotOut)), ".")
				if !slices.Contains(bench.PlotFormats, ext) {
					return fail(exitBadInput, "--plot %s: the file must end in .%s", plotOut, strings.Join(bench.PlotFormats, ", ."))
				}
			}
			var (
				rep    *bench.Report
				runErr error
			)
			if scale {
				if len(args) > 0 {
					return fail(exitBadInput, "--scale generates its histories: give no PATH")
				}
				if !c.Flags().Changed("level") {
					levels = history.LevelNames(func(r history.LevelRow) bool {
						return r.Declarable && (r.Level == history.SER || r.Level == history.SI || r.Engine == history.Weak)
					})
				}
				if !c.Flags().Changed("strategy") {
					strategies = defaultStrategies(levels)
				}
				if len(scaleSizes) == 0 || slices.ContainsFunc(scaleSizes, func(n int) bool { return n <= 0 || n%scaleSessions != 0 }) {
					return fail(exitBadInput, "--scale-sizes: each size must be a positive multiple of %d (the sessions)", scaleSessions)
				}
				slices.Sort(scaleSizes)
				for _, v := range scaleVars {
					if !slices.ContainsFunc(scaleVariants(), func(sv bench.ScaleVariant) bool { return sv.Name == v }) {
						return fail(exitBadInput, "--scale-variants: %q is not one of unique, zipf, unique-growing, zipf-growing", v)
					}
				}
			}
			if from != "" {
				if len(args) > 0 {
					return fail(exitBadInput, "--from %s reads a saved report: give no PATH", from)
				}
				f, err := os.Open(from)
				if err != nil {
					return fail(exitBadInput, "%v", err)
				}
				rep, err = bench.ReadReport(f)
				f.Close()
				if err != nil {
					return fail(exitBadInput, "%s: %v", from, err)
				}
				if !c.Flags().Changed("strategy") {
					strategies = rep.Strategies
				}
			} else {
				if len(args) == 0 && !scale {
					return fail(exitBadInput, "bench needs at least one PATH (or --from REPORT.json)\n%s", c.UsageString())
				}
				for _, l := range levels {
					if _, ok := history.ParseLevel(l); !ok {
						return fail(exitBadInput, "--level: %q is not one of %s", l, history.LevelList(", ", nil))
					}
				}
				// Each level runs the strategies of its own table (all of
				// them unless --strategy names some); RC, RA, CC and mixed
				// run once.
				if err := bench.CheckStrategies(levels, strategies); err != nil {
					return fail(exitBadInput, "--strategy: %s", strings.TrimPrefix(err.Error(), "bench: "))
				}
				if len(strategies) == 0 {
					// The levels' whole tables, named for --ablation.
					strategies = bench.UsedStrategies(levels, nil)
				}
				if repeat < 1 {
					return fail(exitBadInput, "--repeat must be at least 1 (got %d)", repeat)
				}
			}
			if ablation != "" && !slices.Contains(strategies, ablation) {
				return fail(exitBadInput, "--ablation %s: the base strategy must be one of the strategies (%s)", ablation, strings.Join(strategies, ", "))
			}
			if rep == nil {
				registerBenchGenerators()
				var targets []bench.Target
				if !scale {
					var err error
					if targets, err = bench.Expand(args); err != nil {
						return fail(exitBadInput, "%v", err)
					}
				}
				cfg := bench.Config{
					Strategies: strategies, Levels: levels, Repeat: repeat, Timeout: timeout,
					Format: rf.format, CobraFlavour: rf.flavour, Lenient: rf.lenient,
				}
				if mm, _ := c.Flags().GetString("max-memory"); mm != "" {
					// The workers check: they get the budget.
					exe, err := os.Executable()
					if err != nil {
						return fail(exitBadInput, "locating the hyperiso executable for the worker: %v", err)
					}
					cfg.Command = []string{exe, "bench", "--worker", "--max-memory", mm}
				}
				runs := len(targets)
				variants := slices.DeleteFunc(scaleVariants(), func(sv bench.ScaleVariant) bool { return !slices.Contains(scaleVars, sv.Name) })
				if scale {
					runs = len(scaleSizes) * len(variants)
				}
				stderr := c.ErrOrStderr()
				bar := newBenchBar(stderr, runs*bench.PlannedRuns(levels, strategies)*repeat)
				cfg.Progress = benchProgress(bar, stderr, verbose)
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
				defer stop()
				if scale {
					dir := scaleDir
					if dir == "" {
						d, err := os.MkdirTemp("", "hyperiso-scale-")
						if err != nil {
							return fail(exitBadInput, "%v", err)
						}
						defer os.RemoveAll(d)
						dir = d
					}
					rep, runErr = bench.RunScale(ctx, bench.ScaleConfig{Sizes: scaleSizes, Variants: variants, Dir: dir}, cfg)
				} else {
					rep, runErr = bench.Run(ctx, targets, cfg)
				}
				if bar != nil {
					bar.stop()
				}
				if rep == nil {
					return fail(exitBadInput, "%v", runErr)
				}
			}
			if scale {
				if err := writeScaleOutputs(stdout, rep, csvOut, jsonOut, plotOut, markdown); err != nil {
					return fail(exitBadInput, "%v", err)
				}
			} else if err := writeBenchOutputs(stdout, rep, csvOut, jsonOut, plotOut); err != nil {
				return fail(exitBadInput, "%v", err)
			}
			if ablation != "" {
				var abl []string
				for _, s := range strategies {
					if s != ablation {
						abl = append(abl, s)
					}
				}
				fmt.Fprintln(stdout)
				if err := bench.WriteAblation(stdout, rep, ablation, abl, ablationCtr); err != nil {
					return err
				}
			}
			if runErr != nil {
				return fail(exitUnknown, "bench interrupted: %v (the outputs hold the runs finished so far)", runErr)
			}
			return nil
		},
	}
	rf.register(c)
	f := c.Flags()
	f.StringSliceVar(&strategies, "strategy", nil, "strategies to compare, comma-separated; each level runs those of its own table (default: each level's whole table: "+strategyTables()+"; the other levels run once, without a strategy)")
	f.StringSliceVar(&levels, "level", []string{history.SER.String()}, "isolation levels, comma-separated: "+history.LevelList(", ", nil))
	f.IntVar(&repeat, "repeat", 1, "runs of each history, level and strategy")
	f.DurationVar(&timeout, "timeout", 0, "bound on each run, e.g. 10m (0: none)")
	f.StringVar(&csvOut, "csv", "", "also write the results as CSV to this file (- for standard output)")
	f.StringVar(&jsonOut, "json", "", "also write every run as JSON to this file (- for standard output)")
	f.StringVar(&plotOut, "plot", "", "also plot time per strategy to this file (.svg, .png or .pdf)")
	f.StringVar(&ablation, "ablation", "", "base strategy of an ablation table against the other --strategy values")
	f.StringVar(&ablationCtr, "ablation-counter", "conflicts", "counter shown in the ablation table")
	f.StringVar(&from, "from", "", "print, plot or compare a report saved with --json instead of running")
	f.BoolVar(&scale, "scale", false, "write and check synthetic histories of growing size instead of PATHs (below)")
	f.IntSliceVar(&scaleSizes, "scale-sizes", []int{10_000, 30_000, 100_000, 300_000, 1_000_000}, "with --scale: numbers of transactions")
	f.StringVar(&scaleDir, "scale-dir", "", "with --scale: directory that keeps the histories, reused when present (default: a temporary one, removed)")
	f.StringSliceVar(&scaleVars, "scale-variants", []string{"unique", "zipf"}, "with --scale: the histories, among unique, zipf, unique-growing, zipf-growing")
	f.StringVar(&markdown, "markdown", "", "with --scale: also write the Markdown table to this file")
	f.BoolVarP(&verbose, "verbose", "v", false, "print one line per run on standard error")
	f.BoolVar(&worker, "worker", false, "internal: run one job read as JSON from standard input")
	_ = f.MarkHidden("worker")
	return c
}

// writeScaleOutputs writes the scale bench's Markdown table to stdout
// (unless CSV or JSON go there) and the requested files.
func writeScaleOutputs(stdout io.Writer, rep *bench.Report, csvOut, jsonOut, plotOut, markdown string) error {
	toFile := func(path string, write func(io.Writer, *bench.Report) error) error {
		if path == "" {
			return nil
		}
		return writeReport(stdout, path, rep, write)
	}
	if csvOut != "-" && jsonOut != "-" {
		if err := bench.WriteScaleMarkdown(stdout, rep); err != nil {
			return err
		}
	}
	for _, o := range []struct {
		path  string
		write func(io.Writer, *bench.Report) error
	}{{csvOut, bench.WriteScaleCSV}, {jsonOut, bench.WriteJSON}, {markdown, bench.WriteScaleMarkdown}} {
		if err := toFile(o.path, o.write); err != nil {
			return err
		}
	}
	if plotOut != "" {
		if err := bench.WriteScalePlot(plotOut, rep); err != nil {
			return fmt.Errorf("writing %s: %w", plotOut, err)
		}
	}
	return nil
}

// writeReport writes rep with write to path, "-" meaning stdout.
func writeReport(stdout io.Writer, path string, rep *bench.Report, write func(io.Writer, *bench.Report) error) error {
	if path == "-" {
		return write(stdout, rep)
	}
	return writeFile(path, rep, write)
}

// writeBenchOutputs writes the table to stdout (unless CSV or JSON go
// there) and the requested files.
func writeBenchOutputs(stdout io.Writer, rep *bench.Report, csvOut, jsonOut, plotOut string) error {
	toFile := func(path string, write func(io.Writer, *bench.Report) error) error {
		return writeReport(stdout, path, rep, write)
	}
	if csvOut != "-" && jsonOut != "-" {
		if err := bench.WriteTable(stdout, rep); err != nil {
			return err
		}
	}
	if csvOut != "" {
		if err := toFile(csvOut, bench.WriteCSV); err != nil {
			return err
		}
	}
	if jsonOut != "" {
		if err := toFile(jsonOut, bench.WriteJSON); err != nil {
			return err
		}
	}
	if plotOut != "" {
		if err := bench.WritePlot(plotOut, rep); err != nil {
			return fmt.Errorf("writing %s: %w", plotOut, err)
		}
	}
	return nil
}

// benchBar is a progress bar that names the running history, level and
// strategy and counts the seconds of the current run.
type benchBar struct {
	bar  *progressbar.ProgressBar
	mu   sync.Mutex
	desc string
	from time.Time
	done chan struct{}
	wg   sync.WaitGroup
}

// newBenchBar returns a progress bar when w is a terminal, nil elsewhere.
func newBenchBar(w io.Writer, total int) *benchBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	b := &benchBar{
		bar: progressbar.NewOptions(total,
			progressbar.OptionSetWriter(f),
			progressbar.OptionSetDescription("bench"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionFullWidth(),
			progressbar.OptionClearOnFinish(),
		),
		done: make(chan struct{}),
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-t.C:
				b.mu.Lock()
				if b.desc != "" {
					b.bar.Describe(fmt.Sprintf("%s %s", b.desc, time.Since(b.from).Round(time.Second)))
				}
				b.mu.Unlock()
			}
		}
	}()
	return b
}

func (b *benchBar) event(ev bench.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.Sample == nil {
		b.desc, b.from = fmt.Sprintf("%s %s %s #%d", ev.History, ev.Level, bench.StrategyLabel(ev.Strategy), ev.Repeat), time.Now()
		b.bar.Describe(b.desc)
		return
	}
	_ = b.bar.Set(ev.Done)
}

func (b *benchBar) stop() {
	close(b.done)
	b.wg.Wait()
	_ = b.bar.Finish()
	_ = b.bar.Clear()
}

// benchProgress feeds the bar and, with -v, prints a line per run.
func benchProgress(bar *benchBar, stderr io.Writer, verbose bool) func(bench.Event) {
	return func(ev bench.Event) {
		if bar != nil {
			bar.event(ev)
		}
		if verbose && ev.Sample != nil {
			s := ev.Sample
			if bar != nil {
				_ = bar.bar.Clear()
			}
			extra := s.Reason
			if s.Error != "" {
				extra = s.Error
			}
			fmt.Fprintf(stderr, "[%d/%d] %s %s %s #%d: %s in %s, %s peak%s\n", ev.Done, ev.Total, ev.History, ev.Level, bench.StrategyLabel(ev.Strategy),
				ev.Repeat, s.Verdict, bench.FormatMS(s.WallMS), bench.FormatBytes(s.MaxRSS), parenthesise(extra))
		}
	}
}

// defaultStrategies is each level's default strategy (the first of its
// table), each once: the scale bench runs every level its default way.
func defaultStrategies(levels []string) []string {
	var out []string
	for _, l := range levels {
		lv, _ := history.ParseLevel(l)
		if names := check.StrategyNames(lv); len(names) > 0 && !slices.Contains(out, names[0]) {
			out = append(out, names[0])
		}
	}
	return out
}

// strategyTables lists, for --help, each table of strategies and the
// levels it decides ("ser, si: veristrong, …; psi: cdcl-psi, …").
func strategyTables() string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range history.Levels {
		if r.Strategies == "" || seen[r.Strategies] {
			continue
		}
		seen[r.Strategies] = true
		table := r.Strategies
		levels := history.LevelNames(func(o history.LevelRow) bool { return o.Strategies == table })
		parts = append(parts, strings.Join(levels, ", ")+": "+strings.Join(check.StrategyNames(r.Level), ", "))
	}
	return strings.Join(parts, "; ")
}

func parenthesise(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
