package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echo starts a server that writes back what it reads, and returns its
// address and, for each connection it accepted, the error that ended its
// reading (nil for an end of stream).
func echo(t *testing.T) (string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	ended := make(chan error, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, err := io.Copy(c, c)
				_ = c.(*net.TCPConn).CloseWrite()
				ended <- err
			}()
		}
	}()
	return ln.Addr().String(), ended
}

func start(t *testing.T, upstream string, opt Options) *Proxy {
	t.Helper()
	p, err := Start("tcp", upstream, opt)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// roundTrip sends msg and waits for its echo.
func roundTrip(t *testing.T, c net.Conn, msg string) time.Duration {
	t.Helper()
	t0 := time.Now()
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	got := make([]byte, len(msg))
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
	return time.Since(t0)
}

// The bytes that come back are exactly those sent, in order, whatever the
// delays and jitter and however the writes are cut: the oracle is the
// sent stream itself.
func TestForwardsInOrder(t *testing.T) {
	up, _ := echo(t)
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 7))
		p := start(t, up, Options{})
		p.Set(Cond{
			Up:   Delay{Fixed: time.Duration(r.IntN(3)) * time.Millisecond, Jitter: time.Duration(r.IntN(4)) * time.Millisecond},
			Down: Delay{Jitter: time.Duration(r.IntN(4)) * time.Millisecond},
		}, nil)
		c := dial(t, p)
		var sent bytes.Buffer
		got := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(c)
			got <- b
		}()
		for range 1 + r.IntN(40) {
			b := make([]byte, 1+r.IntN(70000))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			sent.Write(b)
			_, err := c.Write(b)
			require.NoError(t, err)
		}
		require.NoError(t, c.CloseWrite())
		select {
		case b := <-got:
			require.True(t, bytes.Equal(sent.Bytes(), b), "seed %d: %d bytes sent, %d back", seed, sent.Len(), len(b))
		case <-time.After(20 * time.Second):
			t.Fatalf("seed %d: no end of stream", seed)
		}
		require.Eventually(t, func() bool { return p.Conns() == 0 }, 5*time.Second, 10*time.Millisecond, "a closed connection stays open")
	}
}

func TestDelay(t *testing.T) {
	up, _ := echo(t)
	p := start(t, up, Options{})
	c := dial(t, p)
	fast := roundTrip(t, c, "x")
	p.Set(Cond{Up: Delay{Fixed: 80 * time.Millisecond}}, nil)
	d := roundTrip(t, c, "y")
	require.GreaterOrEqual(t, d, 80*time.Millisecond)
	p.Set(Cond{Up: Delay{Fixed: 80 * time.Millisecond}, Down: Delay{Fixed: 40 * time.Millisecond, Jitter: 20 * time.Millisecond}}, nil)
	d = roundTrip(t, c, "z")
	require.GreaterOrEqual(t, d, 120*time.Millisecond)
	require.Less(t, d, 2*time.Second)
	p.Clear()
	d = roundTrip(t, c, "w")
	require.Less(t, d, 80*time.Millisecond, "delay after Clear (undelayed: %s)", fast)
}

