package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/robust"
)

// workloadFlags are the input options of robust and allocate: a workload
// file, a recorded JSONL history, or a generator.
type workloadFlags struct {
	fromHistory bool
	generate    string
	gen         robust.GenOptions
	cmd         *cobra.Command
}

func (f *workloadFlags) register(c *cobra.Command) {
	f.cmd = c
	c.Flags().BoolVar(&f.fromHistory, "history", false, "PATH is a recorded history in JSON Lines: each committed transaction becomes an instance with its actual read and write sets")
	c.Flags().StringVar(&f.generate, "generate", "", "generate the workload instead of reading one: "+strings.Join(robust.Generators, "|"))
	c.Flags().Uint64Var(&f.gen.Seed, "seed", 1, "--generate: random seed")
	c.Flags().IntVar(&f.gen.Instances, "instances", 0, "--generate: program instances (default 1000; ycsb 5000)")
	c.Flags().IntVar(&f.gen.Keys, "keys", 0, "--generate: keys the instances choose among uniformly (default 500; ycsb 300)")
	c.Flags().IntVar(&f.gen.Ops, "ops", 0, "--generate ycsb: operations per instance (default 10)")
}

// load returns the workload the flags and arguments name.
func (f *workloadFlags) load(args []string) (*robust.Workload, error) {
	switch {
	case f.generate != "" && len(args) > 0:
		return nil, fail(exitBadInput, "give either PATH or --generate, not both")
	case f.generate != "":
		w, err := robust.Generate(f.generate, f.gen)
		if err != nil {
			return nil, fail(exitBadInput, "--generate: %v", err)
		}
		return w, nil
	case len(args) != 1:
		return nil, fail(exitBadInput, "give a workload file (PATH, or - for standard input) or --generate")
	case f.fromHistory:
		var h *history.History
		var err error
		if args[0] == "-" {
			h, err = jsonl.Parse(f.cmd.InOrStdin(), "-", jsonl.Options{})
		} else {
			h, err = jsonl.Read(args[0], jsonl.Options{})
		}
		if err != nil {
			return nil, fail(exitBadInput, "%v", err)
		}
		return robust.FromHistory(h), nil
	}
	var w *robust.Workload
	var err error
	if args[0] == "-" {
		w, err = robust.Parse(f.cmd.InOrStdin(), "-")
	} else {
		w, err = robust.ReadFile(args[0])
	}
	if err != nil {
		return nil, fail(exitBadInput, "%v", err)
	}
	return w, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func sinceMS(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func newRobust(stdout io.Writer, code *int) *cobra.Command {
	var (
		wf       workloadFlags
		asJSON   bool
		deflevel string
		cycles   int
		cexFile  string
		budget   int
		exact    bool
		timeout  time.Duration
	)
	c := &cobra.Command{
		Use:   "robust [--json] [--default-level L] [--history] PATH|- | --generate KIND",
		Short: "Decide whether a workload at its declared levels can only produce serializable histories",
		Long: `robust reads a workload (program instances with read and write sets, levels and
session order; docs/robustness.md), builds its static dependency graph and
decides static robustness (MixIso, Theorem 6.16, with session order): when
no static critical cycle exists, every history the instances can produce at
their levels is serializable. Otherwise it names the instances that are the
middle of a critical cycle and prints cycles in words. For each printed cycle
it asks hyperiso's SAT solver whether the cycle's instances (with their
session predecessors, at most ` + fmt.Sprint(robust.ExactMax) + `) have an execution at their levels that is
not serializable; when one is found the workload is not robust for certain,
and --counterexample FILE writes it as a JSONL history that "check --level
mixed" accepts and "check --level ser" rejects. --exact asks the same of
each strongly connected component of the static graph that holds a
critical cycle, which decides robustness exactly where those components
hold at most ` + fmt.Sprint(robust.ExactMax) + ` instances; a larger one is searched through small
sets of instances around its culprits, which can only find a
counterexample. The workload file is JSON or YAML; keys may be patterns
with parameters, which --exact declines (docs/robustness.md).

Levels: ` + robust.SupportedList(", ") + `. Exit status 0: robust; 1: not robust;
2: bad input.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			start := time.Now()
			w, err := wf.load(args)
			if err != nil {
				return err
			}
			readMS := sinceMS(start)
			opt := robust.CheckOptions{MaxCycles: cycles}
			if deflevel != "" {
				l, ok := history.ParseLevel(deflevel)
				if !ok || !robust.Supported(l) {
					return fail(exitBadInput, "--default-level must be one of %s (got %q)", robust.SupportedList(", "), deflevel)
				}
				opt.Default = l
			}
			start = time.Now()
			rep, err := robust.Check(w, opt)
			if err != nil {
				return fail(exitBadInput, "%v", err)
			}
			out := robust.NewRobustReport(w, rep)
			out.TimingsMS["read"], out.TimingsMS["check"] = readMS, sinceMS(start)
			start = time.Now()
			lim := robust.Limits{Steps: budget}
			if timeout > 0 {
				lim.Deadline = start.Add(timeout)
			}
			for i, cyc := range rep.Cycles {
				ex, ok := robust.Confirm(w, rep.Levels, cyc, lim)
				if !ok {
					continue
				}
				cr := &out.Cycles[i]
				cr.Confirmed = true
				for _, m := range ex.Members {
					cr.Counterexample = append(cr.Counterexample, w.Instances[m].Name)
				}
				if cexFile != "" && out.CounterexampleFile == "" && i == 0 {
					if err := os.WriteFile(cexFile, ex.JSONL(w, rep.Levels), 0o644); err != nil {
						return fail(exitBadInput, "--counterexample: %v", err)
					}
					out.CounterexampleFile = cexFile
				}
			}
			out.TimingsMS["confirm"] = sinceMS(start)
			if exact && !rep.Robust {
				start = time.Now()
				res := robust.Exact(w, rep.Levels, lim)
				out.Exact = robust.NewExactReport(w, res)
				out.TimingsMS["exact"] = sinceMS(start)
				switch {
				case res.Decided && res.Robust:
					rep.Robust = true // the exact answer overrides the static one
				case res.Counterexample != nil && cexFile != "" && out.CounterexampleFile == "":
					if err := os.WriteFile(cexFile, res.Counterexample.JSONL(w, rep.Levels), 0o644); err != nil {
						return fail(exitBadInput, "--counterexample: %v", err)
					}
					out.CounterexampleFile = cexFile
				}
			}
			if !rep.Robust {
				*code = exitViolated
			}
			if asJSON {
				return writeJSON(stdout, out)
			}
			return out.WriteText(stdout)
		},
	}
	wf.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().StringVar(&deflevel, "default-level", "", "level of instances that declare none ("+robust.SupportedList("|")+")")
	c.Flags().IntVar(&cycles, "cycles", 1, "how many critical cycles to print")
	c.Flags().StringVar(&cexFile, "counterexample", "", "write the first cycle's non-serializable execution, when one is found, to this file as a JSONL history")
	c.Flags().IntVar(&budget, "confirm-budget", 1_000_000, "SAT conflicts per question: confirming each printed cycle, and each component for --exact (0: no bound)")
	c.Flags().DurationVar(&timeout, "timeout", 0, "bound the time of confirming cycles and of --exact (0: none); past it the static answer stands")
	c.Flags().BoolVar(&exact, "exact", false, "when the static criterion finds critical cycles, ask the SAT solver whether some strongly connected component of the static graph (with session predecessors, up to "+fmt.Sprint(robust.ExactMax)+" instances; a larger one through small sets around its culprits) has a non-serializable execution: robust, not robust, or undecided")
	return c
}

func newAllocate(stdout io.Writer) *cobra.Command {
	var (
		wf      workloadFlags
		asJSON  bool
		list    bool
		seeds   int
		exact   bool
		budget  int
		timeout time.Duration
	)
	c := &cobra.Command{
		Use:   "allocate [--json] [--list] [--history] PATH|- | --generate KIND",
		Short: "Give each program instance the weakest level that keeps the workload serializable",
		Long: `allocate reads a workload like robust (declared levels are ignored) and gives
each instance a level by the rules of MixIso's Theorem 6.18, which keep every
history the workload can produce serializable:

  A1  RA   write-only, or reads one key and writes none (and is first in its
           session: a later one gets PC, since session order alone can close
           a cycle through it)
  A2  PC   reads several keys and writes none
  A3  PSI  reads and writes, and every instance that writes a key it reads
           also writes a key it writes
  A4  SER  otherwise

It prints the share of instances per level and per program type, the prior
SI/SER allocation for comparison, and with --list (or --json) each
instance's level and why.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if seeds != 1 {
				if wf.generate == "" || seeds < 1 {
					return fail(exitBadInput, "--seeds takes a positive count and goes with --generate")
				}
				return allocateSeeds(stdout, &wf, seeds, asJSON)
			}
			start := time.Now()
			w, err := wf.load(args)
			if err != nil {
				return err
			}
			readMS := sinceMS(start)
			start = time.Now()
			a := robust.Allocate(w)
			allocMS := sinceMS(start)
			start = time.Now()
			prior, err := robust.PriorAllocation(w)
			if err != nil {
				return fail(exitBadInput, "%v", err)
			}
			priorMS := sinceMS(start)
			start = time.Now()
			refined, lowered, err := robust.Refine(w, a.Levels)
			if err != nil {
				return fail(exitBadInput, "%v", err)
			}
			refineMS := sinceMS(start)
			out := robust.NewAllocationReport(w, a, robust.StaticEdges(w), prior, refined, lowered)
			out.TimingsMS["read"], out.TimingsMS["allocate"], out.TimingsMS["prior"], out.TimingsMS["refine"] = readMS, allocMS, priorMS, refineMS
			if exact {
				start = time.Now()
				lim := robust.Limits{Steps: budget}
				if timeout > 0 {
					lim.Deadline = start.Add(timeout)
				}
				levels, low, undecided := robust.RefineExact(w, refined, lim)
				out.ExactRefined, out.ExactUndecided = robust.Counts(levels), undecided
				for i, l := range low {
					if l {
						out.ExactLowered++
						out.Allocation[i].Refined = levels[i].String()
					}
				}
				out.TimingsMS["exact"] = sinceMS(start)
			}
			if asJSON {
				return writeJSON(stdout, out)
			}
			return out.WriteText(stdout, list)
		},
	}
	wf.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (with every instance)")
	c.Flags().BoolVar(&list, "list", false, "list every instance's level and why")
	c.Flags().BoolVar(&exact, "exact", false, "lower the refined allocation further where the SAT solver shows the instance's strongly connected component (up to "+fmt.Sprint(robust.ExactMax)+" instances with session predecessors) stays robust; in a larger one, refute each lower level by a counterexample among a few instances, and count the levels left undecided")
	c.Flags().IntVar(&budget, "exact-budget", 1_000_000, "--exact: SAT conflicts per component and level tried (0: no bound)")
	c.Flags().DurationVar(&timeout, "timeout", 0, "--exact: bound its time (0: none); past it, instances not yet lowered keep the refined level")
	c.Flags().IntVar(&seeds, "seeds", 1, "--generate: allocate this many workloads (seeds --seed, --seed+1, …) and report each level's share over them")
	return c
}

