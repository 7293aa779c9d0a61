package main

// check with several levels (--level all, --level ser,si,rc) and several
// files: the history is read once, each level decided on it, and the
// verdicts the level table's implications give are taken from a level
// already decided rather than checked again (README "Several levels in one
// run").

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong"
)

// allLevels is the --level value that asks for every level of the table,
// and check's default.
const allLevels = "all"

// levelsHelp says, for check --help, what several levels mean.
const levelsHelp = `With --level ` + allLevels + ` (the default) or a comma-separated list, the history is
read and validated once and each level decided on it; a verdict that
follows from another by the level table's implications (a level satisfied:
every level it implies is; a level violated: every level that implies it
is) is taken from it, marked "implied by". ` + allLevels + ` skips mixed unless every
transaction has a level (declared, or --default-level) and checks
strict-ser only when the history has real time, and says so. The report
gives each level's verdict, the strongest levels satisfied and each
violated level's anomalies; --edn gives Elle's :not (the weakest models
violated) and :also-not (those stronger). Exit status: 1 when any level is
violated, else 3 when any is unknown, else 0. Several files: a report
each, then a table of their verdicts.`

// levelRequest is what --level asked: levels in the table's order
// (strongest first), all when --level all.
type levelRequest struct {
	levels []history.Level
	all    bool
}

// single reports whether one level was asked: its report is check's
// single-level report, unchanged.
func (r levelRequest) single() bool { return !r.all && len(r.levels) == 1 }

// parseLevelRequest reads --level: all, one level or a comma-separated
// list of them.
func parseLevelRequest(s string) (levelRequest, error) {
	if s == allLevels {
		var req levelRequest
		for _, r := range history.Levels {
			req.levels = append(req.levels, r.Level)
		}
		req.all = true
		return req, nil
	}
	var req levelRequest
	for _, name := range strings.Split(s, ",") {
		l, ok := history.ParseLevel(strings.TrimSpace(name))
		if !ok {
			return req, fail(exitBadInput, "--level must be %s, one of %s, or a comma-separated list of them (got %q)", allLevels, history.LevelList(", ", nil), s)
		}
		if !slices.Contains(req.levels, l) {
			req.levels = append(req.levels, l)
		}
	}
	slices.SortFunc(req.levels, func(a, b history.Level) int { return tableIndex(a) - tableIndex(b) })
	return req, nil
}

// tableIndex is l's row number in history.Levels (strongest first).
func tableIndex(l history.Level) int {
	return slices.IndexFunc(history.Levels, func(r history.LevelRow) bool { return r.Level == l })
}

// checkStrategy refuses a --strategy that no asked level takes. One level
// is checked by loadCheckInput, as before.
func (r levelRequest) checkStrategy(s string) error {
	if s == "" || r.single() {
		return nil
	}
	var known []string
	for _, l := range r.levels {
		for _, n := range check.StrategyNames(l) {
			if n == s {
				return nil
			}
			if !slices.Contains(known, n) {
				known = append(known, n)
			}
		}
	}
	return fail(exitBadInput, "--strategy must be one of %s, the strategies of the levels asked (got %q)", strings.Join(known, ", "), s)
}

// strategyFor is the strategy of level l when s was given for several
// levels: s if l's table holds it, else l's default.
func strategyFor(l history.Level, s string) string {
	if slices.Contains(check.StrategyNames(l), s) {
		return s
	}
	return ""
}

// checkRun is one check command: what it asks and how it reports.
type checkRun struct {
	rf      *readFlags
	req     levelRequest
	opt     check.Options
	timeout time.Duration
	asJSON  bool
	asEDN   bool
	verbose bool
	stderr  io.Writer
	cmd     *cobra.Command
}

// fileReport is the outcome of one file: one level's Result or several
// levels' report.
type fileReport struct {
	single *check.Result
	multi  *levelsReport
}

func (r *fileReport) exitCode() int {
	if r.single != nil {
		return verdictCode(r.single.Verdict)
	}
	return r.multi.exitCode()
}

func verdictCode(v check.Verdict) int {
	switch v {
	case check.Satisfied:
		return exitSatisfied
	case check.Violated:
		return exitViolated
	}
	return exitUnknown
}

