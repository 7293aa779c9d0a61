package postgres

import (
	"context"

	"github.com/hyperiso/hyperiso/collect"
)

// TxIsolation returns the level the server runs t at, as SHOW names it.
func TxIsolation(ctx context.Context, t collect.Tx) (string, error) {
	var s string
	err := t.(*tx).t.QueryRow(ctx, "SHOW transaction_isolation").Scan(&s)
	return s, err
}
