package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/hyperiso/hyperiso/collect/proxy"
)

func TestPeerSource(t *testing.T) {
	req := "POST /raft HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-Server-From: 8e9e05c52164694d\r\nX-Raft-To: 1\r\n\r\n"
	require.Equal(t, "8e9e05c52164694d", peerSource([]byte(req)))
	require.Equal(t, "", peerSource([]byte(req[:50])), "the header not yet whole")
	require.Equal(t, "", peerSource([]byte("GET /version HTTP/1.1\r\nHost: x\r\n\r\n")))
}

// memberView is the leader as member j sees it, as an index (-1: none).
func (c *Cluster) memberView(j int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[j]
	if m.e == nil {
		return -1
	}
	return c.index(uint64(m.e.Server.Leader()))
}

// A partition cuts the member off both ways: the others elect a new leader
// (they no longer hear it), and the old leader steps down and never hears
// of the new one (whose messages would come on connections the old leader
// opened); once lifted, the cluster agrees on one leader again. A delay
// between members slows every write by a round trip between them.
func TestPartitionAndDelayTakeEffect(t *testing.T) {
	ctx := context.Background()
	c, err := StartCluster(ctx, 3)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	lead, err := c.waitLeader(ctx, leaderWait)
	require.NoError(t, err)
	id := c.addNet(netFault{isolate: lead})
	others := []int{(lead + 1) % 3, (lead + 2) % 3}
	require.Eventually(t, func() bool {
		a, b := c.memberView(others[0]), c.memberView(others[1])
		return a >= 0 && a == b && a != lead && c.memberView(lead) == -1
	}, 10*time.Second, 20*time.Millisecond, "the majority elects a new leader and the old one steps down")
	for range 50 {
		require.Equal(t, -1, c.memberView(lead), "the member cut off hears of the new leader")
		time.Sleep(20 * time.Millisecond)
	}
	c.removeNet(id)
	lead, err = c.waitLeader(ctx, leaderWait)
	require.NoError(t, err)

	cl, err := clientv3.New(clientv3.Config{Endpoints: []string{c.members[lead].client.String()}, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cl.Close()
	put := func() time.Duration {
		t0 := time.Now()
		_, err := cl.Put(ctx, "hyperiso-test-delay", "x")
		require.NoError(t, err)
		return time.Since(t0)
	}
	// The member that rejoined may still unsettle the leadership: the
	// first write may fail, and is retried.
	require.Eventually(t, func() bool {
		_, err := cl.Put(ctx, "hyperiso-test-delay", "x")
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "writes succeed once the partition is lifted")
	const d = 150 * time.Millisecond
	id = c.addNet(netFault{isolate: -1, delay: proxy.Delay{Fixed: d}})
	// The leader appends, a follower acknowledges: each way delayed.
	require.GreaterOrEqual(t, put(), 2*d)
	c.removeNet(id)
	require.Eventually(t, func() bool { return put() < d }, 5*time.Second, 10*time.Millisecond, "writes fast again once the delay is lifted")
}
