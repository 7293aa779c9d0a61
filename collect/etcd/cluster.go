package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/etcd/etcddirs"
	"github.com/hyperiso/hyperiso/collect/proxy"
)

// Cluster is an etcd cluster running inside this process: members on
// loopback ports, data under one temporary directory. Members can be
// stopped, restarted and paused while clients use the cluster. Each
// member's peer traffic comes in through a proxy of its own (package
// collect/proxy), which knows the sending member of each connection, so
// that members can be cut off from their peers and the traffic between
// them delayed (netfaults.go).
type Cluster struct {
	dir     string
	members []*member
	initial string // the initial-cluster string every member starts with

	mu  sync.Mutex // guards the members' state and the network faults
	net netState
}

type member struct {
	name string
	dir  string
	// peer is the address the member advertises to its peers: its
	// proxy's, which forwards to listen, where the member listens.
	peer, listen, client url.URL
	proxy                *proxy.Proxy
	id                   string      // the member's id, as its peer requests give it (X-Server-From)
	e                    *embed.Etcd // nil while stopped
	paused               bool
}

// DirPrefix begins the name of an embedded cluster's data directory, in
// the temporary directory: DirPrefix + "p" + PID + "-" + random digits.
const DirPrefix = etcddirs.Prefix

// SweepDirs lists the data directories of embedded clusters in the
// temporary directory and removes, if remove, those whose process is gone
// (a killed run's: a few hundred megabytes each).
func SweepDirs(remove bool) ([]collect.Leftover, error) { return etcddirs.Sweep(remove) }

// startTimeout bounds the wait for a member to be ready.
const startTimeout = 60 * time.Second

// StartCluster starts an n-member cluster and waits until every member
// serves clients. Close stops it and removes its data.
func StartCluster(ctx context.Context, n int) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("etcd: a cluster needs at least one member, not %d", n)
	}
	// Named after this process, so that a later run or collect --cleanup
	// removes it if the process is killed (SweepDirs).
	dir, err := os.MkdirTemp("", fmt.Sprintf("%sp%d-*", DirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	ports, err := freePorts(2 * n)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("etcd: finding free loopback ports: %w", err)
	}
	c := &Cluster{dir: dir, net: netState{faults: map[int]netFault{}}}
	var initial []string
	for i := range n {
		m := &member{
			name:   fmt.Sprintf("m%d", i+1),
			dir:    fmt.Sprintf("%s/m%d", dir, i+1),
			listen: url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])},
			client: url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])},
		}
		if m.proxy, err = proxy.Start("tcp", m.listen.Host, proxy.Options{Source: peerSource}); err != nil {
			return nil, errors.Join(fmt.Errorf("etcd: starting member %s's peer proxy: %w", m.name, err), c.Close())
		}
		m.peer = url.URL{Scheme: "http", Host: m.proxy.Addr()}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer.String())
	}
	c.initial = strings.Join(initial, ",")
	// Every member must be starting before any can be ready: readiness
	// takes a quorum.
	for _, m := range c.members {
		if err := c.launch(m); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	for _, m := range c.members {
		if err := ready(ctx, m); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	return c, nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// launch starts m's server (from its data directory, if it has one)
// without waiting for it to be ready.
func (c *Cluster) launch(m *member) error {
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = m.dir
	cfg.ListenPeerUrls = []url.URL{m.listen}
	cfg.AdvertisePeerUrls = []url.URL{m.peer}
	cfg.ListenClientUrls = []url.URL{m.client}
	cfg.AdvertiseClientUrls = []url.URL{m.client}
	cfg.InitialCluster = c.initial
	cfg.InitialClusterToken = "hyperiso"
	cfg.ClusterState = embed.ClusterStateFlagNew
	// A clean shutdown (restart, run end) writes everything out anyway;
	// fsync would only make the shared disk the bottleneck.
	cfg.UnsafeNoFsync = true
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.Metrics = "basic"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("etcd: starting member %s: %w", m.name, err)
	}
	m.e = e
	m.id = e.Server.MemberID().String()
	return nil
}

// ready waits until m serves clients.
func ready(ctx context.Context, m *member) error {
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case <-m.e.Server.ReadyNotify():
		return nil
	case err := <-m.e.Err():
		return fmt.Errorf("etcd: member %s failed: %w", m.name, err)
	case <-t.C:
		return fmt.Errorf("etcd: member %s not ready after %s", m.name, startTimeout)
	case <-ctx.Done():
		return fmt.Errorf("etcd: waiting for member %s: %w", m.name, ctx.Err())
	}
}

