package mariadb

import (
	"context"
	"errors"
	"fmt"
)

// The application workloads' side (collect.SQLStore, collect.SQLTx):
// tables of their own beside the run's, statements run as given.

// Dialect implements collect.SQLStore.
func (s *Store) Dialect() string { return "mariadb" }

// AppTable implements collect.SQLStore.
func (s *Store) AppTable(suffix string) string {
	name := s.name + "_" + suffix
	s.mu.Lock()
	s.apps = append(s.apps, name)
	s.mu.Unlock()
	return name
}

// Exec implements collect.SQLStore.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	if _, err := s.db.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	return nil
}

// dropApps drops the application tables.
func (s *Store) dropApps(ctx context.Context) error {
	var errs []error
	for _, name := range s.apps {
		if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS `"+name+"`"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Query implements collect.SQLTx.
func (t *tx) Query(ctx context.Context, query string, args ...any) ([][]int64, error) {
	rows, err := t.c.c.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	var out [][]int64
	for rows.Next() {
		row := make([]int64, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, t.c.s.classify(err)
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
	res, err := t.c.c.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, t.c.s.classify(err)
	}
	return res.RowsAffected()
}
