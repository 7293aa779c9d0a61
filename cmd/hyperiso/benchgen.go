package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/bench"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/apps"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// benchGenHelp describes the gen: targets of "hyperiso bench".
var benchGenHelp = `gen:WORKLOAD[:SPEC] is a history generated in memory: one of collect's
workloads (` + strings.Join(append(slices.Clone(workload.Names), apps.Names...), ", ") + `)
run against the embedded memory store, as "hyperiso collect --db memory"
would, without a file.
SPEC is collect's flags without their dashes, separated by commas, for
example gen:general:preset=WH,sessions=50,txns=200,isolation=snapshot
(also seed, ops, reads, keys, dup-keys, unique, ...; bug=a+b for the
memory store's bugs; scale and txn-mix take one NAME=VALUE each).`

// registerBenchGenerators makes every collect workload a bench generator,
// once per process.
var registerBenchGenerators = sync.OnceFunc(func() {
	for _, name := range append(slices.Clone(workload.Names), apps.Names...) {
		bench.RegisterGenerator(name, func(spec string) (bench.Generator, error) {
			return memoryGenerator(name, spec)
		})
	}
})

// memoryGenerator parses SPEC with collect's own flags and returns a
// generator that runs the workload against a fresh memory store.
func memoryGenerator(name, spec string) (bench.Generator, error) {
	var (
		f             collectFlags
		isoName, bugs string
	)
	c := &cobra.Command{Use: name}
	f.register(c)
	c.Flags().StringVar(&isoName, "isolation", collect.Serializable.String(), "")
	c.Flags().StringVar(&bugs, "bug", "", "")
	var args []string
	if spec != "" {
		for _, kv := range strings.Split(spec, ",") {
			args = append(args, "--"+kv)
		}
	}
	if err := c.Flags().Parse(args); err != nil {
		return nil, err
	}
	iso, err := collect.ParseIsolation(isoName)
	if err != nil {
		return nil, fmt.Errorf("isolation: %w", err)
	}
	// Bugs are joined by commas on the command line: here by "+".
	bug, err := memstore.ParseBugs(strings.ReplaceAll(bugs, "+", ","))
	if err != nil {
		return nil, fmt.Errorf("bug: %w", err)
	}
	w, err := f.workload(c, name)
	if err != nil {
		return nil, err
	}
	label := name
	if spec != "" {
		label += ":" + spec
	}
	return bench.GeneratorFunc(label, func(ctx context.Context) (*history.History, error) {
		st := memstore.New(memstore.Options{Seed: f.seed, Bugs: bug})
		h, _, err := collect.Run(ctx, st, w, collect.Options{Isolation: iso, Source: bench.GeneratorPrefix + label})
		if err != nil {
			return nil, err
		}
		return h, nil
	}), nil
}

// The scale bench's setting: the VeriStrong paper's scalability
// experiment (50 sessions, 20 operations a transaction, half of them
// reads, 50,000 keys). With 50,000 keys fixed, each key's writers grow with
// n and their version-order pairs with n²: the -growing variants keep the
// paper's density at 100k (two transactions per key) as n grows.
const (
	scaleSessions = 50
	scaleOps      = 20
	scaleReads    = 0.5
	scaleKeys     = 50_000
)

// scaleHelp describes the histories of "hyperiso bench --scale".
var scaleHelp = fmt.Sprintf(`--scale writes and checks synthetic histories of growing size instead of
PATHs: collect's general workload in the VeriStrong paper's scalability
setting (%d sessions, %d operations a transaction, %g reads, %d keys),
executed by a serial store (one transaction at a time, sessions drawn at
random, seed 1), so that every level is satisfied. Variants
(--scale-variants, default the first two): unique (every written value unique) and zipf (the HD
preset: half of the keys repeat values drawn from Zipf θ 1.5 over 100
values), over %d keys at every size; unique-growing and zipf-growing use
max(%d, n/2) keys instead, the paper's two transactions per key at 100k
kept as n grows (with the keys fixed, each key's writers, and their
version-order pairs, grow with n). Each variant also comes listed in
other orders, each session's order kept: VARIANT-sessions (one session
after another) and VARIANT-shuffled (sessions interleaved at random),
since speed must not depend on the file being in commit order. Each history is streamed to
--scale-dir as VARIANT-N.jsonl (kept, and reused by the next run) and checked at each --level (default
ser,si,rc,ra,cc) with the default strategy. The table printed is
Markdown: a row per size with the reading time (the floor) and each
level's wall time, CPU time and peak memory; when the largest size and a
tenth of it were both run, a row of growth ratios between them (CPU time
and memory; the target is about 15x); and a last row extrapolated to 1M
transactions, or ten times the largest size (CPU time and memory). --csv,
--json and --plot write the CSV, the report and a plot of time and memory
against n, the 15x growth target dotted; --from
REPORT.json prints and plots a saved scale report again.`,
	scaleSessions, scaleOps, scaleReads, scaleKeys, scaleKeys, scaleKeys)

// scaleVariants returns the histories of the scale bench.
func scaleVariants() []bench.ScaleVariant {
	mk := func(name string, growing bool, set func(c *workload.Config) error) bench.ScaleVariant {
		return bench.ScaleVariant{Name: name, Write: func(ctx context.Context, n int, out io.Writer) error {
			if n%scaleSessions != 0 {
				return fmt.Errorf("size %d is not a multiple of the %d sessions", n, scaleSessions)
			}
			c, err := workload.Defaults("general")
			if err != nil {
				return err
			}
			if err := set(&c); err != nil {
				return err
			}
			c.Sessions, c.Txns, c.Ops, c.Reads, c.Keys = scaleSessions, n/scaleSessions, scaleOps, scaleReads, scaleKeys
			if growing {
				c.Keys = int64(max(scaleKeys, n/2))
			}
			w, err := workload.New("general", c)
			if err != nil {
				return err
			}
			return w.WriteSerial(ctx, out, map[string]string{"scale_variant": name})
		}}
	}
	unique := func(c *workload.Config) error { c.DupKeys = 0; return nil }
	zipf := func(c *workload.Config) error { return workload.ApplyPreset(c, "HD") }
	base := []bench.ScaleVariant{
		mk("unique", false, unique),
		mk("zipf", false, zipf),
		mk("unique-growing", true, unique),
		mk("zipf-growing", true, zipf),
	}
	// The same histories listed in the other orders (bench.Orders).
	out := slices.Clone(base)
	for _, order := range bench.Orders[1:] {
		for _, v := range base {
			out = append(out, bench.InOrder(v, order))
		}
	}
	return out
}
