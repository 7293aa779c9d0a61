package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

// Target is one history to benchmark: a file or directory that a reader
// accepts, or a generator.
type Target struct {
	// Name labels the history in the report; unique within a run.
	Name string
	// Path is the history's file or directory (set by Run for generated
	// histories).
	Path string
	// Generator, if set, produces the history; it runs once, before the
	// measurements.
	Generator Generator
}

// Generator produces a synthetic history (a workload run against an
// embedded store, say). It is the hook for workload generators: bench
// does not depend on any of them.
type Generator interface {
	// Name labels the generated history (e.g. "general-RH-100x20").
	Name() string
	// Generate produces the history.
	Generate(ctx context.Context) (*history.History, error)
}

// GeneratorFunc adapts a function to Generator.
func GeneratorFunc(name string, f func(ctx context.Context) (*history.History, error)) Generator {
	return genFunc{name, f}
}

type genFunc struct {
	name string
	f    func(ctx context.Context) (*history.History, error)
}

func (g genFunc) Name() string                                           { return g.name }
func (g genFunc) Generate(ctx context.Context) (*history.History, error) { return g.f(ctx) }

// GeneratorPrefix starts a history argument that names a generator rather
// than a path: "gen:NAME" or "gen:NAME:SPEC".
const GeneratorPrefix = "gen:"

var (
	genMu      sync.Mutex
	generators = map[string]func(spec string) (Generator, error){}
)

// RegisterGenerator makes "gen:NAME[:SPEC]" arguments of Expand (and of
// "hyperiso bench") produce histories with parse(SPEC), for example
// "gen:general:preset=RH,sessions=20". It panics if name is taken.
func RegisterGenerator(name string, parse func(spec string) (Generator, error)) {
	genMu.Lock()
	defer genMu.Unlock()
	if _, dup := generators[name]; dup {
		panic("bench: generator " + name + " registered twice")
	}
	generators[name] = parse
}

// GeneratorNames lists the registered generators.
func GeneratorNames() []string {
	genMu.Lock()
	defer genMu.Unlock()
	var out []string
	for n := range generators {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func lookupGenerator(arg string) (Generator, error) {
	name, spec, _ := strings.Cut(strings.TrimPrefix(arg, GeneratorPrefix), ":")
	genMu.Lock()
	parse, ok := generators[name]
	genMu.Unlock()
	if !ok {
		known := "none is registered"
		if names := GeneratorNames(); len(names) > 0 {
			known = "known: " + strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("%s: unknown generator %q (%s)", arg, name, known)
	}
	g, err := parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return g, nil
}

// Expand turns command-line arguments into targets. A file is one
// history. A directory holding history.bincode or Cobra *.log files is
// one history; any other directory stands for the histories inside it,
// found recursively in name order (files whose format is not recognised,
// such as a README, are skipped). "gen:NAME[:SPEC]" names a registered
// generator. Each target is named by the shortest trailing part of its
// path that tells it apart from the others, with the parent of a dbcop
// hist-NNNNN folder always kept (RH-10k/hist-00000).
func Expand(args []string) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	for _, arg := range args {
		if strings.HasPrefix(arg, GeneratorPrefix) {
			if _, err := os.Stat(arg); err != nil {
				g, err := lookupGenerator(arg)
				if err != nil {
					return nil, err
				}
				out = append(out, Target{Name: GeneratorPrefix + g.Name(), Generator: g})
				continue
			}
		}
		paths, err := expandPath(arg)
		if err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("%s: no history found", arg)
		}
		for _, p := range paths {
			if !seen[p] {
				seen[p] = true
				out = append(out, Target{Path: p})
			}
		}
	}
	nameTargets(out)
	return out, nil
}

func expandPath(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{filepath.Clean(path)}, nil
	}
	if isHistoryDir(path) {
		return []string{filepath.Clean(path)}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(path, e.Name())
		if e.IsDir() {
			sub, err := expandPath(p)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		if f, err := formats.Detect(p); err == nil && f != "elle" {
			out = append(out, p)
		}
	}
	return out, nil
}

// isHistoryDir tells whether dir is one history: a dbcop directory or a
// Cobra log directory.
func isHistoryDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if e.Name() == "history.bincode" || strings.HasSuffix(e.Name(), ".log") {
			return true
		}
	}
	return false
}

var histDir = regexp.MustCompile(`^hist-[0-9]+$`)

// nameTargets names each unnamed target by the shortest trailing part of
// its path that no other target shares.
func nameTargets(ts []Target) {
	parts := make([][]string, len(ts))
	for i, t := range ts {
		if t.Name == "" {
			parts[i] = strings.Split(filepath.ToSlash(filepath.Clean(t.Path)), "/")
		}
	}
	suffix := func(i, n int) string {
		p := parts[i]
		if n > len(p) {
			n = len(p)
		}
		return strings.Join(p[len(p)-n:], "/")
	}
	for i := range ts {
		if ts[i].Name != "" {
			continue
		}
		// dbcop's folders are all called hist-NNNNN: keep their parent,
		// which names the workload (RH-10k/hist-00000).
		first := 1
		if len(parts[i]) > 1 && histDir.MatchString(parts[i][len(parts[i])-1]) {
			first = 2
		}
		for n := first; ; n++ {
			name := suffix(i, n)
			unique := true
			for j := range ts {
				if j == i {
					continue
				}
				other := ts[j].Name
				if parts[j] != nil {
					other = suffix(j, n)
				}
				if other == name {
					unique = false
					break
				}
			}
			if unique || n >= len(parts[i]) {
				ts[i].Name = name
				break
			}
		}
	}
}
