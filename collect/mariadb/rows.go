package mariadb

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/hyperiso/hyperiso/collect"
)

// Rows (collect.RowStore): a table that holds only the live rows, each
// operation one statement. An insert is an upsert (INSERT … ON DUPLICATE
// KEY UPDATE), a blind write; a range delete returns what it deleted
// (DELETE … RETURNING, MariaDB 10.0.5 and later); a move is an UPDATE of
// the key, and a duplicate target (1062) undoes that statement only.

// SetupRows implements collect.RowStore.
func (s *Store) SetupRows(ctx context.Context, rows []collect.Row) error {
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE "+s.table+" (k BIGINT PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB"); err != nil {
		return fmt.Errorf("mariadb: creating table %s: %w", s.name, err)
	}
	for _, r := range rows {
		if _, err := s.db.ExecContext(ctx, "INSERT INTO "+s.table+" (k, v) VALUES (?, ?)", r.Key, r.Val); err != nil {
			return fmt.Errorf("mariadb: seeding table %s: %w", s.name, err)
		}
	}
	return nil
}

// Insert implements collect.RowTx.
func (t *tx) Insert(ctx context.Context, key, val int64) error {
	_, err := t.c.c.ExecContext(ctx, "INSERT INTO "+t.c.s.table+" (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)", key, val)
	return t.c.s.classify(err)
}

// Delete implements collect.RowTx.
func (t *tx) Delete(ctx context.Context, key int64) (bool, error) {
	res, err := t.c.c.ExecContext(ctx, "DELETE FROM "+t.c.s.table+" WHERE k = ?", key)
	if err != nil {
		return false, t.c.s.classify(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Select implements collect.RowTx.
func (t *tx) Select(ctx context.Context, lo, hi int64) ([]collect.Row, error) {
	return t.rows(ctx, "SELECT k, v FROM "+t.c.s.table+" WHERE k BETWEEN ? AND ?", lo, hi-1)
}

// DeleteRange implements collect.RowTx.
func (t *tx) DeleteRange(ctx context.Context, lo, hi int64) ([]collect.Row, error) {
	return t.rows(ctx, "DELETE FROM "+t.c.s.table+" WHERE k BETWEEN ? AND ? RETURNING k, v", lo, hi-1)
}

func (t *tx) rows(ctx context.Context, q string, args ...any) ([]collect.Row, error) {
	rs, err := t.c.c.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, t.c.s.classify(err)
	}
	defer rs.Close()
	var rows []collect.Row
	for rs.Next() {
		var row collect.Row
		if err := rs.Scan(&row.Key, &row.Val); err != nil {
			return nil, t.c.s.classify(err)
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		return nil, t.c.s.classify(err)
	}
	return rows, nil
}

// Move implements collect.RowTx.
func (t *tx) Move(ctx context.Context, from, to, val int64) (bool, error) {
	res, err := t.c.c.ExecContext(ctx, "UPDATE "+t.c.s.table+" SET k = ?, v = ? WHERE k = ?", to, val, from)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1062 { // duplicate entry: to is live
		return false, nil
	}
	if err != nil {
		return false, t.c.s.classify(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}
