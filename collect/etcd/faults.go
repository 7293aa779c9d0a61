package etcd

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hyperiso/hyperiso/collect"
)

// leaderWait bounds the wait for a leader before a fault aimed at it, and
// restartTimeout the wait for a restarted member to be ready.
const (
	leaderWait     = 10 * time.Second
	restartTimeout = time.Minute
)

// CheckFault implements collect.Faulter: member faults on the embedded
// cluster only.
func (s *Store) CheckFault(f collect.Fault) error {
	if s.cluster == nil {
		return fmt.Errorf("etcd: faults need the embedded cluster (--db etcd), not an existing one")
	}
	switch f.Kind {
	case "restart", "kill", "pause":
	default:
		return fmt.Errorf("etcd: fault %s not supported (want restart, kill or pause)", f.Kind)
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
	if f.Target == "leader" {
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
func (s *Store) Inject(ctx context.Context, f collect.Fault) (string, error) {
	i, who, err := s.target(ctx, f)
	if err != nil {
		return "", err
	}
	c := s.cluster
	t0 := time.Now()
	switch f.Kind {
	case "pause":
		if err := c.Pause(i); err != nil {
			return "", err
		}
		collect.Sleep(ctx, f.For)
		if err := c.Resume(i); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s paused for %s", who, time.Since(t0).Round(time.Millisecond)), nil
	default: // restart, kill
		if err := c.Stop(i, f.Kind == "kill"); err != nil {
			return "", err
		}
		stopped := time.Since(t0)
		collect.Sleep(ctx, f.For-stopped)
		// Restart even when the run is ending: the cluster is torn down
		// whole, and a later fault may aim at this member.
		rctx, cancel := context.WithTimeout(context.Background(), restartTimeout)
		defer cancel()
		if err := c.Start(rctx, i); err != nil {
			return "", err
		}
		verb := "stopped"
		if f.Kind == "kill" {
			verb = "killed"
		}
		return fmt.Sprintf("%s %s (in %s), back after %s", who, verb, stopped.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond)), nil
	}
}
