package etcd

import (
	"bytes"

	"github.com/hyperiso/hyperiso/collect/proxy"
)

// netState is the network faults in force between the members.
type netState struct {
	faults map[int]netFault
	next   int
}

// netFault is one network fault: a member cut off from its peers, or a
// delay on every message between members.
type netFault struct {
	isolate int // the member cut off, or -1
	delay   proxy.Delay
}

// peerSource names the member that opened a peer connection, from the
// X-Server-From header etcd's raft requests carry (stream, pipeline and
// snapshot); other peer requests (version probes, …) carry none, and
// their connections take the condition common to all.
func peerSource(sent []byte) string {
	const h = "\r\nX-Server-From: "
	_, rest, ok := bytes.Cut(sent, []byte(h))
	if !ok {
		return ""
	}
	id, _, ok := bytes.Cut(rest, []byte("\r\n"))
	if !ok {
		return ""
	}
	return string(bytes.TrimSpace(id))
}

// addNet puts f in force and returns its id for removeNet.
func (c *Cluster) addNet(f netFault) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.net.next
	c.net.next++
	c.net.faults[id] = f
	c.applyNet()
	return id
}

// removeNet lifts fault id.
func (c *Cluster) removeNet(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.net.faults, id)
	c.applyNet()
}

// applyNet sets every member's proxy from the faults in force. A member
// cut off receives nothing (its proxy holds every connection) and sends
// nothing (the other members' proxies hold the connections it opened);
// delays add up, each message between two members delayed once. Called
// with c.mu held.
func (c *Cluster) applyNet() {
	var delay proxy.Delay
	cut := map[int]bool{}
	for _, f := range c.net.faults {
		delay.Fixed += f.delay.Fixed
		delay.Jitter += f.delay.Jitter
		if f.isolate >= 0 {
			cut[f.isolate] = true
		}
	}
	all := proxy.Cond{Up: delay, Down: delay}
	held := all
	held.Hold = true
	for j, m := range c.members {
		if cut[j] {
			m.proxy.Set(held, nil)
			continue
		}
		from := map[string]proxy.Cond{}
		for i := range cut {
			from[c.members[i].id] = held
		}
		m.proxy.Set(all, from)
	}
}
