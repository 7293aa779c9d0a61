package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
)

// TestRunSweepsOrphanedTables: the table of a killed run (its process
// gone) is dropped by the next run, which says so; a live run's table and
// a kept one stay. --keep-table names the table so that no sweep takes it.
func TestRunSweepsOrphanedTables(t *testing.T) {
	url, schema, probe := dbtest.PostgresScratch(t)
	ctx := context.Background()
	dbtest.SweepsOrphanedTables(t,
		func(name string) error {
			_, err := probe.Exec(ctx, "CREATE TABLE "+pgx.Identifier{schema, name}.Sanitize()+" (k BIGINT)")
			return err
		},
		func() (dbtest.TabledStore, error) { return postgres.Open(ctx, url) },
		func() []string { return dbtest.PostgresTables(t, probe, schema) },
		dbtest.Workload(t, "general", func(c *workload.Config) { general(5, 0)(c); c.Sessions, c.Txns = 2, 5 }))
}
