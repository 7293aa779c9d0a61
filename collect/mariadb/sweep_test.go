package mariadb_test

import (
	"context"
	"testing"

	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/mariadb"
	"github.com/hyperiso/hyperiso/collect/workload"
)

// TestRunSweepsOrphanedTables: the table of a killed run (its process
// gone) is dropped by the next run, which says so; a live run's table and
// a kept one stay. --keep-table names the table so that no sweep takes it.
func TestRunSweepsOrphanedTables(t *testing.T) {
	url, schema, probe := dbtest.MariaDBScratch(t)
	ctx := context.Background()
	dbtest.SweepsOrphanedTables(t,
		func(name string) error {
			_, err := probe.ExecContext(ctx, "CREATE TABLE "+schema+".`"+name+"` (k BIGINT)")
			return err
		},
		func() (dbtest.TabledStore, error) { return mariadb.Open(ctx, url) },
		func() []string { return dbtest.MariaDBTables(t, probe, schema) },
		dbtest.Workload(t, "general", func(c *workload.Config) { c.Sessions, c.Txns, c.Ops, c.Keys = 2, 5, 4, 20 }))
}