// Endpoints returns the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client.String())
	}
	return eps
}

// Size returns the number of members.
func (c *Cluster) Size() int { return len(c.members) }

// Dir returns the directory holding the members' data.
func (c *Cluster) Dir() string { return c.dir }

// Leader returns the index of the member the running members follow, or
// -1 while they have none (or disagree).
func (c *Cluster) Leader() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader()
}

func (c *Cluster) leader() int {
	lead := -1
	for _, m := range c.members {
		if m.e == nil || m.paused {
			continue
		}
		j := c.index(uint64(m.e.Server.Leader()))
		if j < 0 || (lead >= 0 && j != lead) {
			return -1
		}
		lead = j
	}
	return lead
}

// index returns the index of the running member with raft id id, or -1.
func (c *Cluster) index(id uint64) int {
	for j, m := range c.members {
		if id != 0 && m.e != nil && uint64(m.e.Server.MemberID()) == id {
			return j
		}
	}
	return -1
}

// waitLeader waits (up to timeout) until the running members agree on a
// leader and returns it.
func (c *Cluster) waitLeader(ctx context.Context, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		if l := c.Leader(); l >= 0 {
			return l, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return -1, fmt.Errorf("no leader after %s", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops member i: cleanly (pending requests drained, leadership
// handed over) unless hard. A hard stop is a crash as its peers see it:
// the member falls silent at once, hands nothing over, and its clients'
// requests hang until they time out; only then does it shut down. (The
// server cannot simply be halted under its clients: it would serve reads
// from a closed database, which crashes the whole process.)
func (c *Cluster) Stop(i int, hard bool) error {
	c.mu.Lock()
	m := c.members[i]
	e, paused := m.e, m.paused
	m.e, m.paused = nil, false
	c.mu.Unlock()
	if e == nil {
		return fmt.Errorf("member %s is already stopped", m.name)
	}
	if hard {
		if !paused {
			e.Server.PauseSending()
		}
		// Once cut off, a leader steps down when it misses its quorum
		// (an election timeout); closing it earlier would make it try
		// to hand its leadership over, in vain, for seconds.
		deadline := time.Now().Add(stepDownWait)
		for e.Server.Leader() == e.Server.MemberID() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	e.Close()
	return nil
}

// stepDownWait bounds the wait for a cut-off leader to step down.
const stepDownWait = 5 * time.Second

// Start restarts stopped member i from its data and waits until it is
// ready.
func (c *Cluster) Start(ctx context.Context, i int) error {
	c.mu.Lock()
	m := c.members[i]
	if m.e != nil {
		c.mu.Unlock()
		return fmt.Errorf("member %s is already running", m.name)
	}
	err := c.launch(m)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return ready(ctx, m)
}

// Pause cuts member i off from its peers (raft messages neither sent nor
// received) until Resume; its clients' requests stall meanwhile, save
// the reads it may serve from its own, now stale, state.
func (c *Cluster) Pause(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[i]
	switch {
	case m.e == nil:
		return fmt.Errorf("member %s is stopped", m.name)
	case m.paused:
		return fmt.Errorf("member %s is already paused", m.name)
	}
	m.e.Server.PauseSending()
	m.paused = true
	return nil
}

// Resume reconnects member i to its peers.
func (c *Cluster) Resume(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[i]
	if m.e == nil || !m.paused {
		return fmt.Errorf("member %s is not paused", m.name)
	}
	m.e.Server.ResumeSending()
	m.paused = false
	return nil
}

// Close stops every member and its proxy and removes the data directory.
func (c *Cluster) Close() error {
	c.StopAll()
	for _, m := range c.members {
		m.proxy.Close()
	}
	return os.RemoveAll(c.dir)
}

// StopAll stops every member, leaving the data directory in place.
func (c *Cluster) StopAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var es []*embed.Etcd
	for _, m := range c.members {
		if m.e != nil {
			es = append(es, m.e)
			m.e, m.paused = nil, false
		}
	}
	// Stopping the servers first, all at once, spares each the graceful
	// leave (leadership transfer, draining) the others would not answer.
	var wg sync.WaitGroup
	for _, e := range es {
		wg.Go(e.Server.HardStop)
	}
	wg.Wait()
	for _, e := range es {
		wg.Go(e.Close)
	}
	wg.Wait()
}
