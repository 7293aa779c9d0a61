package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hyperiso/hyperiso/collect"
)

// Rows (collect.RowStore): a table that holds only the live rows, each
// operation one statement. An insert is an upsert (INSERT … ON CONFLICT
// DO UPDATE), a blind write; a move is an UPDATE of the key, run under a
// savepoint so that a duplicate target (23505) undoes the statement and
// not the transaction.

// SetupRows implements collect.RowStore.
func (s *Store) SetupRows(ctx context.Context, rows []collect.Row) error {
	if _, err := s.admin.Exec(ctx, "CREATE TABLE "+s.table+" (k BIGINT PRIMARY KEY, v BIGINT NOT NULL)"); err != nil {
		return fmt.Errorf("postgres: creating table %s: %w", s.name, err)
	}
	for _, r := range rows {
		if _, err := s.admin.Exec(ctx, "INSERT INTO "+s.table+" (k, v) VALUES ($1, $2)", r.Key, r.Val); err != nil {
			return fmt.Errorf("postgres: seeding table %s: %w", s.name, err)
		}
	}
	return nil
}

// Insert implements collect.RowTx.
func (t *tx) Insert(ctx context.Context, key, val int64) error {
	_, err := t.t.Exec(ctx, "INSERT INTO "+t.c.s.table+" (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v", key, val)
	return t.c.s.classify(err)
}

// Delete implements collect.RowTx.
func (t *tx) Delete(ctx context.Context, key int64) (bool, error) {
	tag, err := t.t.Exec(ctx, "DELETE FROM "+t.c.s.table+" WHERE k = $1", key)
	if err != nil {
		return false, t.c.s.classify(err)
	}
	return tag.RowsAffected() == 1, nil
}

// Select implements collect.RowTx.
func (t *tx) Select(ctx context.Context, lo, hi int64) ([]collect.Row, error) {
	return t.rows(ctx, "SELECT k, v FROM "+t.c.s.table+" WHERE k BETWEEN $1 AND $2", lo, hi-1)
}

// DeleteRange implements collect.RowTx.
func (t *tx) DeleteRange(ctx context.Context, lo, hi int64) ([]collect.Row, error) {
	return t.rows(ctx, "DELETE FROM "+t.c.s.table+" WHERE k BETWEEN $1 AND $2 RETURNING k, v", lo, hi-1)
}

func (t *tx) rows(ctx context.Context, q string, args ...any) ([]collect.Row, error) {
	rs, err := t.t.Query(ctx, q, args...)
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	rows, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) (collect.Row, error) {
		var row collect.Row
		err := r.Scan(&row.Key, &row.Val)
		return row, err
	})
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	return rows, nil
}

// Move implements collect.RowTx.
func (t *tx) Move(ctx context.Context, from, to, val int64) (bool, error) {
	if _, err := t.t.Exec(ctx, "SAVEPOINT hyperiso_move"); err != nil {
		return false, t.c.s.classify(err)
	}
	tag, err := t.t.Exec(ctx, "UPDATE "+t.c.s.table+" SET k = $1, v = $2 WHERE k = $3", to, val, from)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation: to is live
		if _, err := t.t.Exec(ctx, "ROLLBACK TO SAVEPOINT hyperiso_move"); err != nil {
			return false, t.c.s.classify(err)
		}
		return false, nil
	}
	if err != nil {
		return false, t.c.s.classify(err)
	}
	if _, err := t.t.Exec(ctx, "RELEASE SAVEPOINT hyperiso_move"); err != nil {
		return false, t.c.s.classify(err)
	}
	return tag.RowsAffected() == 1, nil
}