// allocateSeeds allocates the workloads of seeds consecutive seeds and
// reports the mean, least and greatest share of each level, and of SI in
// the prior SI/SER allocation.
func allocateSeeds(stdout io.Writer, wf *workloadFlags, seeds int, asJSON bool) error {
	type stat struct {
		Level string  `json:"level"`
		Mean  float64 `json:"mean_percent"`
		Min   float64 `json:"min_percent"`
		Max   float64 `json:"max_percent"`
	}
	// Per seed, each level's share; a level absent from a seed has 0 %.
	var runs []map[string]float64
	start := time.Now()
	base := wf.gen.Seed
	for i := range seeds {
		wf.gen.Seed = base + uint64(i)
		w, err := wf.load(nil)
		if err != nil {
			return err
		}
		a := robust.Allocate(w)
		prior, err := robust.PriorAllocation(w)
		if err != nil {
			return fail(exitBadInput, "%v", err)
		}
		run := map[string]float64{}
		for _, l := range robust.Counts(a.Levels) {
			run[l.Level] = l.Percent
		}
		n := float64(len(w.Instances))
		run["prior si"], run["prior ser"] = float64(prior.SI)*100/n, float64(prior.SER)*100/n
		refined, _, err := robust.Refine(w, a.Levels)
		if err != nil {
			return fail(exitBadInput, "%v", err)
		}
		for _, l := range robust.Counts(refined) {
			run["refined "+l.Level] = l.Percent
		}
		runs = append(runs, run)
	}
	// Levels strongest first, then the prior allocation's.
	var order []string
	for _, name := range history.LevelNames(nil) {
		for _, run := range runs {
			if _, ok := run[name]; ok {
				order = append(order, name)
				break
			}
		}
	}
	for _, name := range history.LevelNames(nil) {
		for _, run := range runs {
			if _, ok := run["refined "+name]; ok {
				order = append(order, "refined "+name)
				break
			}
		}
	}
	order = append(order, "prior si", "prior ser")
	var stats []stat
	for _, name := range order {
		st := stat{Level: name, Min: 100}
		for _, run := range runs {
			p := run[name]
			st.Mean += p / float64(seeds)
			st.Min, st.Max = min(st.Min, p), max(st.Max, p)
		}
		stats = append(stats, st)
	}
	if asJSON {
		return writeJSON(stdout, struct {
			Generator string  `json:"generator"`
			Seeds     int     `json:"seeds"`
			FirstSeed uint64  `json:"first_seed"`
			Levels    []stat  `json:"levels"`
			Seconds   float64 `json:"seconds"`
		}{wf.generate, seeds, base, stats, time.Since(start).Seconds()})
	}
	fmt.Fprintf(stdout, "%s, seeds %d to %d: share of instances per level (mean, least, greatest)\n", wf.generate, base, base+uint64(seeds)-1)
	for _, s := range stats {
		fmt.Fprintf(stdout, "  %-12s %5.1f%%  %5.1f%%  %5.1f%%\n", strings.ToUpper(s.Level), s.Mean, s.Min, s.Max)
	}
	return nil
}
