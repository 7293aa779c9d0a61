package collect

// What the application workloads (collect/apps) need beyond keys and
// values: SQL stores that make tables of their own and run statements in a
// transaction, and a level per transaction type.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// SQLStore is a SQL database that runs the application workloads over
// tables of their own (PostgreSQL, MariaDB). Their statements are written
// for its Dialect.
type SQLStore interface {
	Store
	// Dialect is "postgres" or "mariadb".
	Dialect() string
	// AppTable returns the name of the run's table with suffix (letters
	// only), the run's table name followed by "_" and suffix, and makes
	// Teardown drop it (unless kept) with the run's own.
	AppTable(suffix string) string
	// Exec runs a statement outside any transaction (creating and
	// loading the tables).
	Exec(ctx context.Context, query string, args ...any) error
}

// SQLTx is the SQL part of a SQLStore's transactions. Errors are
// classified as Read's and Write's are (conflicts, a lost table).
type SQLTx interface {
	// Query runs a statement that returns rows of integer columns.
	Query(ctx context.Context, query string, args ...any) ([][]int64, error)
	// Exec runs a statement and returns how many rows it affected
	// (matched, for an UPDATE).
	Exec(ctx context.Context, query string, args ...any) (int64, error)
}

// TypeLevels gives each transaction type of an application workload a
// level of its own (collect --mix-by-type): every transaction of a type
// named asks for the type's level and the history records it; the other
// types run at Options.Isolation.
type TypeLevels struct {
	// Types are the types named, in the spec's order; Entries[i] is
	// Types[i]'s level (its Weight unused).
	Types   []string
	Entries []MixEntry
}

// ParseTypeLevels parses "Type=level,…" (e.g. "NewOrder=ser,Payment=si"):
// types among known (any case), each once; levels as a mix names them
// (MixLevelNames).
func ParseTypeLevels(spec string, known []string) (TypeLevels, error) {
	var tl TypeLevels
	if strings.TrimSpace(spec) == "" {
		return tl, fmt.Errorf("empty: want Type=level,… e.g. %s=ser", known[0])
	}
	for _, part := range strings.Split(spec, ",") {
		name, lv, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return tl, fmt.Errorf("%q: want Type=level", strings.TrimSpace(part))
		}
		i := slices.IndexFunc(known, func(k string) bool { return strings.EqualFold(k, name) })
		if i < 0 {
			return tl, fmt.Errorf("unknown transaction type %q (want %s)", name, strings.Join(known, ", "))
		}
		if slices.Contains(tl.Types, known[i]) {
			return tl, fmt.Errorf("%s named twice", known[i])
		}
		e, err := mixLevel(lv)
		if err != nil {
			return tl, fmt.Errorf("%s: %w", known[i], err)
		}
		e.Weight = 0
		tl.Types = append(tl.Types, known[i])
		tl.Entries = append(tl.Entries, e)
	}
	return tl, nil
}

// index returns the position of type t, -1 if it is not named.
func (tl TypeLevels) index(t string) int {
	if t == "" {
		return -1
	}
	return slices.Index(tl.Types, t)
}

// String is the canonical spec.
func (tl TypeLevels) String() string {
	parts := make([]string, len(tl.Types))
	for i, t := range tl.Types {
		parts[i] = t + "=" + tl.Entries[i].Name
	}
	return strings.Join(parts, ",")
}

// byTypeName says the levels by type and the level of the other types.
func byTypeName(opt Options) string {
	return opt.ByType.String() + "; other types " + opt.Isolation.String()
}

// entries are the levels a transaction's record.mix indexes: the mix's,
// or the types'.
func (opt Options) entries() []MixEntry {
	if len(opt.Mix.Entries) > 0 {
		return opt.Mix.Entries
	}
	return opt.ByType.Entries
}

// program runs an application transaction, bounded by OpTimeout as a
// whole, and records what it reports.
func (r *runner) program(ctx context.Context, tx Tx, plan workload.Txn, rec *record) error {
	octx, cancel := r.opCtx(ctx)
	defer cancel()
	return plan.Program.Run(octx, tx, func(op workload.Op) {
		kind := history.OpRead
		if op.Kind == workload.Write {
			kind = history.OpWrite
		}
		rec.ops = append(rec.ops, opRecord{kind: kind, key: op.Key, val: op.Value})
	})
}
