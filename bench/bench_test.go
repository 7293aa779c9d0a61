package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

// workerEnv makes the test binary act as a worker (see TestMain): "serve"
// runs jobs, "hang" never answers, "crash" fails at once.
const workerEnv = "HYPERISO_BENCH_TEST_WORKER"

func TestMain(m *testing.M) {
	switch os.Getenv(workerEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		if err := ServeWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	case "hang":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "crash":
		fmt.Fprintln(os.Stderr, "worker exploded")
		os.Exit(7)
	}
}

// config runs the test binary itself as the worker.
func config(mode string) Config {
	return Config{Command: []string{os.Args[0]}, Env: []string{workerEnv + "=" + mode}}
}

const testdata = "../testdata"

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("RH/hist-00000/history.bincode", "x")
	write("BL/hist-00000/history.bincode", "x")
	write("tpcc/T1.log", "x")
	write("tpcc/T2.log", "x")
	write("more/a.jsonl", `{"session":1,"ops":[]}`+"\n")
	write("more/README.md", "# not a history\n")
	write("more/.hidden.jsonl", `{"session":1,"ops":[]}`+"\n")

	ts, err := Expand([]string{dir, filepath.Join(testdata, "bank.jsonl")})
	require.NoError(t, err)
	var names, paths []string
	for _, tg := range ts {
		names = append(names, tg.Name)
		paths = append(paths, tg.Path)
	}
	assert.Equal(t, []string{"BL/hist-00000", "RH/hist-00000", "a.jsonl", "tpcc", "bank.jsonl"}, names)
	assert.Equal(t, filepath.Join(dir, "tpcc"), paths[3], "a Cobra log directory is one history")
	assert.Equal(t, filepath.Join(dir, "RH/hist-00000"), paths[1], "a dbcop directory is one history")

	ts, err = Expand([]string{filepath.Join(dir, "RH/hist-00000")})
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, "RH/hist-00000", ts[0].Name, "a hist-NNNNN folder is named with its parent")

	_, err = Expand([]string{filepath.Join(dir, "missing")})
	require.Error(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	_, err = Expand([]string{filepath.Join(dir, "empty")})
	require.ErrorContains(t, err, "no history found")
}

func TestExpandGenerator(t *testing.T) {
	RegisterGenerator("test-gen", func(spec string) (Generator, error) {
		if spec == "bad" {
			return nil, errors.New("bad spec")
		}
		return GeneratorFunc("bank-"+spec, func(context.Context) (*history.History, error) {
			return formats.Read(filepath.Join(testdata, "bank.jsonl"), formats.Options{})
		}), nil
	})
	require.Panics(t, func() { RegisterGenerator("test-gen", nil) })
	ts, err := Expand([]string{"gen:test-gen:x"})
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, "gen:bank-x", ts[0].Name)
	assert.NotNil(t, ts[0].Generator)
	_, err = Expand([]string{"gen:test-gen:bad"})
	require.ErrorContains(t, err, "bad spec")
	_, err = Expand([]string{"gen:nope"})
	require.ErrorContains(t, err, `unknown generator "nope"`)
	assert.Contains(t, GeneratorNames(), "test-gen")
}

// runStrong benchmarks two tiny histories with both lazy strategies at SER
// and SI, twice each, every run in a child process.
func runStrong(t *testing.T) *Report {
	t.Helper()
	ts, err := Expand([]string{filepath.Join(testdata, "bank.jsonl"), filepath.Join(testdata, "strong/write-skew.jsonl")})
	require.NoError(t, err)
	cfg := config("serve")
	cfg.Strategies = []string{"lazy-gini", "lazy-gophersat"}
	cfg.Levels = []string{"ser", "si"}
	cfg.Repeat = 2
	cfg.Timeout = time.Minute
	var events []Event
	cfg.Progress = func(ev Event) { events = append(events, ev) }
	rep, err := Run(context.Background(), ts, cfg)
	require.NoError(t, err)
	require.Len(t, events, 2*16)
	assert.Equal(t, 16, events[len(events)-1].Done)
	assert.Equal(t, 16, events[len(events)-1].Total)
	return rep
}

