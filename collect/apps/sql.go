package apps

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/collect"
)

// sqlBackend runs a transaction's statements as SQL on a SQL store's
// transaction.
type sqlBackend struct {
	tx      collect.SQLTx
	dialect string
}

// stmt renders a statement written with ? placeholders in the dialect
// ($1, $2, … for PostgreSQL).
func stmt(dialect, q string) string {
	if dialect != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// wherePK is "k1 = ? AND k2 = ? …" for the first n key columns.
func wherePK(t *table, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = t.pk[i].name + " = ?"
	}
	return strings.Join(parts, " AND ")
}

func args(vals []int64) []any {
	a := make([]any, len(vals))
	for i, v := range vals {
		a[i] = v
	}
	return a
}

func (b sqlBackend) query(ctx context.Context, q string, a []any) ([][]int64, error) {
	return b.tx.Query(ctx, stmt(b.dialect, q), a...)
}

func (b sqlBackend) exec(ctx context.Context, q string, a []any) (int64, error) {
	return b.tx.Exec(ctx, stmt(b.dialect, q), a...)
}

func (b sqlBackend) get(ctx context.Context, t *table, pk []int64, cols []string, lock bool) ([]int64, bool, error) {
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + t.sqlName + " WHERE " + wherePK(t, len(t.pk))
	if lock {
		q += " FOR UPDATE"
	}
	rows, err := b.query(ctx, q, args(pk))
	if err != nil || len(rows) == 0 {
		return nil, false, err
	}
	return rows[0], true, nil
}

func (b sqlBackend) update(ctx context.Context, t *table, pk []int64, sets []set) (bool, error) {
	parts := make([]string, len(sets))
	a := make([]any, 0, len(sets)+len(pk))
	for i, s := range sets {
		if s.add {
			parts[i] = s.col + " = " + s.col + " + ?"
		} else {
			parts[i] = s.col + " = ?"
		}
		a = append(a, s.val)
	}
	n, err := b.exec(ctx, "UPDATE "+t.sqlName+" SET "+strings.Join(parts, ", ")+" WHERE "+wherePK(t, len(t.pk)), append(a, args(pk)...))
	return n == 1, err
}

func (b sqlBackend) insert(ctx context.Context, t *table, pk []int64, cols []string, vals []int64) error {
	names := append(t.keyNames(), cols...)
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	_, err := b.exec(ctx, "INSERT INTO "+t.sqlName+" ("+strings.Join(names, ", ")+") VALUES ("+marks+")", args(append(append([]int64{}, pk...), vals...)))
	return err
}

func (b sqlBackend) delete(ctx context.Context, t *table, pk []int64, _ []int64) (bool, error) {
	n, err := b.exec(ctx, "DELETE FROM "+t.sqlName+" WHERE "+wherePK(t, len(t.pk)), args(pk))
	return n == 1, err
}

func (b sqlBackend) scan(ctx context.Context, t *table, s scan, cols []string) ([][]int64, error) {
	keys := t.keyNames()
	q := "SELECT " + strings.Join(append(keys, cols...), ", ") + " FROM " + t.sqlName
	var conds []string
	a := args(s.prefix)
	if len(s.prefix) > 0 {
		conds = append(conds, wherePK(t, len(s.prefix)))
	}
	next := keys[len(s.prefix)]
	if s.lo > 0 {
		conds = append(conds, next+" >= ?")
		a = append(a, s.lo)
	}
	if s.hi > 0 {
		conds = append(conds, next+" < ?")
		a = append(a, s.hi)
	}
	if s.where != "" {
		conds = append(conds, s.where+" = ?")
		a = append(a, s.eq)
	}
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	order := keys[len(s.prefix):]
	if s.desc {
		order = append([]string{next + " DESC"}, order[1:]...)
	}
	q += " ORDER BY " + strings.Join(order, ", ")
	if s.limit > 0 {
		q += " LIMIT " + strconv.Itoa(s.limit)
	}
	return b.query(ctx, q, a)
}

// createSQL creates the tables in st and loads the rows load emits.
func createSQL(ctx context.Context, st collect.SQLStore, tables []*table, load func(emit func(t *table, pk []int64, vals ...int64))) error {
	engine := ""
	if st.Dialect() == "mariadb" {
		engine = " ENGINE=InnoDB"
	}
	for _, t := range tables {
		t.sqlName = st.AppTable(t.name)
		var defs []string
		for _, c := range t.keyNames() {
			defs = append(defs, c+" BIGINT NOT NULL")
		}
		all, _ := withVersions(t, t.cols)
		for _, c := range all {
			defs = append(defs, c+" BIGINT NOT NULL")
		}
		defs = append(defs, "PRIMARY KEY ("+strings.Join(t.keyNames(), ", ")+")")
		if err := st.Exec(ctx, "CREATE TABLE "+t.sqlName+" ("+strings.Join(defs, ", ")+")"+engine); err != nil {
			return fmt.Errorf("creating table %s: %w", t.sqlName, err)
		}
		for i, ix := range t.index {
			// PostgreSQL's index names share the schema; MariaDB's are
			// the table's.
			name := fmt.Sprintf("i%d", i)
			if st.Dialect() == "postgres" {
				name = t.sqlName + "_" + name
			}
			if err := st.Exec(ctx, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", name, t.sqlName, strings.Join(ix, ", "))); err != nil {
				return fmt.Errorf("indexing table %s: %w", t.sqlName, err)
			}
		}
	}
	// Rows go in batches of multi-row INSERTs, every version 0: the
	// history's initial transaction.
	const batch = 500
	pending := map[*table][]string{}
	flush := func(t *table) error {
		if len(pending[t]) == 0 {
			return nil
		}
		all, _ := withVersions(t, t.cols)
		q := "INSERT INTO " + t.sqlName + " (" + strings.Join(append(t.keyNames(), all...), ", ") + ") VALUES " + strings.Join(pending[t], ", ")
		pending[t] = pending[t][:0]
		if err := st.Exec(ctx, q); err != nil {
			return fmt.Errorf("loading table %s: %w", t.sqlName, err)
		}
		return nil
	}
	var err error
	load(func(t *table, pk []int64, vals ...int64) {
		if err != nil {
			return
		}
		var row strings.Builder
		row.WriteByte('(')
		for i, v := range append(append(append([]int64{}, pk...), vals...), make([]int64, len(t.groups))...) {
			if i > 0 {
				row.WriteString(", ")
			}
			row.WriteString(strconv.FormatInt(v, 10))
		}
		row.WriteByte(')')
		pending[t] = append(pending[t], row.String())
		if len(pending[t]) >= batch {
			err = flush(t)
		}
	})
	if err != nil {
		return err
	}
	for _, t := range tables {
		if err := flush(t); err != nil {
			return err
		}
	}
	if st.Dialect() == "postgres" {
		for _, t := range tables {
			if err := st.Exec(ctx, "ANALYZE "+t.sqlName); err != nil {
				return fmt.Errorf("analyzing table %s: %w", t.sqlName, err)
			}
		}
	}
	return nil
}
