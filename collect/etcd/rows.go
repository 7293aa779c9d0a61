package etcd

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/hyperiso/hyperiso/collect"
)

// Rows (collect.RowStore): a row is a key under the run's prefix; an
// absent row is a missing key. The STM has no range read, so a range read
// gets each key of its range through the STM: the keys it found missing
// are in the STM's read set as well (a missing key's guard is "not
// created since"), and the commit validates them as it validates point
// reads. At the snapshot levels the STM reads every key at one revision,
// so the range read is atomic there.

// SetupRows implements collect.RowStore: rows are put, every other key is
// missing.
func (s *Store) SetupRows(ctx context.Context, rows []collect.Row) error {
	var ops []clientv3.Op
	for _, r := range rows {
		ops = append(ops, clientv3.OpPut(s.key(r.Key), strconv.FormatInt(r.Val, 10)))
	}
	if len(ops) > setupBatch {
		return fmt.Errorf("etcd: %d initial rows, at most %d", len(ops), setupBatch)
	}
	resp, err := s.client.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("etcd: seeding rows under %s: %w", s.prefix, err)
	}
	return s.applied(ctx, resp.Header.Revision)
}

// Insert implements collect.RowTx: a put.
func (t *tx) Insert(ctx context.Context, key, val int64) error { return t.Write(ctx, key, val) }

// Delete implements collect.RowTx: the STM's delete, which is in its write
// set (at SerializableSnapshot, the commit fails if the key changed since
// the snapshot, present or not), so it always counts as a write.
func (t *tx) Delete(ctx context.Context, key int64) (bool, error) {
	_, err := t.call(ctx, request{op: opDelete, key: key})
	return err == nil, err
}

// Select implements collect.RowTx.
func (t *tx) Select(ctx context.Context, lo, hi int64) ([]collect.Row, error) {
	var rows []collect.Row
	for k := lo; k < hi; k++ {
		v, ok, err := t.Read(ctx, k)
		if err != nil {
			return nil, err
		}
		if ok {
			rows = append(rows, collect.Row{Key: k, Val: v})
		}
	}
	return rows, nil
}

// DeleteRange implements collect.RowTx.
func (t *tx) DeleteRange(ctx context.Context, lo, hi int64) ([]collect.Row, error) {
	rows, err := t.Select(ctx, lo, hi)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if _, err := t.Delete(ctx, r.Key); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// Move implements collect.RowTx: from must be present and to missing, as
// the STM reads them.
func (t *tx) Move(ctx context.Context, from, to, val int64) (bool, error) {
	_, fromLive, err := t.Read(ctx, from)
	if err != nil {
		return false, err
	}
	_, toLive, err := t.Read(ctx, to)
	if err != nil || !fromLive || toLive {
		return false, err
	}
	if _, err := t.Delete(ctx, from); err != nil {
		return false, err
	}
	return true, t.Write(ctx, to, val)
}
