package postgres_test

import (
	"context"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
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
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	orphan, live := collect.TableNameOf(gone.Process.Pid), collect.TableName()
	kept := collect.KeptTableName()
	for _, name := range []string{orphan, live, kept} {
		_, err := probe.Exec(ctx, "CREATE TABLE "+pgx.Identifier{schema, name}.Sanitize()+" (k BIGINT)")
		require.NoError(t, err)
	}
	st, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	w := dbtest.Workload(t, "general", func(c *workload.Config) { general(5, 0)(c); c.Sessions, c.Txns = 2, 5 })
	_, sum, err := collect.Run(ctx, st, w, collect.Options{KeepTable: true})
	require.NoError(t, err)
	require.Equal(t, []string{"removed table " + orphan + " (process " + strconv.Itoa(gone.Process.Pid) + " is gone)"}, sum.Swept)
	require.Contains(t, sum.String(), sum.Swept[0])
	tables := dbtest.PostgresTables(t, probe, schema)
	slices.Sort(tables)
	want := []string{live, kept, st.Table()}
	slices.Sort(want)
	require.Equal(t, want, tables)
	l, ok := collect.ClassifyTable(st.Table())
	require.True(t, ok)
	require.Equal(t, "kept (--keep-table)", l.Note)
}