func TestRunMeasuresChildProcesses(t *testing.T) {
	rep := runStrong(t)
	require.Len(t, rep.Measurements, 8)
	assert.Equal(t, []string{"bank.jsonl", "write-skew.jsonl"}, rep.Histories)
	want := map[string]string{
		"bank.jsonl ser": "satisfied", "bank.jsonl si": "satisfied",
		"write-skew.jsonl ser": "violated", "write-skew.jsonl si": "satisfied",
	}
	for _, m := range rep.Measurements {
		name := m.History + " " + m.Level + " " + m.Strategy
		assert.Equal(t, want[m.History+" "+m.Level], m.Verdict, name)
		require.Len(t, m.Samples, 2, name)
		assert.Positive(t, m.WallMinMS, name)
		assert.LessOrEqual(t, m.WallMinMS, m.WallMedianMS, name)
		assert.Greater(t, m.PeakRSS, int64(1<<20), "%s: a Go process resides in more than 1 MB", name)
		assert.Less(t, m.PeakRSS, int64(1<<30), name)
		assert.Contains(t, m.TimingsMS, "read", name)
		assert.Contains(t, m.TimingsMS, "validate", name)
		assert.Positive(t, m.Transactions, name)
		for _, s := range m.Samples {
			assert.Positive(t, s.UserMS+s.SysMS, name)
			assert.GreaterOrEqual(t, s.WallMS, s.CheckMS, "%s: the process outlasts its check", name)
		}
		if m.Verdict == "satisfied" {
			assert.Contains(t, m.TimingsMS, "solve", name)
			assert.Contains(t, m.Counters, "variables", name)
			assert.Contains(t, m.Counters, "solver_iterations", name)
		}
	}
	assert.Same(t, &rep.Measurements[3], rep.Find("bank.jsonl", "si", "lazy-gophersat"))
	assert.Nil(t, rep.Find("bank.jsonl", "cc", "lazy-gini"))
	assert.Positive(t, rep.Host.CPUs)
	assert.NotEmpty(t, rep.Host.GoVersion)

	t.Run("table", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, WriteTable(&b, rep))
		lines := strings.Split(b.String(), "\n")
		require.GreaterOrEqual(t, len(lines), 9)
		head := lines[0]
		for _, col := range []string{"history", "level", "strategy", "verdict", "wall med", "wall min", "cpu", "peak RSS", "read", "solve", "variables", "iters"} {
			assert.Contains(t, head, col)
		}
		// Aligned: every row of the table is as wide as the header.
		for _, l := range lines[1:9] {
			assert.Equal(t, len([]rune(head)), len([]rune(l)), l)
		}
		assert.Regexp(t, `(?m)^write-skew\.jsonl\s+ser\s+lazy-gini\s+violated\s`, b.String())
		assert.Contains(t, b.String(), "median and minimum of 2 runs")
	})
	t.Run("csv", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, WriteCSV(&b, rep))
		recs, err := csv.NewReader(&b).ReadAll()
		require.NoError(t, err, "the CSV is well-formed and rectangular")
		require.Len(t, recs, 9)
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, h := range []string{"history", "level", "strategy", "verdict", "wall_median_ms", "wall_min_ms", "peak_rss_bytes", "stage_read_ms", "stage_solve_ms", "variables", "clauses", "solver_iterations"} {
			require.Contains(t, col, h)
		}
		assert.Equal(t, "bank.jsonl", recs[1][col["history"]])
		assert.Equal(t, "violated", recs[5][col["verdict"]])
		assert.Regexp(t, `^[0-9]+$`, recs[1][col["peak_rss_bytes"]])
		assert.Regexp(t, `^[0-9]+\.[0-9]{3}$`, recs[1][col["wall_median_ms"]])
	})
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, WriteJSON(&b, rep))
		back, err := ReadReport(&b)
		require.NoError(t, err)
		assert.Equal(t, rep.Measurements, back.Measurements)
		assert.Equal(t, rep.Host, back.Host)
		assert.NotEmpty(t, back.LoadEnd)
		_, err = ReadReport(strings.NewReader(`{"measurements":[]}`))
		require.Error(t, err)
	})
	t.Run("svg", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bench.svg")
		require.NoError(t, WritePlot(path, rep))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		dec := xml.NewDecoder(bytes.NewReader(data))
		var root string
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "the SVG is well-formed XML")
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		assert.Equal(t, "svg", root)
		for _, s := range []string{"lazy-gini", "lazy-gophersat", "write-skew.jsonl", "SER", "SI"} {
			assert.Contains(t, string(data), s)
		}
	})
	t.Run("png", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bench.png")
		require.NoError(t, WritePlot(path, rep))
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		cfg, err := png.DecodeConfig(f)
		require.NoError(t, err)
		assert.Greater(t, cfg.Width, 300)
		assert.Greater(t, cfg.Height, 300)
	})
	t.Run("bad plot format", func(t *testing.T) {
		require.ErrorContains(t, WritePlot(filepath.Join(t.TempDir(), "bench.gif"), rep), "plot format")
	})
	t.Run("ablation", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, WriteAblation(&b, rep, "lazy-gini", []string{"lazy-gophersat"}, "blocking_clauses"))
		out := b.String()
		assert.Contains(t, out, "lazy-gini (base) blocking_clauses")
		assert.Contains(t, out, "lazy-gophersat time")
		assert.Regexp(t, `(?m)^write-skew\.jsonl\s+si\s+0\s+\S+\s+0\s+\S+ \([0-9.]+×\)\s*$`, out)
	})
}

