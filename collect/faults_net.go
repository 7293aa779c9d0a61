package collect

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/hyperiso/hyperiso/collect/proxy"
)

// NetFaults injects the network faults (NetworkFaults) between a store's
// sessions and its server, through a proxy on loopback that the store's
// sessions connect to once Prepare has started it; the store's own
// connections (setup, teardown, kill-conns) keep going straight to the
// server. Faults that overlap add up: their delays sum, and traffic is
// held while any holds it. The SQL stores embed one.
type NetFaults struct {
	mu     sync.Mutex
	p      *proxy.Proxy
	active map[int]proxy.Cond
	next   int
}

// Prepare starts the proxy to the server at addr (network "tcp" or
// "unix"), once.
func (n *NetFaults) Prepare(network, addr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p != nil {
		return nil
	}
	p, err := proxy.Start(network, addr, proxy.Options{})
	if err != nil {
		return fmt.Errorf("starting the fault proxy to %s: %w", addr, err)
	}
	n.p, n.active = p, map[int]proxy.Cond{}
	return nil
}

// Addr is the address the sessions connect to: the proxy's, or "" when
// there is none (they connect to the server).
func (n *NetFaults) Addr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p == nil {
		return ""
	}
	return n.p.Addr()
}

// Close stops the proxy, if it runs.
func (n *NetFaults) Close() {
	n.mu.Lock()
	p := n.p
	n.p = nil
	n.mu.Unlock()
	if p != nil {
		p.Close()
	}
}

// Inject implements Faulter.Inject for the network faults: delay (every
// byte each way), partition (nothing gets through, nothing is lost) and
// drop (every session connection reset, and new ones held for For).
func (n *NetFaults) Inject(ctx context.Context, f Fault, began func(string)) (string, error) {
	n.mu.Lock()
	p := n.p
	n.mu.Unlock()
	if p == nil {
		return "", fmt.Errorf("fault %s: no proxy (CheckFault was not called)", f)
	}
	var c proxy.Cond
	var what string
	switch f.Kind {
	case "delay":
		d := proxy.Delay{Fixed: f.Delay, Jitter: f.Jitter}
		c = proxy.Cond{Up: d, Down: d}
		what = fmt.Sprintf("session traffic delayed by %s each way (%d connections)", f.Target, p.Conns())
	case "partition":
		c = proxy.Cond{Hold: true}
		what = fmt.Sprintf("session traffic held (%d connections)", p.Conns())
	case "drop":
		c = proxy.Cond{Hold: true}
		if f.For <= 0 {
			return fmt.Sprintf("reset %d session connections", p.Reset()), nil
		}
	default:
		return "", fmt.Errorf("fault %s is not a network fault", f.Kind)
	}
	t0 := time.Now()
	id := n.set(p, -1, c)
	if f.Kind == "drop" {
		// Held first, so that no session reconnects between the two.
		what = fmt.Sprintf("reset %d session connections, new ones held", p.Reset())
	}
	began(what)
	Sleep(ctx, f.For)
	n.set(p, id, proxy.Cond{})
	return fmt.Sprintf("lifted after %s", time.Since(t0).Round(time.Millisecond)), nil
}

// set adds c to the active conditions (id < 0), or removes condition id,
// applies their sum and returns c's id.
func (n *NetFaults) set(p *proxy.Proxy, id int, c proxy.Cond) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id < 0 {
		id = n.next
		n.next++
		n.active[id] = c
	} else {
		delete(n.active, id)
	}
	var sum proxy.Cond
	for _, a := range n.active {
		sum = AddConds(sum, a)
	}
	p.Set(sum, nil)
	return id
}

// AddConds is what two network conditions make together: delays add up,
// and a hold holds.
func AddConds(a, b proxy.Cond) proxy.Cond {
	add := func(x, y proxy.Delay) proxy.Delay {
		return proxy.Delay{Fixed: x.Fixed + y.Fixed, Jitter: x.Jitter + y.Jitter}
	}
	return proxy.Cond{Up: add(a.Up, b.Up), Down: add(a.Down, b.Down), Hold: a.Hold || b.Hold}
}

// addrs matches the IPv4 and bracketed IPv6 addresses, with their ports,
// that connection errors name ("read tcp 127.0.0.1:41234->127.0.0.1:5432:
// … reset by peer").
var addrs = regexp.MustCompile(`(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]):\d+`)

// reasonText is an error as the summary's reasons count it: shortened,
// without the addresses of the connection it names, so that the errors a
// network fault causes on every connection count as one reason.
func reasonText(err error) string { return addrs.ReplaceAllString(short(err), "…") }
