package hermitage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// Checked are the levels every run is checked at, weakest first; each
// is stronger than the one before, so a history that violates one
// violates all that follow.
var Checked = []history.Level{history.RC, history.RA, history.CC, history.SI, history.SER}

// Cell is one run with hyperiso's verdicts.
type Cell struct {
	Run *Run
	// Verdicts are the verdicts at the Checked levels, in order.
	Verdicts []check.Verdict
	// Weakest is the weakest level the history violates, LevelNone when
	// it satisfies them all.
	Weakest history.Level
	// Anomalies are the anomaly types check reports at Weakest.
	Anomalies []string
}

// String is the matrix's entry: the weakest violated level, or "ok".
func (c Cell) String() string { return cellName(c.Weakest) }

func cellName(l history.Level) string {
	if l == history.LevelNone {
		return "ok"
	}
	return strings.ToUpper(l.String())
}

// Occurred reports whether sc's anomaly shows in the cell: the history
// violates the weakest level that forbids it.
func (c Cell) Occurred(sc Scenario) bool {
	return c.Weakest != history.LevelNone && sc.Level.AtLeast(c.Weakest)
}

// Judge checks run's history at each of the Checked levels (predicate
// reads included). An undecided check is an error: these histories are
// tiny.
func Judge(ctx context.Context, run *Run) (Cell, error) {
	c := Cell{Run: run}
	for _, l := range Checked {
		res, err := check.Check(ctx, run.History, l, check.Options{})
		if err != nil {
			return c, fmt.Errorf("%s at %s: checking %s: %w", run.Scenario, run.Level, l, err)
		}
		if res.Verdict == check.Unknown {
			return c, fmt.Errorf("%s at %s: checking %s: unknown: %s", run.Scenario, run.Level, l, res.Reason)
		}
		c.Verdicts = append(c.Verdicts, res.Verdict)
		if res.Verdict == check.Violated && c.Weakest == history.LevelNone {
			c.Weakest = l
			seen := map[string]bool{}
			for _, a := range res.Anomalies {
				if !seen[a.Type] {
					seen[a.Type] = true
					c.Anomalies = append(c.Anomalies, a.Type)
				}
			}
		}
	}
	return c, nil
}

// Matrix is every scenario run at every level of one target.
type Matrix struct {
	Kind, Server string
	Levels       []Level
	Scenarios    []Scenario
	// Cells[i][j] is Scenarios[j] at Levels[i].
	Cells [][]Cell
	// Elapsed is the time the runs and checks took.
	Elapsed time.Duration
}

// Collect runs each scenario at each level of tg, parallel runs at a time
// (each on its own table), and judges them.
func Collect(ctx context.Context, tg *Target, scenarios []Scenario, levels []Level, parallel int, opt Options) (*Matrix, error) {
	if parallel < 1 {
		parallel = 1
	}
	start := time.Now()
	m := &Matrix{Kind: tg.Kind, Server: tg.Server, Levels: levels, Scenarios: scenarios, Cells: make([][]Cell, len(levels))}
	for i := range m.Cells {
		m.Cells[i] = make([]Cell, len(scenarios))
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, parallel)
	)
	for i, lv := range levels {
		for j, sc := range scenarios {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				run, err := tg.Run(ctx, sc, lv, opt)
				var c Cell
				if err == nil {
					c, err = Judge(ctx, run)
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", tg.Kind, err))
					return
				}
				m.Cells[i][j] = c
			})
		}
	}
	wg.Wait()
	m.Elapsed = time.Since(start)
	return m, errors.Join(errs...)
}

// Rows returns, per level, the cells' entries in scenario order.
func (m *Matrix) Rows() map[string][]string {
	rows := map[string][]string{}
	for i, lv := range m.Levels {
		for _, c := range m.Cells[i] {
			rows[lv.Name] = append(rows[lv.Name], c.String())
		}
	}
	return rows
}

// Format writes the matrix as a table, then what each run that aborted
// or waited did, then the legend.
func (m *Matrix) Format(w io.Writer) error {
	fmt.Fprintf(w, "%s: Hermitage's scenarios, each history checked at RC, RA, CC, SI, SER (predicate scenarios: RA up)\n", m.Server)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "level")
	for _, sc := range m.Scenarios {
		fmt.Fprint(tw, "\t"+sc.Name)
	}
	fmt.Fprintln(tw)
	for i, lv := range m.Levels {
		fmt.Fprint(tw, lv.Name)
		for j, c := range m.Cells[i] {
			mark := ""
			if c.Occurred(m.Scenarios[j]) {
				mark = "*"
			}
			fmt.Fprint(tw, "\t"+c.String()+mark)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nruns that waited or did not commit:")
	for i, lv := range m.Levels {
		for _, c := range m.Cells[i] {
			r := c.Run
			if r == nil || (len(r.Waited) == 0 && r.Aborts() == "") {
				continue
			}
			var parts []string
			if len(r.Waited) > 0 {
				parts = append(parts, "waited: "+strings.Join(r.Waited, ", "))
			}
			if a := r.Aborts(); a != "" {
				parts = append(parts, a)
			}
			fmt.Fprintf(w, "  %s %s: %s\n", lv.Name, r.Scenario, strings.Join(parts, "; "))
		}
	}
	var diffs []string
	for i, lv := range m.Levels {
		for j, sc := range m.Scenarios {
			c := m.Cells[i][j]
			occurs, documented := DocumentedOccurs(m.Kind, lv.Name, sc)
			if c.Run == nil || !documented || occurs == c.Occurred(sc) {
				continue
			}
			key := m.Kind + "/" + lv.Name + "/" + sc.Name
			why, ok := Differences[key]
			if !ok {
				why = "not explained in docs/hermitage.md"
			}
			diffs = append(diffs, fmt.Sprintf("  %s: Hermitage documents the anomaly as %s; %s", key, docWord(occurs), why))
		}
	}
	fmt.Fprintf(w, "\ndifferences from Hermitage's documentation: %d\n", len(diffs))
	for _, d := range diffs {
		fmt.Fprintln(w, d)
	}
	fmt.Fprintf(w, "\n%s\n", Legend)
	_, err := fmt.Fprintf(w, "%d runs in %s\n", len(m.Levels)*len(m.Scenarios), m.Elapsed.Round(time.Millisecond))
	return err
}

// Legend explains the matrix's entries.
const Legend = `Each entry is the weakest level the recorded history violates (RC < RA <
CC < SI < SER; it violates every stronger one too), "ok" when it satisfies
all five. "*" marks the scenario's anomaly: the history violates the
weakest level that forbids it (G1a, G1b, G1c, OTV: RC; G0, which shows as
the observer's fractured read: RA; P4*, G-single*: SI; G2-item: SER;
PMP*: RA; G2*: SER). The predicate scenarios (PMP*, G2*) are checked from
RA up: the checker does not decide predicate reads at RC yet.`

func docWord(occurs bool) string {
	if occurs {
		return "possible"
	}
	return "prevented"
}
