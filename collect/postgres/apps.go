package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The application workloads' side (collect.SQLStore, collect.SQLTx):
// tables of their own beside the run's, statements run as given.

// Dialect implements collect.SQLStore.
func (s *Store) Dialect() string { return "postgres" }

// AppTable implements collect.SQLStore.
func (s *Store) AppTable(suffix string) string {
	name := s.name + "_" + suffix
	s.mu.Lock()
	s.apps = append(s.apps, name)
	s.mu.Unlock()
	return name
}

// Exec implements collect.SQLStore, over the control connection.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	if _, err := s.admin.Exec(ctx, query, args...); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// dropApps drops the application tables, over c.
func (s *Store) dropApps(ctx context.Context, c *pgx.Conn) error {
	var errs []error
	for _, name := range s.apps {
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Query implements collect.SQLTx.
func (t *tx) Query(ctx context.Context, query string, args ...any) ([][]int64, error) {
	rows, err := t.t.Query(ctx, query, args...)
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	defer rows.Close()
	var out [][]int64
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, t.c.s.classify(err)
		}
		row := make([]int64, len(vals))
		for i, v := range vals {
			n, ok := v.(int64)
			if !ok {
				return nil, fmt.Errorf("postgres: column %d of %q holds %T, not an integer", i+1, query, v)
			}
			row[i] = n
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, t.c.s.classify(err)
	}
	return out, nil
}

// Exec implements collect.SQLTx.
func (t *tx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.t.Exec(ctx, query, args...)
	if err != nil {
		return 0, t.c.s.classify(err)
	}
	return tag.RowsAffected(), nil
}
