package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hyperiso/hyperiso/bench"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// benchGenHelp describes the gen: targets of "hyperiso bench".
var benchGenHelp = `gen:WORKLOAD[:SPEC] is a history generated in memory: one of collect's
workloads (` + strings.Join(workload.Names, ", ") + `)
run against the embedded memory store, as "hyperiso collect --db memory"
would, without a file.
SPEC is collect's flags without their dashes, separated by commas, for
example gen:general:preset=WH,sessions=50,txns=200,isolation=snapshot
(also seed, ops, reads, keys, dup-keys, unique, ...; bug=a+b for the
memory store's bugs).`

// registerBenchGenerators makes every collect workload a bench generator,
// once per process.
var registerBenchGenerators = sync.OnceFunc(func() {
	for _, name := range workload.Names {
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
	c.Flags().StringVar(&isoName, "isolation", "serializable", "")
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
