// Package proxy is the in-process TCP proxy through which hyperiso collect
// injects network faults: it accepts connections on a loopback port and
// forwards each to one upstream address, and while it runs it can delay
// what it forwards (a fixed delay plus a random jitter, per direction, the
// order of the bytes kept), hold it (a partition: nothing is lost, nothing
// gets through until the hold ends, as TCP behaves across a partition
// that heals), and reset every connection (both ends see a reset).
//
// A condition can apply to every connection or only to those from one
// source: Options.Source names a connection's source from the first bytes its
// client sends (the etcd store reads the sending member from the
// X-Server-From header of etcd's peer requests).
package proxy

import (
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Delay is what a direction of a connection adds to each chunk of bytes
// it forwards: Fixed plus a uniform random duration in [0, Jitter).
// Chunks are never reordered: a chunk due before the previous one waits
// for it.
type Delay struct {
	Fixed, Jitter time.Duration
}

// Cond is the condition of the network between the clients and the
// upstream.
type Cond struct {
	// Up delays what clients send, Down what the upstream answers.
	Up, Down Delay
	// Hold stops forwarding in both directions: the bytes wait (in the
	// proxy and the kernels' buffers) until the hold ends.
	Hold bool
}

// Options configure a proxy.
type Options struct {
	// Source, if set, is given what a client sent so far (at most its
	// last 4 KiB) until it returns a non-empty name: the connection's
	// source, which Set can give a condition of its own.
	Source func(sent []byte) string
}

// Proxy forwards the connections accepted on its address to its upstream.
type Proxy struct {
	ln                *net.TCPListener
	network, upstream string
	opt               Options

	mu      sync.Mutex
	all     Cond
	from    map[string]Cond // by source, instead of all
	changed chan struct{}   // closed and replaced when a condition changes
	conns   map[*link]bool
	closed  bool
	wg      sync.WaitGroup
}

// Start listens on a free loopback port and forwards every connection to
// upstream (network "tcp" or "unix").
func Start(network, upstream string, opt Options) (*Proxy, error) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, network: network, upstream: upstream, opt: opt,
		changed: make(chan struct{}), conns: map[*link]bool{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Upstream is where the proxy forwards.
func (p *Proxy) Upstream() string { return p.upstream }

// Set makes all the condition of every connection, the open ones
// included, and from[src] instead that of the connections from source
// src (Options.Source); both change at once.
func (p *Proxy) Set(all Cond, from map[string]Cond) {
	p.mu.Lock()
	p.all = all
	p.from = maps.Clone(from)
	p.notify()
	p.mu.Unlock()
}

// Clear ends every condition: the proxy forwards as it comes.
func (p *Proxy) Clear() { p.Set(Cond{}, nil) }

// notify wakes the connections waiting on a hold. Called with p.mu held.
func (p *Proxy) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// cond returns the condition of a connection from src, and a channel
// closed when it changes.
func (p *Proxy) cond(src string) (Cond, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.from[src]; ok && src != "" {
		return c, p.changed
	}
	return p.all, p.changed
}

// Conns counts the open connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Reset closes every open connection with a reset (RST) on both sides and
// returns how many it closed.
func (p *Proxy) Reset() int {
	p.mu.Lock()
	ls := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		ls = append(ls, l)
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.reset()
	}
	return len(ls)
}

// Close stops accepting, resets every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Reset()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.AcceptTCP()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			resetConn(c)
			continue
		}
		l := &link{p: p, client: c, done: make(chan struct{})}
		p.conns[l] = true
		p.mu.Unlock()
		p.wg.Go(l.run)
	}
}

// link is one proxied connection.
type link struct {
	p        *Proxy
	client   *net.TCPConn
	upstream net.Conn

	mu   sync.Mutex
	src  string
	done chan struct{} // closed by reset or at the end
	once sync.Once
}

func (l *link) source() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src
}

// reset ends the link with a reset on both sides.
func (l *link) reset() {
	l.once.Do(func() {
		close(l.done)
		resetConn(l.client)
		l.mu.Lock()
		if l.upstream != nil {
			resetConn(l.upstream)
		}
		l.mu.Unlock()
	})
}

// resetConn closes c so that its peer sees a reset, not an end of stream.
func resetConn(c net.Conn) {
	if t, ok := c.(*net.TCPConn); ok {
		_ = t.SetLinger(0)
	}
	_ = c.Close()
}

func (l *link) run() {
	defer func() {
		l.reset()
		l.p.mu.Lock()
		delete(l.p.conns, l)
		l.p.mu.Unlock()
	}()
	up, err := net.DialTimeout(l.p.network, l.p.upstream, 10*time.Second)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.upstream = up
	l.mu.Unlock()
	select {
	case <-l.done:
		resetConn(up) // reset while dialing
		return
	default:
	}
	var wg sync.WaitGroup
	wg.Go(func() { l.pipe(l.client, up, true) })
	wg.Go(func() { l.pipe(up, l.client, false) })
	wg.Wait()
	// Both ends closed their side: close, without a reset.
	l.once.Do(func() {
		close(l.done)
		l.client.Close()
		up.Close()
	})
}

// chunk is bytes read, due to be written at due.
type chunk struct {
	b   []byte
	due time.Time
}

// maxQueued bounds the chunks read and not yet written in each direction:
// beyond, the reader waits, and the sender's kernel buffers fill as they
// would on a slow network.
const maxQueued = 64

// pipe forwards from src to dst until src ends (then half-closes dst) or
// fails (then resets the link). up says the direction is client to
// upstream.
func (l *link) pipe(src, dst net.Conn, up bool) {
	q := make(chan chunk, maxQueued)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		l.write(dst, q)
	}()
	var sent []byte // what the client sent, while its source is unknown
	last := time.Time{}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			b := append([]byte(nil), buf[:n]...)
			if up && l.p.opt.Source != nil && l.source() == "" {
				sent = append(sent, b...)
				if len(sent) > 4<<10 {
					sent = sent[len(sent)-4<<10:]
				}
				if s := l.p.opt.Source(sent); s != "" {
					l.mu.Lock()
					l.src = s
					l.mu.Unlock()
					sent = nil
				}
			}
			c, _ := l.p.cond(l.source())
			d := c.Down
			if up {
				d = c.Up
			}
			due := time.Now().Add(d.Fixed)
			if d.Jitter > 0 {
				due = due.Add(rand.N(d.Jitter))
			}
			if due.Before(last) {
				due = last
			}
			last = due
			select {
			case q <- chunk{b, due}:
			case <-l.done:
				close(q)
				<-wrote
				return
			}
		}
		if err != nil {
			close(q)
			<-wrote
			select {
			case <-l.done:
			default:
				if isEOF(err) {
					if cw, ok := dst.(interface{ CloseWrite() error }); ok {
						_ = cw.CloseWrite()
						return
					}
				}
				l.reset()
			}
			return
		}
	}
}

// write writes the chunks of q to dst when due and while no hold applies.
func (l *link) write(dst net.Conn, q <-chan chunk) {
	for c := range q {
		if wait := time.Until(c.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
				return
			}
		}
		for {
			cond, changed := l.p.cond(l.source())
			if !cond.Hold {
				break
			}
			select {
			case <-changed:
			case <-l.done:
				return
			}
		}
		if _, err := dst.Write(c.b); err != nil {
			l.reset()
			return
		}
	}
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
