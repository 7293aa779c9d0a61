package etcd

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/proxy"
)

// leaderWait bounds the wait for a leader before a fault aimed at it, and
// restartTimeout the wait for a restarted member to be ready.
const (
	leaderWait     = 10 * time.Second
	restartTimeout = time.Minute
)

// CheckFault implements collect.Faulter: member faults, partitions and
// delays between members, on the embedded cluster only.
func (s *Store) CheckFault(f collect.Fault) error {
	if s.cluster == nil {
		return fmt.Errorf("etcd: faults need the embedded cluster (--db etcd), not an existing one")
	}
	switch f.Kind {
	case "restart", "kill", "pause", "partition":
	case "delay":
		return nil
	default:
		return fmt.Errorf("etcd: fault %s not supported (want restart, kill, pause, partition or delay)", f.Kind)
	}
	if n, err := strconv.Atoi(f.Target); err == nil && n > s.cluster.Size() {
		return fmt.Errorf("etcd: member %d does not exist (the cluster has %d)", n, s.cluster.Size())
	}
	if f.Target == "follower" && s.cluster.Size() < 2 {
		return fmt.Errorf("etcd: a one-member cluster has no follower")
	}
	return nil
}

// target resolves f's target to a member index.
func (s *Store) target(ctx context.Context, f collect.Fault) (int, string, error) {
	c := s.cluster
	if n, err := strconv.Atoi(f.Target); err == nil {
		i := n - 1
		role := "follower"
		if c.Leader() == i {
			role = "leader"
		}
		return i, fmt.Sprintf("member %d (%s)", n, role), nil
	}
	lead, err := c.waitLeader(ctx, leaderWait)
	if err != nil {
		return -1, "", err
	}
	if f.Target == "leader" || f.Target == "" {
		return lead, fmt.Sprintf("member %d (leader)", lead+1), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range c.members {
		if i != lead && m.e != nil && !m.paused {
			return i, fmt.Sprintf("member %d (follower)", i+1), nil
		}
	}
	return -1, "", fmt.Errorf("no running follower")
}

// Inject implements collect.Faulter.
func (s *Store) Inject(ctx context.Context, f collect.Fault, began func(string)) (string, error) {
	c := s.cluster
	t0 := time.Now()
	if f.Kind == "delay" {
		id := c.addNet(netFault{isolate: -1, delay: proxy.Delay{Fixed: f.Delay, Jitter: f.Jitter}})
		began(fmt.Sprintf("messages between members delayed by %s", f.Target))
		collect.Sleep(ctx, f.For)
		c.removeNet(id)
		return fmt.Sprintf("delay lifted after %s", time.Since(t0).Round(time.Millisecond)), nil
	}
	i, who, err := s.target(ctx, f)
	if err != nil {
		return "", err
	}
	switch f.Kind {
	case "partition":
		id := c.addNet(netFault{isolate: i})
		began(who + " cut off from its peers")
		collect.Sleep(ctx, f.For)
		c.removeNet(id)
		return fmt.Sprintf("%s reconnected after %s", who, time.Since(t0).Round(time.Millisecond)), nil
	case "pause":
		if err := c.Pause(i); err != nil {
			return "", err
		}
		began(who + " paused")
		collect.Sleep(ctx, f.For)
		if err := c.Resume(i); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s resumed after %s", who, time.Since(t0).Round(time.Millisecond)), nil
	default: // restart, kill
		if err := c.Stop(i, f.Kind == "kill"); err != nil {
			return "", err
		}
		stopped := time.Since(t0)
		verb := "stopped"
		if f.Kind == "kill" {
			verb = "killed"
		}
		began(fmt.Sprintf("%s %s (in %s)", who, verb, stopped.Round(time.Millisecond)))
		collect.Sleep(ctx, f.For-stopped)
		// Restart even when the run is ending: the cluster is torn down
		// whole, and a later fault may aim at this member.
		rctx, cancel := context.WithTimeout(context.Background(), restartTimeout)
		defer cancel()
		if err := c.Start(rctx, i); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s back after %s", who, time.Since(t0).Round(time.Millisecond)), nil
	}
}

// The store injects faults.
var _ collect.Faulter = (*Store)(nil)
