package memstore

import (
	"context"

	"github.com/hyperiso/hyperiso/collect"
)

// Rows: a row is a key whose versions may be absent (version.gone); a
// range read reads every key of its range as a point read would, and
// counts as a read of each of them for serializable validation, which so
// covers the keys it found absent: a phantom fails the validation.

// SetupRows implements collect.RowStore: only rows are live.
func (s *Store) SetupRows(_ context.Context, rows []collect.Row) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rows {
		s.data[r.Key] = []version{{val: r.Val}}
	}
	return nil
}

// live returns the value of row key as t sees it: its own write, or the
// version at its read timestamp. Called with s.mu held.
func (t *tx) live(key int64) (int64, bool) {
	if v, ok := t.writes[key]; ok {
		return v, !t.gone[key]
	}
	t.reads[key] = true
	return t.c.s.at(key, t.readTS())
}

// Insert implements collect.RowTx.
func (t *tx) Insert(_ context.Context, key, val int64) error {
	t.c.acquire()
	defer t.c.s.mu.Unlock()
	if t.done {
		return errDone
	}
	t.put(key, val, false)
	return nil
}

// Delete implements collect.RowTx: it always writes, as a key-value
// store's delete does (a version of absence).
func (t *tx) Delete(_ context.Context, key int64) (bool, error) {
	t.c.acquire()
	defer t.c.s.mu.Unlock()
	if t.done {
		return false, errDone
	}
	t.put(key, 0, true)
	return true, nil
}

// Select implements collect.RowTx: at one timestamp (readTS), so that a
// range read is atomic at every level.
func (t *tx) Select(_ context.Context, lo, hi int64) ([]collect.Row, error) {
	t.c.acquire()
	defer t.c.s.mu.Unlock()
	if t.done {
		return nil, errDone
	}
	return t.scan(lo, hi), nil
}

// scan returns the live rows of [lo, hi). Called with s.mu held.
func (t *tx) scan(lo, hi int64) []collect.Row {
	var rows []collect.Row
	for k := lo; k < hi; k++ {
		if v, ok := t.live(k); ok {
			rows = append(rows, collect.Row{Key: k, Val: v})
		}
	}
	return rows
}

// DeleteRange implements collect.RowTx.
func (t *tx) DeleteRange(_ context.Context, lo, hi int64) ([]collect.Row, error) {
	t.c.acquire()
	defer t.c.s.mu.Unlock()
	if t.done {
		return nil, errDone
	}
	rows := t.scan(lo, hi)
	for _, r := range rows {
		t.put(r.Key, 0, true)
	}
	return rows, nil
}

// Move implements collect.RowTx: from must be live and to absent as t
// sees them.
func (t *tx) Move(_ context.Context, from, to, val int64) (bool, error) {
	t.c.acquire()
	defer t.c.s.mu.Unlock()
	if t.done {
		return false, errDone
	}
	_, fromLive := t.live(from)
	_, toLive := t.live(to)
	if !fromLive || toLive {
		return false, nil
	}
	t.put(from, 0, true)
	t.put(to, val, false)
	return true, nil
}
