package collect_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/history"
)

func TestParseFaults(t *testing.T) {
	fs, err := collect.ParseFaults("restart:leader@2s+1s, pause:2@500ms/3s,kill@1m,kill-conns@4s/2s,restart:follower@0s," +
		"partition@1s,partition:3@2s+3s,delay@0s,delay:50ms~0.02s@1s+2s/10s,delay:0s~5ms@0s,drop@1s/2s,drop@3s+500ms")
	require.NoError(t, err)
	require.Equal(t, []collect.Fault{
		{Kind: "restart", Target: "leader", At: 2 * time.Second, For: time.Second},
		{Kind: "pause", Target: "2", At: 500 * time.Millisecond, For: time.Second, Every: 3 * time.Second},
		{Kind: "kill", Target: "leader", At: time.Minute, For: time.Second},
		{Kind: "kill-conns", At: 4 * time.Second, Every: 2 * time.Second},
		{Kind: "restart", Target: "follower", For: time.Second},
		{Kind: "partition", At: time.Second, For: time.Second},
		{Kind: "partition", Target: "3", At: 2 * time.Second, For: 3 * time.Second},
		{Kind: "delay", Target: "100ms", For: time.Second, Delay: 100 * time.Millisecond},
		{Kind: "delay", Target: "50ms~20ms", At: time.Second, For: 2 * time.Second, Every: 10 * time.Second, Delay: 50 * time.Millisecond, Jitter: 20 * time.Millisecond},
		{Kind: "delay", Target: "0s~5ms", For: time.Second, Jitter: 5 * time.Millisecond},
		{Kind: "drop", At: time.Second, Every: 2 * time.Second},
		{Kind: "drop", At: 3 * time.Second, For: 500 * time.Millisecond},
	}, fs)
	require.Equal(t, "pause:2@500ms+1s/3s", fs[1].String())
	require.Equal(t, "kill-conns@4s/2s", fs[3].String())
	require.Equal(t, "partition@1s+1s", fs[5].String())
	require.Equal(t, "delay:50ms~20ms@1s+2s/10s", fs[8].String())
	require.Equal(t, "drop@1s/2s", fs[10].String())
	require.Equal(t, "drop@3s+500ms", fs[11].String())
	none, err := collect.ParseFaults("  ")
	require.NoError(t, err)
	require.Empty(t, none)

	for in, msg := range map[string]string{
		"restart":                  `fault 1 "restart": no @`,
		"reboot@1s":                `unknown kind "reboot"`,
		"pause:0@1s":               `target "0": want leader, follower or a member number from 1`,
		"pause:x@1s":               `target "x"`,
		"kill-conns:1@1s":          "kill-conns takes no target",
		"kill-conns@1s+2s":         "kill-conns has no duration",
		"restart@soon":             `AT "soon": want a duration`,
		"restart@-1s":              "AT -1s is negative",
		"restart@1s+x":             `FOR "x"`,
		"restart@1s+2s/2s":         "EVERY (2s) must exceed FOR (2s)",
		"restart@1s,pause@2s+1ms/": `fault 2 "pause@2s+1ms/": EVERY ""`,
		"pause:01@1s":              `target "01"`,
		"partition:x@1s":           `target "x"`,
		"delay:fast@1s":            `DELAY "fast": want a duration`,
		"delay:1ms~x@1s":           `JITTER "x"`,
		"delay:0s@1s":              "a delay of 0 is no fault",
		"delay:-1ms@1s":            "DELAY -1ms is negative",
		"drop:1@1s":                "drop takes no target",
		"drop@1s+1s/1s":            "EVERY (1s) must exceed FOR (1s)",
	} {
		_, err := collect.ParseFaults(in)
		require.ErrorContains(t, err, msg, in)
	}
}

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"restart:leader@2s+1s", "pause:2@500ms/3s,kill@1m", "kill-conns@4s/2s", "x@", "@+/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := collect.ParseFaults(s)
		if err != nil {
			return
		}
		for _, f := range fs {
			again, err := collect.ParseFaults(f.String())
			require.NoError(t, err, f.String())
			require.Equal(t, []collect.Fault{f}, again)
		}
	})
}

// faultable is the memory store with a fault injector that only counts,
// and declares its transactions' level.
type faultable struct {
	*memstore.Store
	injected atomic.Int64
	refuse   error
	// began, when set, is closed by the first injection; transactions
	// wait for it, so a fault due at 0s fires even when the memory
	// store would finish the whole workload before the fault's
	// goroutine is scheduled.
	began chan struct{}
	once  sync.Once
}

func (f *faultable) CheckFault(collect.Fault) error { return f.refuse }

func (f *faultable) Connect(ctx context.Context) (collect.Conn, error) {
	c, err := f.Store.Connect(ctx)
	if err != nil || f.began == nil {
		return c, err
	}
	return &gatedConn{Conn: c, began: f.began}, nil
}

type gatedConn struct {
	collect.Conn
	began chan struct{}
}

