package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/online"
)

// followRun is check --follow: one JSONL stream, checked as it grows
// (package online).
type followRun struct {
	levels   []history.Level
	opt      check.Options
	unique   bool
	failFast bool
	every    time.Duration
	lenient  bool
	asJSON   bool
	verbose  bool
	stdout   io.Writer
	stderr   io.Writer
	// progress, when set, is redrawn on a terminal's standard error.
	progress io.Writer
}

// followFlagsCheck refuses what --follow does not take.
func followFlagsCheck(c *cobra.Command, req levelRequest, paths []string, format string) error {
	switch {
	case len(paths) != 1:
		return fail(exitBadInput, "--follow reads one stream (a file being written, a Unix socket, or - for standard input)")
	case !c.Flags().Changed("level"):
		return fail(exitBadInput, "--follow needs --level L[,L...]: each level is checked again as the stream grows")
	case req.all:
		return fail(exitBadInput, "--follow needs --level L[,L...], not %s", allLevels)
	case format != "auto" && format != "jsonl":
		return fail(exitBadInput, "--follow reads JSONL (got --format %s)", format)
	case c.Flags().Changed("edn"):
		return fail(exitBadInput, "--edn does not go with --follow")
	}
	return nil
}

// open returns the stream path names and whether it is a growing file.
func (fr *followRun) open(c *cobra.Command, path string) (io.Reader, func(), bool, error) {
	if path == "-" {
		in := c.InOrStdin()
		return in, func() {}, online.IsTail(in), nil
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		// A producer that serves its stream on a Unix socket: read it
		// until the producer closes the connection.
		conn, err := net.Dial("unix", path)
		if err != nil {
			return nil, nil, false, fail(exitBadInput, "%v", err)
		}
		return conn, func() { conn.Close() }, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, fail(exitBadInput, "%v", err)
	}
	return f, func() { f.Close() }, online.IsTail(f), nil
}

// run follows path until its stream ends (or, with --fail-fast, until a
// violation is certain) and prints each violation as it becomes certain,
// then the final report. It returns the exit status.
func (fr *followRun) run(ctx context.Context, c *cobra.Command, path string) (int, error) {
	r, closeIt, tail, err := fr.open(c, path)
	if err != nil {
		return 0, err
	}
	defer closeIt()
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	chk, err := online.New(online.Options{Name: name, Levels: fr.levels, Check: fr.opt, Lenient: fr.lenient, Unique: fr.unique})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	reported := make([]bool, len(fr.levels))
	broken, foldBroken := false, false
	var mu sync.Mutex // OnCheck runs on Follow's goroutine; the display's ticker on its own
	stop := false
	onCheck := func(st online.Status) bool {
		mu.Lock()
		defer mu.Unlock()
		if st.Broken != "" && !broken {
			broken = true
			fmt.Fprintln(fr.stderr, "hyperiso: warning:", esc(st.Broken))
		}
		if st.FoldBroken != "" && !foldBroken {
			foldBroken = true
			fmt.Fprintln(fr.stderr, "hyperiso: warning: the history was folded, and then", esc(st.FoldBroken)+"; the verdicts not yet certain are unknown")
		}
		for i, lv := range st.Levels {
			if lv.Certain == nil || reported[i] {
				continue
			}
			reported[i] = true
			if st.Final {
				continue // the final report says it
			}
			fr.printCertain(lv, time.Since(start))
			if fr.failFast {
				stop = true
			}
		}
		if fr.progress != nil {
			fr.drawProgress(st, time.Since(start))
		}
		return !stop
	}
	st, err := online.Follow(ctx, r, chk, online.FollowOptions{Every: fr.every, Tail: tail, OnCheck: onCheck})
	if fr.progress != nil {
		fmt.Fprint(fr.progress, "\r\033[K")
	}
	if err != nil && ctx.Err() == nil {
		return 0, fail(exitBadInput, "%v", err)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(fr.stderr, "hyperiso: %s: stopped after %d transactions (%v); the verdicts are those of the last prefix checked\n", name, st.Checked, context.Cause(ctx))
	}
	if st.Folded > 0 {
		fmt.Fprintf(fr.stderr, "hyperiso: %s: %d of %d transactions were folded away at %d fence cuts; the report's history is the other %d, after an initial state holding each key's last folded version\n", name, st.Folded, st.Txns, st.Cuts, st.Held)
	}
	return fr.report(st, ctx.Err() != nil)
}