// A hold lets nothing through, loses nothing, and applies to connections
// opened during it.
func TestHold(t *testing.T) {
	up, _ := echo(t)
	p := start(t, up, Options{})
	c := dial(t, p)
	roundTrip(t, c, "before")
	p.Set(Cond{Hold: true}, nil)
	_, err := c.Write([]byte("held"))
	require.NoError(t, err)
	late := dial(t, p)
	_, err = late.Write([]byte("late"))
	require.NoError(t, err)
	for _, cc := range []net.Conn{c, late} {
		require.NoError(t, cc.SetReadDeadline(time.Now().Add(150*time.Millisecond)))
		_, err = cc.Read(make([]byte, 8))
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "read during a hold: %v", err)
	}
	p.Clear()
	for cc, want := range map[net.Conn]string{c: "held", late: "late"} {
		got := make([]byte, len(want))
		require.NoError(t, cc.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err = io.ReadFull(cc, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
	}
}

// Reset cuts every connection: both the client and the upstream see a
// reset; new connections work.
func TestReset(t *testing.T) {
	up, ended := echo(t)
	p := start(t, up, Options{})
	a, b := dial(t, p), dial(t, p)
	roundTrip(t, a, "a")
	roundTrip(t, b, "b")
	require.Equal(t, 2, p.Reset())
	for _, c := range []net.Conn{a, b} {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := c.Read(make([]byte, 1))
		require.ErrorIs(t, err, syscall.ECONNRESET)
	}
	for range 2 {
		select {
		case err := <-ended:
			require.ErrorIs(t, err, syscall.ECONNRESET, "the upstream's end")
		case <-time.After(5 * time.Second):
			t.Fatal("the upstream's connection stays open")
		}
	}
	require.Eventually(t, func() bool { return p.Conns() == 0 }, 5*time.Second, 10*time.Millisecond)
	roundTrip(t, dial(t, p), "again")
}

// A condition by source rules only the connections of its source, named
// from what the client sends first; the others keep the common one.
func TestBySource(t *testing.T) {
	up, _ := echo(t)
	p := start(t, up, Options{Source: func(sent []byte) string {
		line, _, ok := strings.Cut(string(sent), "\n")
		if name, found := strings.CutPrefix(line, "from "); ok && found {
			return name
		}
		return ""
	}})
	a, b := dial(t, p), dial(t, p)
	roundTrip(t, a, "from a\n")
	roundTrip(t, b, "from b\n")
	p.Set(Cond{}, map[string]Cond{"a": {Hold: true}})
	roundTrip(t, b, "b still")
	_, err := a.Write([]byte("a held"))
	require.NoError(t, err)
	require.NoError(t, a.SetReadDeadline(time.Now().Add(150*time.Millisecond)))
	_, err = a.Read(make([]byte, 1))
	require.Error(t, err)
	// A new connection from a is held as soon as it says who it is.
	a2 := dial(t, p)
	_, err = a2.Write([]byte("from a\n"))
	require.NoError(t, err)
	require.NoError(t, a2.SetReadDeadline(time.Now().Add(150*time.Millisecond)))
	_, err = a2.Read(make([]byte, 1))
	require.Error(t, err)
	p.Set(Cond{Up: Delay{Fixed: 60 * time.Millisecond}}, map[string]Cond{"a": {Hold: true}})
	require.GreaterOrEqual(t, roundTrip(t, b, "b slow"), 60*time.Millisecond)
	p.Clear()
	got := make([]byte, len("a held"))
	require.NoError(t, a.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadFull(a, got)
	require.NoError(t, err)
	require.Equal(t, "a held", string(got))
	rd := bufio.NewReader(a2)
	require.NoError(t, a2.SetReadDeadline(time.Now().Add(5*time.Second)))
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "from a\n", line)
}

// Close ends every connection and the listener; an upstream that refuses
// makes the proxy close the client's connection.
func TestCloseAndUnreachable(t *testing.T) {
	up, _ := echo(t)
	p, err := Start("tcp", up, Options{})
	require.NoError(t, err)
	c := dial(t, p)
	roundTrip(t, c, "x")
	require.NoError(t, p.Close())
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err)
	_, err = net.DialTimeout("tcp", p.Addr(), time.Second)
	require.Error(t, err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := ln.Addr().String()
	ln.Close()
	q := start(t, gone, Options{})
	// The reset may come before the client's connect completes.
	if d, err := net.Dial("tcp", q.Addr()); err == nil {
		require.NoError(t, d.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err = d.Read(make([]byte, 1))
		require.Error(t, err)
		d.Close()
	}
	require.Eventually(t, func() bool { return q.Conns() == 0 }, 5*time.Second, 10*time.Millisecond)
}
