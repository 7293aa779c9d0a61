package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/collect/hermitage"
	"github.com/hyperiso/hyperiso/formats/jsonl"
)

// hermitageRefused are collect's flags that mean nothing to --hermitage:
// the scenarios fix the workload, and run at every level the server has.
var hermitageRefused = []string{"isolation", "mix", "workload", "bug", "keep-table", "preset", "sessions", "txns", "ops",
	"reads", "keys", "dup-keys", "theta", "value-space", "rollback-rate", "think", "seed", "unique", "faults", "times"}

// runHermitage is collect --hermitage: every scenario at every level of
// the server db names, the matrix to stdout, each history to dir when
// dir is not "-".
func runHermitage(c *cobra.Command, stdout io.Writer, db, scenarios, dir string, timeout time.Duration) error {
	for _, f := range hermitageRefused {
		if c.Flags().Changed(f) {
			return fail(exitBadInput, "--%s does not apply to --hermitage: the scenarios fix the transactions and run at every level the server offers", f)
		}
	}
	if db == "" || db == "memory" || strings.HasPrefix(db, "etcd") {
		return fail(exitBadInput, "--hermitage needs a SQL server: --db postgres://… or --db mariadb://… (the memory store does not lock, so blocking steps mean nothing there)")
	}
	scs := hermitage.Scenarios
	if scenarios != "" {
		scs = nil
		for _, name := range strings.Split(scenarios, ",") {
			sc, ok := hermitage.Lookup(strings.TrimSpace(name))
			if !ok {
				var all []string
				for _, s := range hermitage.Scenarios {
					all = append(all, s.Name)
				}
				return fail(exitBadInput, "--scenario: no scenario %q (want some of %s)", name, strings.Join(all, ","))
			}
			scs = append(scs, sc)
		}
	}
	if dir != "-" && dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fail(exitBadInput, "-o: %v", err)
		}
	}
	ctx, stop := interruptible(c.Context())
	defer stop()
	tg, err := hermitage.Open(ctx, db)
	if err != nil {
		return fail(exitBadInput, "%v", err)
	}
	defer tg.Close()
	m, runErr := hermitage.Collect(ctx, tg, scs, tg.Levels, 4, hermitage.Options{StepTimeout: timeout})
	if sig, ok := interruption(ctx); ok {
		return fail(sig.code(), "interrupted by %s: no matrix", sig.String())
	}
	if runErr != nil {
		return fail(exitBadInput, "%v", runErr)
	}
	if err := m.Format(stdout); err != nil {
		return err
	}
	if dir == "-" || dir == "" {
		return nil
	}
	var errs []error
	n := 0
	for i := range m.Cells {
		for _, cell := range m.Cells[i] {
			r := cell.Run
			name := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.jsonl", r.Target, r.Level, r.Scenario))
			f, err := os.Create(name)
			if err == nil {
				err = errors.Join(jsonl.Write(f, r.History), f.Close())
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fail(exitBadInput, "writing the histories: %v", err)
	}
	fmt.Fprintf(stdout, "wrote %d histories to %s\n", n, dir)
	return nil
}