// worse combines two exit statuses of one run: bad input (a file not
// checked) over violated over unknown over satisfied.
func worse(a, b int) int {
	rank := func(c int) int {
		return slices.Index([]int{exitSatisfied, exitUnknown, exitViolated, exitBadInput}, c)
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// file checks path at every level asked. Reader warnings go to standard
// error, except with --json, whose report holds them.
func (cr *checkRun) file(path string) (*fileReport, error) {
	timeout := cr.timeout.String()
	first := cr.req.levels[0]
	strategy := cr.opt.Strategy
	if !cr.req.single() {
		strategy = "" // checked by checkStrategy; each level takes its own
	}
	in, err := loadCheckInput(cr.cmd.Context(), cr.rf, path, first.String(), strategy, cr.timeout)
	if err != nil {
		return nil, err
	}
	defer in.cancel()
	if cr.req.single() {
		res, err := in.check(path, cr.opt)
		if err := cr.settle(in, path, res, err, timeout); err != nil {
			return nil, err
		}
		res.TimingsMS["read"] = in.readMS
		if !cr.asJSON {
			printWarnings(cr.stderr, in.h, seeReport)
		}
		return &fileReport{single: res}, nil
	}
	rep, err := cr.levels(in, path, timeout)
	if err != nil {
		return nil, err
	}
	if !cr.asJSON {
		printWarnings(cr.stderr, in.h, seeReport)
	}
	return &fileReport{multi: rep}, nil
}

// settle turns a check's error into the verdict or the command's error, as
// check has always: a history that cannot be checked is bad input, a
// deadline an unknown verdict.
func (cr *checkRun) settle(in *checkInput, path string, res *check.Result, err error, timeout string) error {
	switch {
	case errors.Is(err, check.ErrUnavailable), errors.Is(err, check.ErrInput):
		printWarnings(cr.stderr, in.h, seeStats)
		return fail(exitBadInput, "%s: %v", path, err)
	case errors.Is(err, context.DeadlineExceeded):
		res.Verdict, res.Reason = check.Unknown, fmt.Sprintf("timeout after %s during %s", timeout, res.Stage)
	case err != nil:
		printWarnings(cr.stderr, in.h, seeStats)
		return fail(exitUnknown, "%s: %v", path, err)
	}
	return nil
}

// levelsReport is the report of several levels on one history; its JSON
// form is documented in README ("Several levels in one run").
type levelsReport struct {
	Schema  int           `json:"hyperiso_report"`
	Source  string        `json:"source"`
	Format  string        `json:"format"`
	History history.Stats `json:"history"`
	// TimingsMS holds what the levels share: reading.
	TimingsMS map[string]float64 `json:"timings_ms"`
	// Levels are the levels decided, strongest first.
	Levels []levelEntry `json:"levels"`
	// Skipped are the levels --level all did not check and no implication
	// decided, with why.
	Skipped []skippedLevel `json:"skipped,omitempty"`
	// StrongestSatisfied are the satisfied levels no other satisfied
	// level implies (several when they are incomparable, as PC and PSI).
	StrongestSatisfied []string `json:"strongest_satisfied"`
	// WeakestViolated are the violated levels that imply no other
	// violated level (Elle's :not).
	WeakestViolated []string         `json:"weakest_violated"`
	Warnings        []string         `json:"warnings,omitempty"`
	Dropped         *history.Dropped `json:"dropped,omitempty"`
}

// levelEntry is one level's Result, with the level it was implied by when
// it was not checked itself. An implied entry has the implying level's
// anomalies (violated) and no witness, timings or counters of its own.
type levelEntry struct {
	*check.Result
	ImpliedBy string `json:"implied_by,omitempty"`
}

type skippedLevel struct {
	Level  string `json:"level"`
	Reason string `json:"reason"`
}

func (r *levelsReport) level(l history.Level) (levelEntry, bool) {
	for _, e := range r.Levels {
		if e.Level == l.String() {
			return e, true
		}
	}
	return levelEntry{}, false
}

func (r *levelsReport) exitCode() int {
	code := exitSatisfied
	for _, e := range r.Levels {
		code = worse(code, verdictCode(e.Verdict))
	}
	return code
}

// skipReason says why --level all does not check l on in's history, or "".
func (cr *checkRun) skipReason(in *checkInput, l history.Level) string {
	if !cr.req.all || in.h == nil {
		return ""
	}
	h := in.h
	switch {
	case l == history.Mixed && cr.opt.RealTime:
		return "mixed levels take no real-time order (--realtime)"
	case l == history.Mixed:
		if _, err := strong.Levels(h, cr.opt.DefaultLevel); err != nil {
			return err.Error() + " (--default-level L checks it)"
		}
	case rowOf(l).RealTime:
		for t := 1; t < len(h.Txns); t++ {
			if h.Txns[t].Timed {
				return ""
			}
		}
		return "no transaction has invocation and completion times (Jepsen :index or :time, JSONL \"time\")"
	}
	return ""
}

func rowOf(l history.Level) history.LevelRow {
	r, _ := l.Row()
	return r
}

// levels decides every level asked on in's history. Each level not yet
// decided is checked, the cheap engine's (saturation) first, then the
// others strongest first; each verdict decides, by the table's
// implications, the levels it settles.
func (cr *checkRun) levels(in *checkInput, path, timeout string) (*levelsReport, error) {
	in.keepDisplay = true
	defer stateOf(in.ctx).display.finish()
	type decided struct {
		res *check.Result
		by  history.Level
	}
	got := map[history.Level]decided{}
	skip := map[history.Level]string{}
	plan := slices.Clone(cr.req.levels)
	slices.SortStableFunc(plan, func(a, b history.Level) int {
		wa, wb := rowOf(a).Engine == history.Weak, rowOf(b).Engine == history.Weak
		switch {
		case wa && !wb:
			return -1
		case wb && !wa:
			return 1
		}
		return 0
	})
	stop := func() string {
		if e, over := memoryCause(in.ctx); over {
			return e.Error()
		}
		if errors.Is(in.ctx.Err(), context.Canceled) {
			return "interrupted during " + stateOf(in.ctx).get()
		}
		return fmt.Sprintf("timeout after %s during %s", timeout, stateOf(in.ctx).get())
	}
	shared := &check.Shared{} // the validation, done once
	for _, l := range plan {
		if _, done := got[l]; done {
			continue
		}
		if why := cr.skipReason(in, l); why != "" {
			skip[l] = why
			continue
		}
		in.level = l
		var res *check.Result
		if in.h == nil || in.ctx.Err() != nil {
			// The deadline (or the memory watchdog) came: what is left is
			// unknown, and a check still running on the history is not
			// joined by another.
			res = in.standIn(path, stateOf(in.ctx).get())
			res.Verdict, res.Reason = check.Unknown, stop()
		} else {
			opt := cr.opt
			opt.Strategy = strategyFor(l, opt.Strategy)
			opt.Shared = shared
			var err error
			res, err = in.check(path, opt)
			if err := cr.settle(in, path, res, err, timeout); err != nil {
				return nil, err
			}
		}
		res.Warnings = nil // the report's, once
		got[l] = decided{res: res}
		for _, w := range cr.req.levels {
			if _, done := got[w]; done {
				continue
			}
			if res.Verdict == check.Satisfied && l.AtLeast(w) || res.Verdict == check.Violated && w.AtLeast(l) {
				got[w] = decided{res: implied(res, w), by: l}
			}
		}
	}
	rep := &levelsReport{Schema: 1, Source: path, TimingsMS: map[string]float64{"read": in.readMS}}
	for _, l := range cr.req.levels {
		d, ok := got[l]
		if !ok {
			rep.Skipped = append(rep.Skipped, skippedLevel{Level: l.String(), Reason: skip[l]})
			continue
		}
		e := levelEntry{Result: d.res}
		if d.by != history.LevelNone {
			e.ImpliedBy = d.by.String()
		}
		rep.Levels = append(rep.Levels, e)
		rep.Source, rep.Format, rep.History = d.res.Source, d.res.Format, d.res.History
		rep.Dropped = d.res.Dropped
	}
	if in.h != nil {
		for _, w := range in.h.Warnings {
			rep.Warnings = append(rep.Warnings, w.String())
		}
	}
	rep.StrongestSatisfied = names(rep.extremes(check.Satisfied))
	rep.WeakestViolated = names(rep.extremes(check.Violated))
	return rep, nil
}

// implied is the Result of level w that res, of another level, decides by
// implication: the same verdict, and for a violation the same anomalies.
func implied(res *check.Result, w history.Level) *check.Result {
	out := &check.Result{
		Schema: res.Schema, Source: res.Source, Format: res.Format, Level: w.String(), Verdict: res.Verdict,
		History: res.History, TimingsMS: map[string]float64{}, Counters: map[string]int64{},
		Anomalies: []check.Anomaly{}, Dropped: res.Dropped,
	}
	if res.Verdict == check.Violated {
		out.Anomalies = res.Anomalies
	}
	return out
}

// extremes returns, for Satisfied, the satisfied levels no other satisfied
// level implies; for Violated, the violated levels that imply no other
// violated one. Mixed, which implies nothing, counts as a violated level
// (it is one the history breaks) but not as a strongest satisfied one.
func (r *levelsReport) extremes(v check.Verdict) []history.Level {
	var set []history.Level
	for _, e := range r.Levels {
		l, _ := history.ParseLevel(e.Level)
		if e.Verdict == v && (v == check.Violated || l != history.Mixed) {
			set = append(set, l)
		}
	}
	return extremesOf(set, v == check.Violated)
}

// extremesOf returns the levels of set that imply no other (weakest) or
// that no other implies (!weakest).
func extremesOf(set []history.Level, weakest bool) []history.Level {
	var out []history.Level
	for _, l := range set {
		top := true
		for _, m := range set {
			if m != l && (weakest && l.AtLeast(m) || !weakest && m.AtLeast(l)) {
				top = false
			}
		}
		if top {
			out = append(out, l)
		}
	}
	return out
}

func names(ls []history.Level) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.String())
	}
	return out
}

// alsoNot returns the levels of the table, mixed aside, that imply one of
// not without being in it: violated as surely (Elle's :also-not).
func alsoNot(not []history.Level) []history.Level {
	var out []history.Level
	for _, r := range history.Levels {
		if r.Level == history.Mixed || slices.Contains(not, r.Level) {
			continue
		}
		if slices.ContainsFunc(not, func(l history.Level) bool { return r.Level.AtLeast(l) }) {
			out = append(out, r.Level)
		}
	}
	return out
}
