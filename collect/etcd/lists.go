package etcd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/hyperiso/hyperiso/collect"
)

// Lists (collect.ListStore): a list is a key under the run's prefix
// holding its elements in decimal, comma-separated ("" for the empty
// list). etcd has no append, so the STM reads the list and puts it back
// longer; the commit's guard on what was read (every STM level but
// ReadCommitted) makes that an append at commit: a concurrent append to
// the same key fails the guard instead of being overwritten. Under
// ReadCommitted nothing guards the read, and a lost append would be the
// client's doing, not etcd's, so lists refuse that level.

// SetupLists implements collect.ListStore: keys 1…keys hold the empty
// list, on every member.
func (s *Store) SetupLists(ctx context.Context, keys int64) error {
	var rev int64
	for k := int64(1); k <= keys; k += setupBatch {
		var ops []clientv3.Op
		for j := k; j < k+setupBatch && j <= keys; j++ {
			ops = append(ops, clientv3.OpPut(s.key(j), ""))
		}
		resp, err := s.client.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return fmt.Errorf("etcd: seeding lists %s…: %w", s.key(k), err)
		}
		rev = resp.Header.Revision
	}
	return s.applied(ctx, rev)
}

// Append implements collect.ListTx.
func (t *tx) Append(ctx context.Context, key, val int64) error {
	if t.iso == collect.ReadCommitted {
		return fmt.Errorf("etcd: lists need the commit to validate what the append read; read-committed does not")
	}
	cur, err := t.call(ctx, request{op: opRead, key: key})
	if err != nil {
		return err
	}
	next := strconv.FormatInt(val, 10)
	if cur != "" {
		next = cur + "," + next
	}
	_, err = t.call(ctx, request{op: opPutRaw, key: key, raw: next})
	return err
}

// ReadList implements collect.ListTx.
func (t *tx) ReadList(ctx context.Context, key int64) ([]int64, error) {
	v, err := t.call(ctx, request{op: opRead, key: key})
	if err != nil || v == "" {
		return nil, err
	}
	parts := strings.Split(v, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		if out[i], err = strconv.ParseInt(p, 10, 64); err != nil {
			return nil, fmt.Errorf("etcd: key %s holds %q, not a list written by hyperiso", t.s.key(key), v)
		}
	}
	return out, nil
}
