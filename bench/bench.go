// Package bench measures hyperiso's solver strategies: it runs chosen
// strategies at chosen isolation levels on chosen histories, repeats each
// run, and reports per history × level × strategy the verdict, the wall
// time (median and minimum over the repeats), the peak memory, the time of
// each pipeline stage and the solver's counters (variables, clauses,
// iterations, blocking clauses; decisions, conflicts, propagations and
// learned clauses for the CDCL strategies).
//
// Every run is a separate child process (by default the running hyperiso
// binary as "hyperiso bench --worker"; see ServeWorker), so that runs do not
// share a heap, a garbage collector or a warmed-up cache of the history, and
// so that the peak memory is the child's own maximum resident set size as
// the kernel reports it (getrusage ru_maxrss). The wall time is measured by
// the parent around the child process: it is what a user waits for
// "hyperiso check", reading the history included. A run that exceeds the
// timeout is recorded as "timeout": the child gives up on its own at the
// timeout (naming the stage it reached) and is killed if it has not exited
// shortly after.
//
// Histories come from files and directories (Expand) or from generators of
// synthetic workloads (Generator, RegisterGenerator); a generated history is
// written once as JSON Lines to a temporary file, which every run then
// reads like any other.
//
// The results are a Report, printed as an aligned table (WriteTable), CSV
// (WriteCSV), JSON (WriteJSON), a plot of time per strategy and history
// (WritePlot, SVG or PNG) and an ablation table (WriteAblation), which
// compares a base strategy with variants that switch one optimisation off.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// Verdicts of a run besides check's satisfied, violated and unknown.
const (
	// VerdictTimeout: the run did not finish within Config.Timeout.
	VerdictTimeout = "timeout"
	// VerdictError: the run failed (unreadable history, unknown strategy,
	// a crashed child); Sample.Error says why.
	VerdictError = "error"
)

// Config says what to run and how.
type Config struct {
	// Strategies are the solver strategies to compare, by name
	// (check.StrategyNames). Each level runs those of them that decide it
	// (LevelStrategies): empty, its whole table; a level decided one way
	// (RC, RA, CC, mixed) runs once, without a strategy.
	Strategies []string
	// Levels are the isolation levels to check ("ser", "si", …); default
	// ser.
	Levels []string
	// Repeat is the number of runs of each history × level × strategy
	// (default 1). After a run times out, the remaining repeats of the
	// same measurement are skipped.
	Repeat int
	// Timeout bounds each run (0: none).
	Timeout time.Duration
	// KillGrace is how long after Timeout a child that has not exited on
	// its own is killed (default 5s).
	KillGrace time.Duration
	// Format, CobraFlavour and Lenient are passed to the reader
	// (formats.Options); empty means auto-detection.
	Format       string
	CobraFlavour string
	Lenient      bool
	// Command is the worker's command line: a program that reads a Job as
	// JSON on standard input and writes a Reply as JSON on standard output
	// (ServeWorker). Default: this executable with "bench --worker".
	Command []string
	// Env is added to the worker's environment.
	Env []string
	// TempDir holds the files of generated histories (default: a fresh
	// temporary directory, removed when Run returns).
	TempDir string
	// Progress, if set, is called before and after each run.
	Progress func(Event)
}

// Event reports progress: Sample is nil when a run starts.
type Event struct {
	// Done counts finished runs (skipped repeats count as finished) out of
	// Total planned.
	Done, Total int
	History     string
	Level       string
	Strategy    string
	// Repeat is the 1-based repeat number of the run.
	Repeat int
	Sample *Sample
}

// Sample is one run of one child process.
type Sample struct {
	// Verdict is satisfied, violated, unknown, timeout or error.
	Verdict string `json:"verdict"`
	// Reason explains an unknown or timeout verdict.
	Reason string `json:"reason,omitempty"`
	// Error is why the run failed (verdict error).
	Error string `json:"error,omitempty"`
	// Stage is the stage a timed-out check had reached.
	Stage string `json:"stage,omitempty"`
	// Killed: the child did not stop by itself and was killed.
	Killed bool `json:"killed,omitempty"`
	// WallMS is the child process's wall time, measured by the parent.
	WallMS float64 `json:"wall_ms"`
	// CheckMS is the time the child spent reading and checking.
	CheckMS float64 `json:"check_ms"`
	// UserMS and SysMS are the child's CPU time.
	UserMS float64 `json:"user_ms"`
	SysMS  float64 `json:"sys_ms"`
	// MaxRSS is the child's peak resident set size in bytes.
	MaxRSS int64 `json:"max_rss_bytes"`
	// TimingsMS are the stage times the child reported (read, validate,
	// build, prune, encode, solve).
	TimingsMS map[string]float64 `json:"timings_ms,omitempty"`
	// Counters are the check's counters.
	Counters map[string]int64 `json:"counters,omitempty"`
	// Transactions is the size of the history.
	Transactions int `json:"transactions,omitempty"`
}

