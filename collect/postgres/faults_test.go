package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

// TestKillConns: the server drops the sessions' connections every 50ms;
// the sessions reconnect, a commit whose answer was lost is unknown, and
// the history still checks at SER.
func TestKillConns(t *testing.T) {
	st := open(t)
	require.ErrorContains(t, st.CheckFault(collect.Fault{Kind: "restart", Target: "leader"}), "fault restart not supported (want kill-conns)")
	faults, err := collect.ParseFaults("kill-conns@10ms/50ms")
	require.NoError(t, err)
	w := dbtest.Workload(t, "general", func(c *workload.Config) {
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys = 6, 40, 6, 100, 0
	})
	h, sum, err := collect.Run(context.Background(), st, w, collect.Options{Isolation: collect.Serializable, Faults: faults, Times: true})
	require.NoError(t, err)
	t.Logf("%s", sum)
	require.Positive(t, sum.Faults)
	require.Zero(t, sum.FaultErrors)
	require.Contains(t, sum.FaultLog[0], "session connections")
	require.Equal(t, sum.Planned, sum.Transactions)
	stats := h.Stats()
	require.Equal(t, sum.Unknown, stats.Unknown)
	require.Positive(t, stats.Committed)
	res := dbtest.Verdict(t, dbtest.RoundTrip(t, h), history.SER)
	require.Equal(t, check.Satisfied, res.Verdict, dbtest.Describe(res))
}
