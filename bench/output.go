package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// StageOrder is the order of the pipeline stages in tables and CSV;
// stages not listed follow in name order.
var StageOrder = []string{"read", "validate", "build", "probe", "prune", "encode", "solve"}

// TableCounters are the counters WriteTable shows (those that some
// measurement reports); CSV and JSON hold all of them.
var TableCounters = []string{
	"variables", "clauses", "solver_iterations", "blocking_clauses",
	"decisions", "conflicts", "propagations", "learned",
}

// counterHeads abbreviates counter names in the table header.
var counterHeads = map[string]string{
	"solver_iterations": "iters",
	"blocking_clauses":  "blocking",
	"propagations":      "props",
}

// stages lists the stages that some measurement of r timed.
func (r *Report) stages() []string {
	set := map[string]bool{}
	for _, m := range r.Measurements {
		for k := range m.TimingsMS {
			set[k] = true
		}
	}
	var out []string
	for _, s := range StageOrder {
		if set[s] {
			out = append(out, s)
			delete(set, s)
		}
	}
	var rest []string
	for s := range set {
		rest = append(rest, s)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// counters lists the counters that some measurement of r reports: those
// of prefer first (in that order) and, if all is set, every other one in
// name order.
func (r *Report) counters(prefer []string, all bool) []string {
	set := map[string]bool{}
	for _, m := range r.Measurements {
		for k := range m.Counters {
			set[k] = true
		}
	}
	var out []string
	for _, c := range prefer {
		if set[c] {
			out = append(out, c)
			delete(set, c)
		}
	}
	if !all {
		return out
	}
	var rest []string
	for c := range set {
		rest = append(rest, c)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// WriteTable prints r as an aligned text table: one row per history ×
// level × strategy with the verdict, the history's size, the median and
// minimum wall time, the peak memory, the median time of each stage and
// the solver counters of TableCounters; then a legend.
func WriteTable(w io.Writer, r *Report) error {
	stages := r.stages()
	counters := r.counters(TableCounters, false)
	head := []string{"history", "level", "strategy", "verdict", "txns", "runs", "wall med", "wall min", "cpu", "peak RSS"}
	head = append(head, stages...)
	for _, c := range counters {
		if h, ok := counterHeads[c]; ok {
			c = h
		}
		head = append(head, c)
	}
	rows := [][]string{head}
	for _, m := range r.Measurements {
		cells := []string{m.History, m.Level, StrategyLabel(m.Strategy), m.Verdict, intOrDash(int64(m.Transactions)), strconv.Itoa(len(m.Samples))}
		if m.TimedOut() && r.Timeout > 0 {
			to := ">" + FormatMS(float64(r.Timeout.Microseconds())/1000)
			cells = append(cells, to, to)
		} else {
			cells = append(cells, FormatMS(m.WallMedianMS), FormatMS(m.WallMinMS))
		}
		cells = append(cells, FormatMS(m.CPUMedianMS()), FormatBytes(m.PeakRSS))
		for _, s := range stages {
			if v, ok := m.TimingsMS[s]; ok {
				cells = append(cells, FormatMS(v))
			} else {
				cells = append(cells, "-")
			}
		}
		for _, c := range counters {
			if v, ok := m.Counters[c]; ok {
				cells = append(cells, strconv.FormatInt(v, 10))
			} else {
				cells = append(cells, "-")
			}
		}
		rows = append(rows, cells)
	}
	if err := writeAligned(w, rows, 4); err != nil {
		return err
	}
	runs := "1 run"
	if r.Repeat > 1 {
		runs = fmt.Sprintf("median and minimum of %d runs", r.Repeat)
	}
	_, err := fmt.Fprintf(w, "\nwall: %s, each a child process, read included; cpu: the child's user+system time (median);\npeak RSS: the child's maximum resident set (getrusage); stages: median times; counters: of the median run; timeout: %s.\n",
		runs, timeoutString(r.Timeout))
	if h := r.Host; h.CPUs > 0 {
		fmt.Fprintf(w, "host: %s/%s, %d CPUs", h.OS, h.Arch, h.CPUs)
		if h.CPU != "" {
			fmt.Fprintf(w, " (%s)", h.CPU)
		}
		if h.MemoryMB > 0 {
			fmt.Fprintf(w, ", %.1f GB", float64(h.MemoryMB)/1024)
		}
		fmt.Fprintf(w, ", %s", h.GoVersion)
		if !r.Started.IsZero() {
			fmt.Fprintf(w, "; started %s, took %s", r.Started.UTC().Format(time.RFC3339), r.Duration.Round(time.Second))
		}
		if r.LoadStart != "" {
			fmt.Fprintf(w, "; load average %s at the start, %s at the end", r.LoadStart, r.LoadEnd)
		}
		fmt.Fprintln(w, ".")
	}
	for _, m := range r.Measurements {
		if m.Reason != "" && m.Verdict != "satisfied" && m.Verdict != "violated" {
			fmt.Fprintf(w, "%s %s %s: %s\n", m.History, m.Level, StrategyLabel(m.Strategy), m.Reason)
		}
	}
	return err
}

func timeoutString(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

func intOrDash(v int64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

// FormatMS prints a duration given in milliseconds with three significant
// digits: 0.412ms, 41.2ms, 4.12s, 41.2s, 412s.
func FormatMS(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.3fms", ms)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1fms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.0fms", ms)
	case ms < 10_000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms < 100_000:
		return fmt.Sprintf("%.1fs", ms/1000)
	}
	return fmt.Sprintf("%.0fs", ms/1000)
}

// FormatBytes prints a memory size in MB (GB from 10 GB on).
func FormatBytes(b int64) string {
	switch {
	case b <= 0:
		return "-"
	case b >= 10<<30:
		return fmt.Sprintf("%.1fGB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0fMB", float64(b)/(1<<20))
}

// WriteCSV writes r as CSV: a header row, then one row per history × level
// × strategy with the summary (times in milliseconds, memory in bytes),
// one column per stage (stage_<name>_ms, medians) and one per counter.
func WriteCSV(w io.Writer, r *Report) error {
	stages := r.stages()
	counters := r.counters(TableCounters, true)
	cw := csv.NewWriter(w)
	head := []string{"history", "path", "level", "strategy", "verdict", "reason", "transactions", "runs",
		"wall_median_ms", "wall_min_ms", "check_median_ms", "cpu_median_ms", "peak_rss_bytes", "timeout_ms"}
	for _, s := range stages {
		head = append(head, "stage_"+s+"_ms")
	}
	head = append(head, counters...)
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, m := range r.Measurements {
		var checks []float64
		for _, s := range m.Samples {
			checks = append(checks, s.CheckMS)
		}
		timeout := ""
		if m.TimedOut() {
			timeout = strconv.FormatInt(r.Timeout.Milliseconds(), 10)
		}
		rec := []string{m.History, m.Path, m.Level, m.Strategy, m.Verdict, m.Reason,
			strconv.Itoa(m.Transactions), strconv.Itoa(len(m.Samples)),
			f(m.WallMedianMS), f(m.WallMinMS), f(medianOrZero(checks)), f(m.CPUMedianMS()),
			strconv.FormatInt(m.PeakRSS, 10), timeout}
		for _, s := range stages {
			if v, ok := m.TimingsMS[s]; ok {
				rec = append(rec, f(v))
			} else {
				rec = append(rec, "")
			}
		}
		for _, c := range counters {
			if v, ok := m.Counters[c]; ok {
				rec = append(rec, strconv.FormatInt(v, 10))
			} else {
				rec = append(rec, "")
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func medianOrZero(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return median(xs)
}

// WriteJSON writes r, every run included, as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// AblationCell is one strategy's figures in an ablation row.
type AblationCell struct {
	Strategy string
	Verdict  string
	// Counter is the value of the ablation's counter; HasCounter is false
	// when the strategy does not report it.
	Counter    int64
	HasCounter bool
	// WallMS is the median wall time; TimedOut marks a lower bound.
	WallMS   float64
	TimedOut bool
	// Ratio is WallMS over the base strategy's (0 for the base itself or
	// when either is missing).
	Ratio float64
}

// AblationRow compares the base strategy with its ablations on one
// history at one level.
type AblationRow struct {
	History, Level string
	// Cells holds the base first, then each ablation; a strategy that was
	// not measured has an empty Verdict.
	Cells []AblationCell
}

// Ablation views r as an ablation study: for each history and level, the
// counter (e.g. "conflicts") and the wall time of base and of each
// ablation (a strategy that switches one of base's optimisations off).
func Ablation(r *Report, base string, ablations []string, counter string) []AblationRow {
	strats := append([]string{base}, ablations...)
	var rows []AblationRow
	for _, h := range r.Histories {
		for _, lv := range r.Levels {
			row := AblationRow{History: h, Level: lv}
			var baseWall float64
			for i, s := range strats {
				c := AblationCell{Strategy: s}
				if m := r.Find(h, lv, s); m != nil {
					c.Verdict, c.WallMS, c.TimedOut = m.Verdict, m.WallMedianMS, m.TimedOut()
					if c.TimedOut && r.Timeout > 0 {
						c.WallMS = float64(r.Timeout.Microseconds()) / 1000
					}
					c.Counter, c.HasCounter = m.Counters[counter]
					if i == 0 {
						baseWall = c.WallMS
					} else if baseWall > 0 && c.WallMS > 0 {
						c.Ratio = c.WallMS / baseWall
					}
				}
				row.Cells = append(row.Cells, c)
			}
			// A level none of these strategies decides (RC, RA, CC,
			// mixed; PSI against SER's) has no row.
			if slices.ContainsFunc(row.Cells, func(c AblationCell) bool { return c.Verdict != "" }) {
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// WriteAblation prints Ablation(r, base, ablations, counter) as an aligned
// table: per strategy the counter and the median wall time, with each
// ablation's time relative to the base's; "!" marks a verdict that differs
// from the base's.
func WriteAblation(w io.Writer, r *Report, base string, ablations []string, counter string) error {
	rows := Ablation(r, base, ablations, counter)
	head := []string{"history", "level"}
	for i, s := range append([]string{base}, ablations...) {
		if i == 0 {
			s += " (base)"
		}
		head = append(head, s+" "+counter, s+" time")
	}
	table := [][]string{head}
	for _, row := range rows {
		cells := []string{row.History, row.Level}
		baseVerdict := row.Cells[0].Verdict
		for i, c := range row.Cells {
			switch {
			case c.Verdict == "":
				cells = append(cells, "-", "-")
				continue
			case c.HasCounter:
				cells = append(cells, strconv.FormatInt(c.Counter, 10))
			default:
				cells = append(cells, "-")
			}
			t := FormatMS(c.WallMS)
			if c.TimedOut {
				t = ">" + t
			}
			if i > 0 && c.Ratio > 0 {
				t += fmt.Sprintf(" (%.2f×)", c.Ratio)
			}
			if i > 0 && baseVerdict != "" && c.Verdict != baseVerdict {
				t += " !" + c.Verdict
			}
			cells = append(cells, t)
		}
		table = append(table, cells)
	}
	if err := writeAligned(w, table, 2); err != nil {
		return err
	}
	if slices.ContainsFunc(rows, func(row AblationRow) bool {
		return slices.ContainsFunc(row.Cells, func(c AblationCell) bool { return c.TimedOut })
	}) {
		_, err := fmt.Fprintf(w, "\">\": timed out after the time shown.\n")
		return err
	}
	return nil
}

// writeAligned prints rows as columns separated by two spaces, the first
// left columns aligned left and the others right.
func writeAligned(w io.Writer, rows [][]string, left int) error {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < left {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad)
				b.WriteString(c)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
