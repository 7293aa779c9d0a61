package collect_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
)

// echoServer writes back what it reads, on a loopback port.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// echoTime is the round trip of one byte, or an error after 300ms.
func echoTime(c net.Conn) (time.Duration, error) {
	t0 := time.Now()
	if _, err := c.Write([]byte{1}); err != nil {
		return 0, err
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err := io.ReadFull(c, make([]byte, 1))
	return time.Since(t0), err
}

func fault(t *testing.T, spec string) collect.Fault {
	t.Helper()
	fs, err := collect.ParseFaults(spec)
	require.NoError(t, err)
	return fs[0]
}

// inject runs f in the background and returns once it has taken effect,
// with a channel that gives Inject's result when it is over.
func inject(t *testing.T, n *collect.NetFaults, f collect.Fault) (string, <-chan string) {
	t.Helper()
	began, done := make(chan string, 1), make(chan string, 1)
	go func() {
		what, err := n.Inject(context.Background(), f, func(w string) { began <- w })
		if err != nil {
			what = "error: " + err.Error()
		}
		done <- what
	}()
	select {
	case w := <-began:
		return w, done
	case w := <-done:
		t.Fatalf("%s over before it began: %s", f, w)
	}
	return "", nil
}

// Network faults that overlap add up, and each lifts only itself: a delay
// outlives a partition begun under it; a drop resets the connections.
func TestNetFaultsCompose(t *testing.T) {
	var n collect.NetFaults
	defer n.Close()
	require.Equal(t, "", n.Addr(), "no proxy before Prepare")
	require.NoError(t, n.Prepare("tcp", echoServer(t)))
	c, err := net.Dial("tcp", n.Addr())
	require.NoError(t, err)
	defer c.Close()
	fast, err := echoTime(c)
	require.NoError(t, err)

	what, delayDone := inject(t, &n, fault(t, "delay:40ms@0s+1500ms"))
	require.Equal(t, "session traffic delayed by 40ms each way (1 connections)", what)
	d, err := echoTime(c)
	require.NoError(t, err)
	require.GreaterOrEqual(t, d, 80*time.Millisecond)

	what, partDone := inject(t, &n, fault(t, "partition@0s+500ms"))
	require.Equal(t, "session traffic held (1 connections)", what)
	_, err = echoTime(c)
	require.Error(t, err, "a round trip under a partition")
	require.Contains(t, <-partDone, "lifted after")
	// The byte held comes back first, then this one, still delayed.
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = io.ReadFull(c, make([]byte, 1))
	require.NoError(t, err, "the held byte arrives once the partition heals")
	d, err = echoTime(c)
	require.NoError(t, err)
	require.GreaterOrEqual(t, d, 80*time.Millisecond, "the delay outlives the partition")
	require.Contains(t, <-delayDone, "lifted after")
	d, err = echoTime(c)
	require.NoError(t, err)
	require.Less(t, d, 80*time.Millisecond, "no delay once lifted (before: %s)", fast)

	what, err = n.Inject(context.Background(), fault(t, "drop@0s"), func(string) { t.Error("a drop without FOR has no start") })
	require.NoError(t, err)
	require.Equal(t, "reset 1 session connections", what)
	_, err = echoTime(c)
	require.Error(t, err, "the connection was reset")

	what, dropDone := inject(t, &n, fault(t, "drop@0s+500ms"))
	// The connection reset before may still be closing.
	require.Regexp(t, `^reset [01] session connections, new ones held$`, what)
	c2, err := net.Dial("tcp", n.Addr())
	require.NoError(t, err)
	defer c2.Close()
	_, err = echoTime(c2)
	require.Error(t, err, "a new connection is held while the drop lasts")
	<-dropDone
	_ = c2.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = io.ReadFull(c2, make([]byte, 1))
	require.NoError(t, err, "and goes through after")

	_, err = n.Inject(context.Background(), fault(t, "kill-conns@0s"), func(string) {})
	require.ErrorContains(t, err, "not a network fault")
}