func (c *gatedConn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	select {
	case <-c.began:
	case <-time.After(30 * time.Second):
		return nil, errors.New("no fault was injected within 30s")
	}
	return c.Conn.Begin(ctx, iso)
}

var _ collect.Faulter = (*faultable)(nil)

func (f *faultable) Inject(ctx context.Context, fault collect.Fault, began func(string)) (string, error) {
	f.injected.Add(1)
	if f.began != nil {
		f.once.Do(func() { close(f.began) })
	}
	if fault.For == 0 {
		return "did " + fault.Kind, nil
	}
	began("doing " + fault.Kind)
	t := time.NewTimer(fault.For)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return "did " + fault.Kind, nil
}

func (f *faultable) Level(collect.Isolation) history.Level { return history.SI }

func TestFaultsAreInjectedAndCounted(t *testing.T) {
	st := &faultable{Store: memstore.New(memstore.Options{Seed: 1}), began: make(chan struct{})}
	// A fault at 0s fires at once; one that would last an hour is cut
	// short when the workload ends; one due in an hour never fires.
	fs, err := collect.ParseFaults("restart@0s+1h,pause:2@1h")
	require.NoError(t, err)
	start := time.Now()
	h, sum, err := collect.Run(context.Background(), st, general(t, nil), collect.Options{Isolation: collect.Snapshot, Faults: fs})
	require.NoError(t, err)
	require.Less(t, time.Since(start), time.Minute)
	require.Equal(t, int64(1), st.injected.Load())
	require.Equal(t, 1, sum.Faults)
	require.Len(t, sum.FaultLog, 2)
	require.Equal(t, []string{"start", "end"}, []string{sum.FaultLog[0].Event, sum.FaultLog[1].Event})
	require.Equal(t, "doing restart", sum.FaultLog[0].What)
	require.Equal(t, "restart:leader@0s+1h0m0s", sum.FaultLog[1].Fault)
	require.Contains(t, sum.FaultLog[1].String(), " end restart:leader@0s+1h0m0s: did restart")
	require.Contains(t, sum.String(), "1 faults injected:\n")
	require.Equal(t, "restart:leader@0s+1h0m0s,pause:2@1h0m0s+1s", h.Meta["faults"])
	require.Contains(t, h.Meta["fault_log"], "start restart:leader@0s+1h0m0s: doing restart\n")
	for _, tx := range h.Txns[1:] {
		require.Equal(t, history.SI, tx.Level, "the store's Leveler declares each transaction's level")
		require.False(t, tx.Timed, "no times unless asked")
	}
}

func TestFaultsNeedAFaulter(t *testing.T) {
	fs, err := collect.ParseFaults("restart@1s")
	require.NoError(t, err)
	_, _, err = collect.Run(context.Background(), memstore.New(memstore.Options{}), general(t, nil), collect.Options{Faults: fs})
	require.ErrorContains(t, err, "memory: faults cannot be injected into this store")

	st := &faultable{Store: memstore.New(memstore.Options{}), refuse: errors.New("no such member")}
	_, _, err = collect.Run(context.Background(), st, general(t, nil), collect.Options{Faults: fs})
	require.ErrorContains(t, err, "fault restart:leader@1s+1s: no such member")
}

func TestTimesAndInDoubt(t *testing.T) {
	hook, fails := every("commit-reply", 5, errors.New("connection reset by peer"))
	st := &faulty{Store: memstore.New(memstore.Options{Seed: 4}), hook: hook}
	h, sum, err := collect.Run(context.Background(), st, general(t, nil), collect.Options{Times: true})
	require.NoError(t, err)
	require.Positive(t, fails.Load())
	require.Equal(t, int(fails.Load()), sum.InDoubt, "every lost commit answer is in doubt")
	require.Equal(t, sum.Unknown, sum.InDoubt)
	require.Contains(t, sum.String(), "in doubt (commit sent, answer lost")
	unknown := 0
	for _, tx := range h.Txns[1:] {
		require.True(t, tx.Timed)
		require.LessOrEqual(t, tx.Start, tx.End)
		require.Equal(t, history.LevelNone, tx.Level, "the memory store declares no level")
		if tx.Status == history.Unknown {
			unknown++
			require.Equal(t, int64(math.MaxInt64), tx.End, "an in-doubt transaction never completes")
		}
	}
	require.Equal(t, sum.InDoubt, unknown)
}

// The errors network faults cause count as one reason whatever the
// connection: the addresses they name are left out.
func TestReasonText(t *testing.T) {
	for in, want := range map[string]string{
		"read tcp 127.0.0.1:48238->127.0.0.1:42441: read: connection reset by peer": "read tcp …->…: read: connection reset by peer",
		"dial tcp [::1]:5432: connect: connection refused":                          "dial tcp …: connect: connection refused",
		"serialization failure (40001) on key 12":                                   "serialization failure (40001) on key 12",
	} {
		require.Equal(t, want, collect.ReasonText(errors.New(in)))
	}
}