func TestAblationView(t *testing.T) {
	m := func(strat string, conflicts int64, wall float64, verdict string) Measurement {
		return Measurement{History: "h", Level: "ser", Strategy: strat, Verdict: verdict, WallMedianMS: wall,
			Counters: map[string]int64{"conflicts": conflicts}, Samples: []Sample{{Verdict: verdict, WallMS: wall}}}
	}
	rep := &Report{
		Histories: []string{"h"}, Levels: []string{"ser"}, Strategies: []string{"base", "no-a", "no-b"}, Timeout: time.Second,
		Measurements: []Measurement{
			m("base", 10, 100, "satisfied"),
			m("no-a", 40, 200, "satisfied"),
			m("no-b", 7, 1001, "timeout"),
		},
	}
	rows := Ablation(rep, "base", []string{"no-a", "no-b", "no-c"}, "conflicts")
	require.Len(t, rows, 1)
	c := rows[0].Cells
	require.Len(t, c, 4)
	assert.Equal(t, int64(10), c[0].Counter)
	assert.InDelta(t, 2.0, c[1].Ratio, 1e-9)
	assert.True(t, c[2].TimedOut)
	assert.InDelta(t, 1000, c[2].WallMS, 1e-9, "a timeout counts as the timeout")
	assert.Empty(t, c[3].Verdict, "no-c was not measured")
	var b bytes.Buffer
	require.NoError(t, WriteAblation(&b, rep, "base", []string{"no-a", "no-b", "no-c"}, "conflicts"))
	out := b.String()
	assert.Contains(t, out, "200ms (2.00×)")
	assert.Contains(t, out, ">1.00s (10.00×) !timeout")
	assert.Contains(t, out, "timed out")
}

func TestTimeoutKillsTheChild(t *testing.T) {
	cfg := config("hang")
	cfg.Strategies = []string{"lazy-gini"}
	cfg.Repeat = 3
	cfg.Timeout = 200 * time.Millisecond
	cfg.KillGrace = 100 * time.Millisecond
	start := time.Now()
	rep, err := Run(context.Background(), []Target{{Name: "bank", Path: filepath.Join(testdata, "bank.jsonl")}}, cfg)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	m := rep.Measurements[0]
	assert.Equal(t, VerdictTimeout, m.Verdict)
	assert.True(t, m.TimedOut())
	require.Len(t, m.Samples, 1, "the repeats after a timeout are skipped")
	assert.True(t, m.Samples[0].Killed)
	assert.GreaterOrEqual(t, m.Samples[0].WallMS, 300.0)

	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, rep))
	assert.Contains(t, b.String(), ">200ms")
	b.Reset()
	require.NoError(t, WriteCSV(&b, rep))
	assert.Contains(t, b.String(), ",timeout,")
	require.NoError(t, WritePlot(filepath.Join(t.TempDir(), "to.svg"), rep), "a timeout is drawn as a hollow bar")
}

