// Package apps holds hyperiso collect's application workloads: TPC-C,
// SmallBank, a Twitter-like and a RUBiS-like mix, each a set of
// transaction types over tables of its own. Against a SQL store
// (collect.SQLStore: PostgreSQL, MariaDB) a transaction issues real SQL —
// SELECT, SELECT … FOR UPDATE, UPDATE, INSERT, DELETE — over real tables
// created for the run; against a key-value store (the memory store) the
// same transaction reads and writes a key per column.
//
// What the history records: every table's columns fall into groups that
// transactions read and write together, and each group of each row is one
// key of the history, whose value is the group's version column, set to a
// fresh unique value by every write. A statement that returns rows records
// a read of each group it returned of each row (a scan, a read of each row
// it returned); an UPDATE is a locking read of the row, recorded, then a
// write of each group it changes; an INSERT or a DELETE writes every group.
// The recorded history is thus a key-value history of unique values that
// the checker decides exactly; what a statement saw of rows it did not
// return (a predicate's misses) is not recorded, so phantoms go unseen.
package apps

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/workload"
)

// Names lists the application workloads.
var Names = []string{"tpcc", "smallbank", "twitter", "rubis"}

// Is reports whether name is an application workload.
func Is(name string) bool { return slices.Contains(Names, name) }

// param is one scale parameter of an application.
type param struct {
	name string
	val  int64
	doc  string
}

// txType is one transaction type: its weight in the mix and its planner,
// which draws the transaction's inputs and returns its code.
type txType struct {
	name   string
	weight float64
	plan   func(s *session) func(x *txn) error
}

// spec defines an application: its parameters with their defaults and how
// to build it from their values.
type spec struct {
	params []param
	build  func(a *app, p map[string]int64) error
	// writes bounds the groups one transaction writes, each taking one of
	// its session's unique values.
	writes func(p map[string]int64) int64
}

var specs = map[string]spec{
	"tpcc":      tpccSpec,
	"smallbank": smallbankSpec,
	"twitter":   twitterSpec,
	"rubis":     rubisSpec,
}

// app is one run's application workload (workload.App).
type app struct {
	name   string
	cfg    workload.Config
	params []param
	tables []*table
	types  []txType
	load   func(rng *rand.Rand, emit func(t *table, pk []int64, vals ...int64))
	writes int64 // spec.writes
	// dialect is the SQL store's, once Setup made the tables there; ""
	// for a key-value store.
	dialect string
}