// Measurement summarises the runs of one history × level × strategy.
type Measurement struct {
	History  string `json:"history"`
	Path     string `json:"path"`
	Level    string `json:"level"`
	Strategy string `json:"strategy"`
	// Transactions is the size of the history (0 if no run read it).
	Transactions int `json:"transactions"`
	// Verdict is the runs' common verdict; runs that disagree are joined
	// with "/" (e.g. "satisfied/timeout").
	Verdict string `json:"verdict"`
	// Reason is the first reason or error of the runs.
	Reason string `json:"reason,omitempty"`
	// WallMedianMS and WallMinMS summarise the runs' wall times.
	WallMedianMS float64 `json:"wall_median_ms"`
	WallMinMS    float64 `json:"wall_min_ms"`
	// PeakRSS is the largest MaxRSS of the runs, in bytes.
	PeakRSS int64 `json:"peak_rss_bytes"`
	// TimingsMS holds the median of each stage's time over the runs that
	// reported it.
	TimingsMS map[string]float64 `json:"timings_ms"`
	// Counters are those of the run with the median wall time.
	Counters map[string]int64 `json:"counters"`
	// Samples are the individual runs, in order.
	Samples []Sample `json:"samples"`
}

// TimedOut tells whether a run of m timed out.
func (m *Measurement) TimedOut() bool {
	for _, s := range m.Samples {
		if s.Verdict == VerdictTimeout {
			return true
		}
	}
	return false
}

// CPUMedianMS is the median over the runs of the child's CPU time (user
// and system): a figure less disturbed than the wall time by other work on
// the machine (but which counts the garbage collector's parallel work).
func (m *Measurement) CPUMedianMS() float64 {
	var cpus []float64
	for _, s := range m.Samples {
		cpus = append(cpus, s.UserMS+s.SysMS)
	}
	if len(cpus) == 0 {
		return 0
	}
	return median(cpus)
}

// Report is the outcome of Run.
type Report struct {
	Started    time.Time     `json:"started"`
	Duration   time.Duration `json:"duration_ns"`
	Histories  []string      `json:"histories"`
	Strategies []string      `json:"strategies"`
	Levels     []string      `json:"levels"`
	Repeat     int           `json:"repeat"`
	Timeout    time.Duration `json:"timeout_ns"`
	Host       Host          `json:"host"`
	// LoadStart and LoadEnd are the machine's 1, 5 and 15-minute load
	// averages when the benchmark started and ended (Linux), a hint of
	// how much other work shared the machine.
	LoadStart string `json:"load_start,omitempty"`
	LoadEnd   string `json:"load_end,omitempty"`
	// Measurements are ordered by history, then level, then strategy, in
	// the order they were given.
	Measurements []Measurement `json:"measurements"`
}

// Find returns the measurement of history × level × strategy, or nil.
func (r *Report) Find(history, level, strategy string) *Measurement {
	for i := range r.Measurements {
		m := &r.Measurements[i]
		if m.History == history && m.Level == level && m.Strategy == strategy {
			return m
		}
	}
	return nil
}