func TestWorkerReportsItsOwnTimeout(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	rep := RunJob(ctx, Job{Path: filepath.Join(testdata, "bank.jsonl"), Level: "ser", Strategy: "lazy-gini", TimeoutMS: 1})
	assert.Equal(t, VerdictTimeout, rep.Verdict)
	assert.Equal(t, "read", rep.Stage)
	assert.Contains(t, rep.Reason, "timeout after 1ms during read")
	assert.Positive(t, rep.Transactions)
}

func TestRunJobInProcess(t *testing.T) {
	rep := RunJob(context.Background(), Job{Path: filepath.Join(testdata, "strong/write-skew.jsonl"), Level: "si", Strategy: "lazy-gini"})
	assert.Equal(t, "satisfied", rep.Verdict)
	assert.Empty(t, rep.Stage)
	assert.Contains(t, rep.TimingsMS, "solve")
	assert.GreaterOrEqual(t, rep.CheckMS, rep.TimingsMS["read"])

	rep = RunJob(context.Background(), Job{Path: filepath.Join(testdata, "bank.jsonl"), Level: "ser", Strategy: "no-such"})
	assert.Equal(t, VerdictError, rep.Verdict)
	assert.Contains(t, rep.Error, `unknown strategy "no-such"`)
	rep = RunJob(context.Background(), Job{Path: filepath.Join(testdata, "bank.jsonl"), Level: "xx"})
	assert.Equal(t, VerdictError, rep.Verdict)
	rep = RunJob(context.Background(), Job{Path: filepath.Join(testdata, "missing.jsonl"), Level: "ser"})
	assert.Equal(t, VerdictError, rep.Verdict)

	var out bytes.Buffer
	require.Error(t, ServeWorker(context.Background(), strings.NewReader(`{"nope":1}`), &out), "unknown job fields are refused")
}

func TestFailedRunsAreErrors(t *testing.T) {
	bank := []Target{{Name: "bank", Path: filepath.Join(testdata, "bank.jsonl")}}
	cfg := config("crash")
	cfg.Strategies = []string{"lazy-gini"}
	rep, err := Run(context.Background(), bank, cfg)
	require.NoError(t, err)
	m := rep.Measurements[0]
	assert.Equal(t, VerdictError, m.Verdict)
	assert.Contains(t, m.Reason, "worker exploded")
	assert.Contains(t, m.Reason, "exit status 7")

	// A strategy no level takes is refused before anything runs.
	cfg = config("serve")
	cfg.Strategies = []string{"no-such"}
	_, err = Run(context.Background(), bank, cfg)
	require.ErrorContains(t, err, "none of the strategies no-such decides ser")

	// A worker that refuses the job: an error row.
	cfg = config("serve")
	cfg.Strategies = []string{"lazy-gini"}
	cfg.Levels = []string{"ser"}
	rep, err = Run(context.Background(), []Target{{Name: "bank", Path: filepath.Join(t.TempDir(), "missing.jsonl")}}, cfg)
	require.NoError(t, err)
	assert.Equal(t, VerdictError, rep.Measurements[0].Verdict)
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, rep))
	assert.Contains(t, b.String(), "bank ser lazy-gini: ")

	cfg = Config{Command: []string{filepath.Join(t.TempDir(), "no-binary")}, Strategies: []string{"lazy-gini"}}
	rep, err = Run(context.Background(), bank, cfg)
	require.NoError(t, err)
	assert.Contains(t, rep.Measurements[0].Reason, "starting the worker")

	_, err = Run(context.Background(), nil, cfg)
	require.Error(t, err)
	_, err = Run(context.Background(), bank, Config{Levels: []string{"psi"}, Strategies: []string{"lazy-gini"}})
	require.ErrorContains(t, err, "none of the strategies lazy-gini decides psi")
	_, err = Run(context.Background(), append(bank, bank[0]), cfg)
	require.ErrorContains(t, err, "unique")
}

