package apps

import (
	"context"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/workload"
)

// kvBackend runs a transaction's statements on a key-value store's
// transaction: a row is a key per data column, a key per version column
// (the history's own key of the group) and a key that says it exists, all
// read and written inside the transaction, so the store's isolation
// covers them as SQL's covers a row. A scan reads the existence of every
// candidate key in its range, as a store without an index would.
type kvBackend struct {
	tx workload.KV
}

// key is the store's key of column c (a data or version column) of row r.
func (t *table) key(c string, r int64) int64 {
	if i := slices.Index(t.cols, c); i >= 0 {
		return t.dataKey(i, r)
	}
	g, ok := t.colGroup[c]
	if !ok {
		panic(fmt.Sprintf("apps: table %s has no column %s", t.name, c))
	}
	return t.versionKey(g, r)
}

func (b kvBackend) exists(ctx context.Context, t *table, r int64) (bool, error) {
	v, found, err := b.tx.Read(ctx, t.existsKey(r))
	return found && v == 1, err
}

func (b kvBackend) get(ctx context.Context, t *table, pk []int64, cols []string, _ bool) ([]int64, bool, error) {
	r, err := t.row(pk)
	if err != nil {
		return nil, false, err
	}
	if ok, err := b.exists(ctx, t, r); err != nil || !ok {
		return nil, false, err
	}
	vals := make([]int64, len(cols))
	for i, c := range cols {
		if vals[i], _, err = b.tx.Read(ctx, t.key(c, r)); err != nil {
			return nil, false, err
		}
	}
	return vals, true, nil
}

func (b kvBackend) update(ctx context.Context, t *table, pk []int64, sets []set) (bool, error) {
	r, err := t.row(pk)
	if err != nil {
		return false, err
	}
	if ok, err := b.exists(ctx, t, r); err != nil || !ok {
		return false, err
	}
	for _, s := range sets {
		v := s.val
		if s.add {
			old, _, err := b.tx.Read(ctx, t.key(s.col, r))
			if err != nil {
				return false, err
			}
			v += old
		}
		if err := b.tx.Write(ctx, t.key(s.col, r), v); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (b kvBackend) insert(ctx context.Context, t *table, pk []int64, cols []string, vals []int64) error {
	r, err := t.row(pk)
	if err != nil {
		return err
	}
	if ok, err := b.exists(ctx, t, r); err != nil {
		return err
	} else if ok {
		return collect.Aborted(fmt.Sprintf("%s: duplicate key", t.name), nil)
	}
	if err := b.tx.Write(ctx, t.existsKey(r), 1); err != nil {
		return err
	}
	for i, c := range cols {
		if err := b.tx.Write(ctx, t.key(c, r), vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func (b kvBackend) delete(ctx context.Context, t *table, pk []int64, vers []int64) (bool, error) {
	r, err := t.row(pk)
	if err != nil {
		return false, err
	}
	if ok, err := b.exists(ctx, t, r); err != nil || !ok {
		return false, err
	}
	// The versions too: a deletion conflicts with a write of any group.
	for g, v := range vers {
		if err := b.tx.Write(ctx, t.versionKey(g, r), v); err != nil {
			return false, err
		}
	}
	return true, b.tx.Write(ctx, t.existsKey(r), 0)
}

func (b kvBackend) scan(ctx context.Context, t *table, s scan, cols []string) ([][]int64, error) {
	n := len(s.prefix)
	lo, hi := max(s.lo, 1), t.pk[n].bound+1
	if s.hi > 0 {
		hi = min(s.hi, hi)
	}
	var out [][]int64
	pk := make([]int64, len(t.pk))
	copy(pk, s.prefix)
	// visit walks the key columns after the next one, in order.
	var visit func(i int) (bool, error)
	visit = func(i int) (bool, error) {
		if i < len(t.pk) {
			for v := int64(1); v <= t.pk[i].bound; v++ {
				pk[i] = v
				if done, err := visit(i + 1); done || err != nil {
					return done, err
				}
			}
			return false, nil
		}
		r, _ := t.row(pk)
		if ok, err := b.exists(ctx, t, r); err != nil || !ok {
			return false, err
		}
		if s.where != "" {
			v, _, err := b.tx.Read(ctx, t.key(s.where, r))
			if err != nil || v != s.eq {
				return false, err
			}
		}
		row := slices.Clone(pk)
		for _, c := range cols {
			v, _, err := b.tx.Read(ctx, t.key(c, r))
			if err != nil {
				return false, err
			}
			row = append(row, v)
		}
		out = append(out, row)
		return s.limit > 0 && len(out) >= s.limit, nil
	}
	for k := range hi - lo {
		v := lo + k
		if s.desc {
			v = hi - 1 - k
		}
		pk[n] = v
		if done, err := visit(n + 1); done || err != nil {
			return out, err
		}
	}
	return out, nil
}

// loadKV loads the rows load emits into a key-value store, over a
// connection of its own, every version 0, in transactions of at most
// loadBatch writes (etcd bounds a transaction's operations; the load is
// over before any session starts, so it need not be one transaction).
func loadKV(ctx context.Context, st collect.Store, load func(emit func(t *table, pk []int64, vals ...int64))) error {
	c, err := st.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var (
		tx collect.Tx
		n  int
	)
	write := func(k, v int64) {
		if err != nil {
			return
		}
		if tx == nil {
			if tx, err = c.Begin(ctx, collect.Serializable); err != nil {
				return
			}
		}
		if err = tx.Write(ctx, k, v); err != nil {
			return
		}
		if n++; n == loadBatch {
			err, tx, n = tx.Commit(ctx), nil, 0
		}
	}
	load(func(t *table, pk []int64, vals ...int64) {
		r, e := t.row(pk)
		if e != nil && err == nil {
			err = e
		}
		write(t.existsKey(r), 1)
		for i, v := range vals {
			write(t.dataKey(i, r), v)
		}
		for g := range t.groups {
			write(t.versionKey(g, r), 0)
		}
	})
	switch {
	case err != nil && tx != nil:
		_ = tx.Abort(ctx)
	case tx != nil:
		err = tx.Commit(ctx)
	}
	return err
}

// loadBatch bounds the writes of one loading transaction.
const loadBatch = 100