// Defaults returns the sessions, transactions per session and seed of an
// application workload.
func Defaults(name string) (workload.Config, error) {
	if !Is(name) {
		return workload.Config{}, fmt.Errorf("unknown application workload %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	return workload.Config{Sessions: 10, Txns: 100, Seed: 1}, nil
}

// Params describes the scale parameters of the named application,
// "name=default" pairs.
func Params(name string) string {
	var parts []string
	for _, p := range specs[name].params {
		parts = append(parts, p.name+"="+strconv.FormatInt(p.val, 10))
	}
	return strings.Join(parts, ",")
}

// explainParams says what each parameter of the named application is,
// with its default.
func explainParams(name string) string {
	var parts []string
	for _, p := range specs[name].params {
		parts = append(parts, fmt.Sprintf("%s (%s; default %d)", p.name, p.doc, p.val))
	}
	return strings.Join(parts, ", ")
}

// Types lists the transaction types of the named application with their
// default weights, "Type=weight" pairs.
func Types(name string) string {
	a := &app{name: name, cfg: workload.Config{Sessions: 1, Txns: 1}}
	if err := build(a, ""); err != nil {
		return ""
	}
	var parts []string
	for _, t := range a.types {
		parts = append(parts, t.name+"="+strconv.FormatFloat(t.weight, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// New builds the named application workload: c gives its sessions,
// transactions per session and seed; scale overrides parameters
// ("name=value,…"); mix, if not empty, the weights of the transaction
// types ("Type=weight,…", types not named weighing 0).
func New(name string, c workload.Config, scale, mix string) (*workload.Workload, error) {
	if !Is(name) {
		return nil, fmt.Errorf("unknown application workload %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	if c.Txns > workload.UniqueBase/1000 {
		return nil, fmt.Errorf("workload %s: at most %d transactions per session (got %d)", name, workload.UniqueBase/1000, c.Txns)
	}
	a := &app{name: name, cfg: c}
	if err := build(a, scale); err != nil {
		return nil, fmt.Errorf("workload %s: %w", name, err)
	}
	if mix != "" {
		if err := a.setMix(mix); err != nil {
			return nil, fmt.Errorf("workload %s: --txn-mix: %w", name, err)
		}
	}
	for _, t := range a.tables {
		if t.rows() >= keyBase {
			return nil, fmt.Errorf("workload %s: table %s would have %d rows or more, more than its keys can number", name, t.name, t.rows())
		}
	}
	if n := int64(c.Txns) * a.writes; n >= workload.UniqueBase {
		return nil, fmt.Errorf("workload %s: a session could write %d values, more than unique values can number (%d): fewer transactions or a smaller scale", name, n, workload.UniqueBase-1)
	}
	return workload.NewApp(name, c, a)
}

// build sets a's parameters from the spec's defaults and scale, and builds
// its tables and types.
func build(a *app, scale string) error {
	sp := specs[a.name]
	a.params = slices.Clone(sp.params)
	vals := map[string]int64{}
	for _, p := range a.params {
		vals[p.name] = p.val
	}
	if strings.TrimSpace(scale) != "" {
		for _, part := range strings.Split(scale, ",") {
			k, v, ok := strings.Cut(part, "=")
			k = strings.TrimSpace(k)
			i := slices.IndexFunc(a.params, func(p param) bool { return p.name == k })
			if !ok || i < 0 {
				return fmt.Errorf("--scale: %q is not NAME=VALUE with NAME one of %s", strings.TrimSpace(part), explainParams(a.name))
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 1 || n > 1_000_000 {
				return fmt.Errorf("--scale: %s must be an integer in 1…1000000, not %q", k, strings.TrimSpace(v))
			}
			vals[k] = n
			a.params[i].val = n
		}
	}
	a.writes = sp.writes(vals)
	return sp.build(a, vals)
}

// setMix sets the types' weights from "Type=weight,…".
func (a *app) setMix(spec string) error {
	w := make([]float64, len(a.types))
	for _, part := range strings.Split(spec, ",") {
		name, v, ok := strings.Cut(part, "=")
		i := slices.IndexFunc(a.types, func(t txType) bool { return strings.EqualFold(t.name, strings.TrimSpace(name)) })
		if !ok || i < 0 {
			return fmt.Errorf("%q is not Type=weight with Type one of %s", strings.TrimSpace(part), strings.Join(a.Types(), ", "))
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1e9 {
			return fmt.Errorf("the weight of %s must be a number in [0, 1e9], not %q", a.types[i].name, strings.TrimSpace(v))
		}
		w[i] = f
	}
	total := 0.0
	for i := range a.types {
		a.types[i].weight = w[i]
		total += w[i]
	}
	if total == 0 {
		return fmt.Errorf("every weight is 0")
	}
	return nil
}

// Types implements workload.App.
func (a *app) Types() []string {
	names := make([]string, len(a.types))
	for i, t := range a.types {
		names[i] = t.name
	}
	return names
}

// Describe implements workload.App.
func (a *app) Describe() string {
	var parts []string
	for _, p := range a.params {
		parts = append(parts, p.name+"="+strconv.FormatInt(p.val, 10))
	}
	var mix []string
	for _, t := range a.types {
		mix = append(mix, t.name+":"+strconv.FormatFloat(t.weight, 'g', -1, 64))
	}
	return strings.Join(parts, " ") + " mix=" + strings.Join(mix, ",")
}

// Setup implements workload.App: the tables and their rows, as SQL tables
// in a SQL store, as keys in any other.
func (a *app) Setup(ctx context.Context, store any) error {
	rng := rand.New(rand.NewPCG(uint64(a.cfg.Seed), 0x6c6f6164)) // "load"
	load := func(emit func(t *table, pk []int64, vals ...int64)) { a.load(rng, emit) }
	switch st := store.(type) {
	case collect.SQLStore:
		a.dialect = st.Dialect()
		return createSQL(ctx, st, a.tables, load)
	case collect.Store:
		return loadKV(ctx, st, load)
	}
	return fmt.Errorf("workload %s: %T is no store", a.name, store)
}

// session is one session's state: its random draws, its unique values,
// and the counters of what it inserted.
type session struct {
	a      *app
	index  int   // 0-based
	number int64 // 1-based, the factor of its unique values
	rng    *rand.Rand
	seq    int64 // unique values handed out
	n      int   // transactions planned
	count  map[string]int64
}

// ver returns the session's next unique value.
func (s *session) ver() int64 {
	s.seq++
	return s.number*workload.UniqueBase + s.seq
}

// next returns the session's next number for what counter counts (its
// inserts into a table, say), from 1.
func (s *session) next(counter string) int64 {
	s.count[counter]++
	return s.count[counter]
}

// pick returns a uniform draw in 1…n.
func (s *session) pick(n int64) int64 { return 1 + s.rng.Int64N(n) }

// other returns a uniform draw in 1…n other than x (x itself if n is 1).
func (s *session) other(n, x int64) int64 {
	if n < 2 {
		return x
	}
	y := 1 + s.rng.Int64N(n-1)
	if y >= x {
		y++
	}
	return y
}

// between returns a uniform draw in lo…hi.
func (s *session) between(lo, hi int64) int64 { return lo + s.rng.Int64N(hi-lo+1) }

// Session implements workload.App.
func (a *app) Session(i int) func() workload.Txn {
	s := &session{a: a, index: i, number: int64(i) + 1, count: map[string]int64{},
		rng: rand.New(rand.NewPCG(uint64(a.cfg.Seed), 0x61707073<<8|uint64(i)))} // "apps"
	total := 0.0
	for _, t := range a.types {
		total += t.weight
	}
	return func() workload.Txn {
		s.n++
		u := s.rng.Float64() * total
		k := len(a.types) - 1
		for j, t := range a.types {
			if u < t.weight {
				k = j
				break
			}
			u -= t.weight
		}
		for a.types[k].weight == 0 { // rounding landed on a type of weight 0
			k--
		}
		return workload.Txn{Type: a.types[k].name, Program: program{s: s, code: a.types[k].plan(s)}}
	}
}

// program is one planned transaction: its inputs are drawn, its code
// runs when the recorder runs it.
type program struct {
	s    *session
	code func(x *txn) error
}

// Run implements workload.Program.
func (p program) Run(ctx context.Context, tx workload.KV, rec func(workload.Op)) error {
	x := &txn{ctx: ctx, rec: rec, ver: p.s.ver}
	if d := p.s.a.dialect; d != "" {
		sq, ok := tx.(collect.SQLTx)
		if !ok {
			return fmt.Errorf("workload %s: the tables are SQL but the transaction offers no SQL", p.s.a.name)
		}
		x.b = sqlBackend{tx: sq, dialect: d}
	} else {
		x.b = kvBackend{tx: tx}
	}
	return p.code(x)
}