func TestCancelStopsTheBenchmark(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := config("serve")
	cfg.Strategies = []string{"lazy-gini", "lazy-gophersat"}
	cfg.Progress = func(ev Event) {
		if ev.Sample != nil {
			cancel()
		}
	}
	rep, err := Run(ctx, []Target{{Name: "bank", Path: filepath.Join(testdata, "bank.jsonl")}}, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	assert.Len(t, rep.Measurements, 1, "what was measured before the cancel is kept")
}

func TestGeneratedHistories(t *testing.T) {
	calls := 0
	gen := GeneratorFunc("bank", func(context.Context) (*history.History, error) {
		calls++
		return formats.Read(filepath.Join(testdata, "bank.jsonl"), formats.Options{})
	})
	dir := t.TempDir()
	cfg := config("serve")
	cfg.Strategies = []string{"lazy-gini"}
	cfg.Repeat = 2
	cfg.TempDir = dir
	rep, err := Run(context.Background(), []Target{{Name: "gen:bank", Generator: gen}}, cfg)
	require.NoError(t, err)
	assert.Equal(t, 1, calls, "generated once, measured twice")
	m := rep.Measurements[0]
	assert.Equal(t, "satisfied", m.Verdict)
	assert.Len(t, m.Samples, 2)
	assert.Equal(t, dir, filepath.Dir(m.Path))

	failing := GeneratorFunc("bad", func(context.Context) (*history.History, error) { return nil, errors.New("no store") })
	_, err = Run(context.Background(), []Target{{Name: "bad", Generator: failing}}, cfg)
	require.ErrorContains(t, err, "no store")
}

func TestFormatting(t *testing.T) {
	for ms, want := range map[float64]string{
		0.4123: "0.412ms", 4.123: "4.12ms", 41.23: "41.2ms", 412.3: "412ms",
		4123: "4.12s", 41230: "41.2s", 412300: "412s",
	} {
		assert.Equal(t, want, FormatMS(ms))
	}
	assert.Equal(t, "-", FormatBytes(0))
	assert.Equal(t, "56MB", FormatBytes(56<<20))
	assert.Equal(t, "12.5GB", FormatBytes(25<<29))
	assert.InDelta(t, 2.5, median([]float64{4, 1, 2, 3}), 1e-9)
	assert.InDelta(t, 2, median([]float64{3, 1, 2}), 1e-9)
}

func TestNamesAreShortestUniqueSuffixes(t *testing.T) {
	ts := []Target{
		{Path: "/d/bench/RH-10k/hist-00000"},
		{Path: "/d/bench/BL-10k/hist-00000"},
		{Path: "/d/bench/tpcc-10k"},
		{Path: "/x/a/same"},
		{Path: "/y/a/same"},
		{Name: "gen:g"},
	}
	nameTargets(ts)
	var names []string
	for _, tg := range ts {
		names = append(names, tg.Name)
	}
	assert.Equal(t, []string{"RH-10k/hist-00000", "BL-10k/hist-00000", "tpcc-10k", "x/a/same", "y/a/same", "gen:g"}, names)
}

// Each level runs its own table's strategies: all of them by default,
// those asked for otherwise; a level decided one way runs once, without a
// strategy (issue 31: bench --level psi kept SER's strategies).
func TestLevelStrategies(t *testing.T) {
	ser, psi, pc, rc := history.SER.String(), history.PSI.String(), history.PC.String(), history.RC.String()
	assert.Equal(t, check.StrategyNames(history.PSI), LevelStrategies(psi, nil))
	assert.Equal(t, check.StrategyNames(history.SER), LevelStrategies(ser, nil))
	assert.Equal(t, []string{""}, LevelStrategies(rc, nil))
	assert.Equal(t, []string{""}, LevelStrategies(rc, []string{"lazy-gini"}))
	chosen := []string{"lazy-gini", check.StrategyNames(history.PSI)[0]}
	assert.Equal(t, []string{"lazy-gini"}, LevelStrategies(ser, chosen))
	assert.Equal(t, chosen[1:], LevelStrategies(psi, chosen))
	assert.Equal(t, 3, PlannedRuns([]string{ser, psi, rc}, chosen))
	assert.Equal(t, chosen, UsedStrategies([]string{ser, psi, rc}, chosen))
	require.NoError(t, CheckStrategies([]string{ser, psi, rc}, chosen))
	require.NoError(t, CheckStrategies([]string{psi, pc, rc}, nil))
	require.ErrorContains(t, CheckStrategies([]string{ser, pc}, chosen), "decides pc")
	require.ErrorContains(t, CheckStrategies([]string{ser, rc}, chosen), "decides none of the levels")
	assert.Equal(t, "-", StrategyLabel(""))
}