// printCertain prints a violation the moment it is certain.
func (fr *followRun) printCertain(lv online.Level, since time.Duration) {
	res := lv.Certain
	if fr.asJSON {
		out := struct {
			Certain   bool          `json:"certain"`
			AfterTxns int           `json:"after_transactions"`
			AfterMS   int64         `json:"after_ms"`
			Result    *check.Result `json:"report"`
		}{true, lv.CertainAt, since.Milliseconds(), res}
		b, _ := json.Marshal(out)
		fmt.Fprintf(fr.stdout, "%s\n", b)
		return
	}
	fmt.Fprintf(fr.stdout, "%s: VIOLATED, certain after %d transactions (%.1f s); no later transaction can undo it\n",
		strings.ToUpper(lv.Level.String()), lv.CertainAt, since.Seconds())
	for _, a := range res.Anomalies {
		printAnomaly(fr.stdout, res.Level, a)
	}
}

// report prints the final (or, stopped, the last) verdicts and returns
// the exit status: the worst verdict, unknown for a stream not read to
// its end that no violation decided.
func (fr *followRun) report(st online.Status, stopped bool) (int, error) {
	code := exitSatisfied
	var results []*check.Result
	for _, lv := range st.Levels {
		res := lv.Result
		switch {
		case lv.Certain != nil:
			res = lv.Certain
		case res == nil:
			res = &check.Result{Schema: 1, Level: lv.Level.String(), Verdict: check.Unknown, Reason: "no transaction read", TimingsMS: map[string]float64{}, Counters: map[string]int64{}, Anomalies: []check.Anomaly{}}
		case !st.Final:
			r := *res
			r.Verdict, r.Reason = check.Unknown, fmt.Sprintf("the stream was not read to its end (%d transactions checked; %s so far)", st.Checked, res.Verdict)
			res = &r
		}
		results = append(results, res)
		code = worse(code, verdictCode(res.Verdict))
	}
	if len(results) == 1 {
		return code, (&checkRun{asJSON: fr.asJSON, verbose: fr.verbose}).write(fr.stdout, &fileReport{single: results[0]})
	}
	rep := &levelsReport{Schema: 1, TimingsMS: map[string]float64{}}
	for _, res := range results {
		rep.Levels = append(rep.Levels, levelEntry{Result: res})
		rep.Source, rep.Format, rep.History, rep.Dropped = res.Source, res.Format, res.History, res.Dropped
	}
	rep.StrongestSatisfied = names(rep.extremes(check.Satisfied))
	rep.WeakestViolated = names(rep.extremes(check.Violated))
	return code, (&checkRun{asJSON: fr.asJSON, verbose: fr.verbose}).write(fr.stdout, &fileReport{multi: rep})
}

// drawProgress redraws the progress line: transactions and their rate,
// transactions held in memory (and not yet closed), those folded away
// or why the last check folded none, the heap, and the verdict so far of
// each level.
func (fr *followRun) drawProgress(st online.Status, since time.Duration) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rate := float64(st.Txns) / since.Seconds()
	var b strings.Builder
	fmt.Fprintf(&b, "\r\033[Kfollowing: %d tx (%.0f tx/s), held %d", st.Txns, rate, st.Held)
	if fr.unique {
		fmt.Fprintf(&b, ", open %d", st.Open)
	}
	if st.Folded > 0 {
		fmt.Fprintf(&b, ", folded %d at %d cuts", st.Folded, st.Cuts)
	}
	if st.Keeping != "" && st.Fenced {
		fmt.Fprintf(&b, ", keeping all since: %s", st.Keeping)
	}
	fmt.Fprintf(&b, ", heap %d MB", m.HeapInuse>>20)
	for _, lv := range st.Levels {
		v := "…"
		switch {
		case lv.Certain != nil:
			v = "VIOLATED"
		case lv.Result != nil:
			v = lv.Result.Verdict.String()
		}
		fmt.Fprintf(&b, ", %s %s", lv.Level, v)
	}
	fmt.Fprint(fr.progress, b.String())
}

// terminalOf returns w when it is a terminal, else nil.
func terminalOf(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return w
	}
	return nil
}
