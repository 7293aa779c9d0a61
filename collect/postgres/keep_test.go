package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/postgres"
	"github.com/hyperiso/hyperiso/collect/workload"
)

// TestKeepTableAfterKilledConnections: every connection of a complete run
// with --keep-table is terminated before teardown (the server restarted,
// an administrator's pg_terminate_backend); keeping the table needs no
// connection, so the run succeeds and the table is there.
func TestKeepTableAfterKilledConnections(t *testing.T) {
	url, schema, probe := dbtest.PostgresScratch(t)
	// Over TLS (where the server offers it, as by default with sslmode
	// prefer), closing a dead connection fails: its close_notify finds
	// the socket reset.
	st, err := postgres.Open(context.Background(), strings.Replace(url, "sslmode=disable", "sslmode=prefer", 1))
	require.NoError(t, err)
	w := dbtest.Workload(t, "general", func(c *workload.Config) { general(5, 0)(c); c.Sessions, c.Txns = 2, 20 })
	// Only this run's connections are terminated: the scratch URL names
	// them after the schema.
	done := 0
	opt := collect.Options{KeepTable: true, Progress: func() {
		if done++; done == 10 {
			var n int
			require.NoError(t, probe.QueryRow(context.Background(),
				"SELECT count(*) FROM pg_stat_activity WHERE CASE WHEN application_name = $1 AND pid <> pg_backend_pid() THEN pg_terminate_backend(pid) END", schema).Scan(&n))
			require.Equal(t, 3, n, "the sessions' and the control connection")
		}
	}}
	_, sum, err := collect.Run(context.Background(), st, w, opt)
	require.NoError(t, err)
	require.Equal(t, sum.Planned, sum.Transactions)
	require.Equal(t, []string{st.Table()}, dbtest.PostgresTables(t, probe, schema))
}