// Host describes the machine that ran the benchmark.
type Host struct {
	Hostname  string `json:"hostname"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	CPU       string `json:"cpu,omitempty"`
	MemoryMB  int64  `json:"memory_mb,omitempty"`
	GoVersion string `json:"go_version"`
}

// ThisHost describes the running machine.
func ThisHost() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		for _, l := range strings.Split(string(b), "\n") {
			if _, err := fmt.Sscanf(l, "MemTotal: %d kB", &kb); err == nil {
				h.MemoryMB = kb / 1024
				break
			}
		}
	}
	return h
}

// Run measures every strategy at every level on every target, one child
// process per run, one run at a time. A cancelled ctx stops the benchmark:
// the report holds what was measured, and the error is ctx's.
func Run(ctx context.Context, targets []Target, cfg Config) (*Report, error) {
	if len(targets) == 0 {
		return nil, errors.New("bench: no histories")
	}
	if len(cfg.Levels) == 0 {
		cfg.Levels = []string{history.SER.String()}
	}
	if err := CheckStrategies(cfg.Levels, cfg.Strategies); err != nil {
		return nil, err
	}
	if cfg.Repeat <= 0 {
		cfg.Repeat = 1
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 5 * time.Second
	}
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("bench: locating the hyperiso executable for the worker: %w", err)
		}
		cfg.Command = []string{exe, "bench", "--worker"}
	}
	names := map[string]bool{}
	for _, t := range targets {
		if t.Name == "" || names[t.Name] {
			return nil, fmt.Errorf("bench: history names must be unique and non-empty (got %q twice or empty)", t.Name)
		}
		names[t.Name] = true
	}
	targets, cleanup, err := materialise(ctx, targets, cfg.TempDir)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	rep := &Report{
		Started:    time.Now(),
		Strategies: UsedStrategies(cfg.Levels, cfg.Strategies),
		Levels:     slices.Clone(cfg.Levels),
		Repeat:     cfg.Repeat,
		Timeout:    cfg.Timeout,
		Host:       ThisHost(),
		LoadStart:  loadAvg(),
	}
	for _, t := range targets {
		rep.Histories = append(rep.Histories, t.Name)
	}
	total := len(targets) * PlannedRuns(cfg.Levels, cfg.Strategies) * cfg.Repeat
	done := 0
	for _, t := range targets {
		for _, level := range cfg.Levels {
			for _, strat := range LevelStrategies(level, cfg.Strategies) {
				m := Measurement{History: t.Name, Path: t.Path, Level: level, Strategy: strat}
				job := Job{
					Path: t.Path, Format: cfg.Format, CobraFlavour: cfg.CobraFlavour, Lenient: cfg.Lenient,
					Level: level, Strategy: strat, TimeoutMS: cfg.Timeout.Milliseconds(),
				}
				for r := 1; r <= cfg.Repeat; r++ {
					if err := ctx.Err(); err != nil {
						rep.Duration, rep.LoadEnd = time.Since(rep.Started), loadAvg()
						return rep, err
					}
					ev := Event{Done: done, Total: total, History: t.Name, Level: level, Strategy: strat, Repeat: r}
					if cfg.Progress != nil {
						cfg.Progress(ev)
					}
					s := runChild(ctx, cfg, job)
					m.Samples = append(m.Samples, s)
					done++
					if s.Verdict == VerdictTimeout {
						done += cfg.Repeat - r
					}
					if cfg.Progress != nil {
						ev.Done, ev.Sample = done, &m.Samples[len(m.Samples)-1]
						cfg.Progress(ev)
					}
					if s.Verdict == VerdictTimeout {
						break
					}
				}
				summarise(&m)
				rep.Measurements = append(rep.Measurements, m)
			}
		}
	}
	rep.Duration, rep.LoadEnd = time.Since(rep.Started), loadAvg()
	return rep, nil
}

// LevelStrategies returns the strategies level runs when chosen are asked
// for: those of chosen that decide it (check.StrategyNames), its whole
// table when chosen is empty, and one run without a strategy ("") for a
// level decided one way.
func LevelStrategies(level string, chosen []string) []string {
	l, _ := history.ParseLevel(level)
	table := check.StrategyNames(l)
	if len(table) == 0 {
		return []string{""}
	}
	if len(chosen) == 0 {
		return table
	}
	var out []string
	for _, s := range chosen {
		if slices.Contains(table, s) {
			out = append(out, s)
		}
	}
	return out
}

// PlannedRuns counts the runs of one history at levels with chosen, one
// repeat each.
func PlannedRuns(levels, chosen []string) int {
	n := 0
	for _, l := range levels {
		n += len(LevelStrategies(l, chosen))
	}
	return n
}

// UsedStrategies lists the strategies levels run with chosen, each once,
// in order.
func UsedStrategies(levels, chosen []string) []string {
	out := []string{}
	for _, l := range levels {
		for _, s := range LevelStrategies(l, chosen) {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// CheckStrategies refuses levels a strategy decides none of, a strategy
// none of levels takes, and a level that takes strategies but none of
// chosen.
func CheckStrategies(levels, chosen []string) error {
	for _, l := range levels {
		lv, ok := history.ParseLevel(l)
		if !ok {
			return fmt.Errorf("bench: unknown level %q", l)
		}
		if len(chosen) > 0 && len(LevelStrategies(l, chosen)) == 0 {
			return fmt.Errorf("bench: none of the strategies %s decides %s (its strategies: %s)", strings.Join(chosen, ", "), l, strings.Join(check.StrategyNames(lv), ", "))
		}
	}
	for _, s := range chosen {
		if !slices.ContainsFunc(levels, func(l string) bool { return slices.Contains(LevelStrategies(l, []string{s}), s) }) {
			return fmt.Errorf("bench: strategy %q decides none of the levels %s", s, strings.Join(levels, ", "))
		}
	}
	return nil
}

// StrategyLabel names a measurement's strategy in tables: "-" for a level
// decided one way.
func StrategyLabel(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// LevelStrategies returns the strategies measured at level, in the order
// they were run.
func (r *Report) LevelStrategies(level string) []string {
	var out []string
	for _, m := range r.Measurements {
		if m.Level == level && !slices.Contains(out, m.Strategy) {
			out = append(out, m.Strategy)
		}
	}
	return out
}

// loadAvg returns the load averages of /proc/loadavg ("" elsewhere).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ReadReport reads a report written by WriteJSON, to print or plot it
// again.
func ReadReport(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("reading a bench report: %w", err)
	}
	if len(rep.Measurements) == 0 {
		return nil, errors.New("reading a bench report: no measurements")
	}
	return &rep, nil
}

// materialise writes each generated history to a JSON Lines file and
// returns targets that all have a Path.
func materialise(ctx context.Context, targets []Target, dir string) ([]Target, func(), error) {
	cleanup := func() {}
	var out []Target
	for _, t := range targets {
		if t.Generator == nil {
			if t.Path == "" {
				return nil, cleanup, fmt.Errorf("bench: history %q has neither a path nor a generator", t.Name)
			}
			out = append(out, t)
			continue
		}
		if dir == "" {
			d, err := os.MkdirTemp("", "hyperiso-bench-")
			if err != nil {
				return nil, cleanup, err
			}
			dir = d
			cleanup = func() { os.RemoveAll(d) }
		}
		h, err := t.Generator.Generate(ctx)
		if err != nil {
			cleanup()
			return nil, func() {}, fmt.Errorf("bench: generating %s: %w", t.Name, err)
		}
		file := filepath.Join(dir, fmt.Sprintf("gen-%03d.jsonl", len(out)))
		f, err := os.Create(file)
		if err == nil {
			err = jsonl.Write(f, h)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			cleanup()
			return nil, func() {}, fmt.Errorf("bench: writing the generated history %s: %w", t.Name, err)
		}
		t.Path = file
		out = append(out, t)
	}
	return out, cleanup, nil
}

// summarise fills m's summary fields from its samples.
func summarise(m *Measurement) {
	m.TimingsMS = map[string]float64{}
	m.Counters = map[string]int64{}
	var verdicts []string
	var walls []float64
	stages := map[string][]float64{}
	for _, s := range m.Samples {
		if !slices.Contains(verdicts, s.Verdict) {
			verdicts = append(verdicts, s.Verdict)
		}
		if m.Reason == "" {
			m.Reason = s.Reason
			if s.Error != "" {
				m.Reason = s.Error
			}
		}
		if s.Transactions > 0 {
			m.Transactions = s.Transactions
		}
		walls = append(walls, s.WallMS)
		m.PeakRSS = max(m.PeakRSS, s.MaxRSS)
		for k, v := range s.TimingsMS {
			stages[k] = append(stages[k], v)
		}
	}
	m.Verdict = strings.Join(verdicts, "/")
	if len(walls) == 0 {
		return
	}
	m.WallMedianMS = median(walls)
	m.WallMinMS = slices.Min(walls)
	for k, v := range stages {
		m.TimingsMS[k] = median(v)
	}
	// The counters of the run whose wall time is the (lower) median.
	idx := make([]int, len(m.Samples))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return m.Samples[idx[a]].WallMS < m.Samples[idx[b]].WallMS })
	for k, v := range m.Samples[idx[(len(idx)-1)/2]].Counters {
		m.Counters[k] = v
	}
}

// median returns the median of xs (the mean of the middle two for an even
// count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
