package memlimit

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeFS writes files under a temporary root, as the kernel would show them.
func fakeFS(t *testing.T, files map[string]string) procFS {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return procFS{root: root}
}

const (
	mountsV2 = `24 1 0:22 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate
25 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
`
	mountsV1 = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
)

func TestCgroupV2NestedLimits(t *testing.T) {
	// The parent's limit is the tighter one once usage is counted: 6 GiB
	// with 3 GiB used (1 GiB of it inactive cache) leaves 4 GiB; the
	// process's own group leaves 8 - 1 = 7 GiB.
	p := fakeFS(t, map[string]string{
		"/proc/self/cgroup":                                  "0::/user.slice/job.scope\n",
		"/proc/self/mountinfo":                               mountsV2,
		"/sys/fs/cgroup/memory.current":                      "99999999999\n", // the root has no memory.max
		"/sys/fs/cgroup/user.slice/memory.max":               "6442450944\n",
		"/sys/fs/cgroup/user.slice/memory.current":           "3221225472\n",
		"/sys/fs/cgroup/user.slice/memory.stat":              "anon 1\ninactive_file 1073741824\nactive_file 5\n",
		"/sys/fs/cgroup/user.slice/job.scope/memory.max":     "8589934592\n",
		"/sys/fs/cgroup/user.slice/job.scope/memory.current": "1073741824\n",
	})
	rs := p.cgroupRooms()
	if len(rs) != 1 {
		t.Fatalf("rooms %+v, want one", rs)
	}
	if rs[0].room != 4<<30 {
		t.Errorf("room %d, want %d", rs[0].room, int64(4<<30))
	}
	if !strings.Contains(rs[0].source, "cgroup v2 memory.max of /sys/fs/cgroup/user.slice:") {
		t.Errorf("source %q", rs[0].source)
	}
}

func TestCgroupV2NoLimit(t *testing.T) {
	p := fakeFS(t, map[string]string{
		"/proc/self/cgroup":               "0::/a\n",
		"/proc/self/mountinfo":            mountsV2,
		"/sys/fs/cgroup/a/memory.max":     "max\n",
		"/sys/fs/cgroup/a/memory.current": "123\n",
	})
	if rs := p.cgroupRooms(); len(rs) != 0 {
		t.Fatalf("rooms %+v, want none", rs)
	}
}

func TestCgroupV1(t *testing.T) {
	// A hybrid host: v1 memory controller, v2 mounted without limits. The
	// v1 parent is unlimited (the page-rounded 2⁶³).
	p := fakeFS(t, map[string]string{
		"/proc/self/cgroup":                                           "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n",
		"/proc/self/mountinfo":                                        mountsV1,
		"/sys/fs/cgroup/memory/memory.limit_in_bytes":                 "9223372036854771712\n",
		"/sys/fs/cgroup/memory/memory.usage_in_bytes":                 "5000000000\n",
		"/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes":     "9223372036854771712\n",
		"/sys/fs/cgroup/memory/process_api/memory.usage_in_bytes":     "5000000000\n",
		"/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "2147483648\n",
		"/sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes": "1147483648\n",
		"/sys/fs/cgroup/memory/process_api/abc/memory.stat":           "cache 10\ntotal_inactive_file 100000000\n",
	})
	rs := p.cgroupRooms()
	if len(rs) != 1 {
		t.Fatalf("rooms %+v, want one", rs)
	}
	if want := int64(2147483648 - 1147483648 + 100000000); rs[0].room != want {
		t.Errorf("room %d, want %d", rs[0].room, want)
	}
	if !strings.Contains(rs[0].source, "cgroup v1 memory.limit_in_bytes of /sys/fs/cgroup/memory/process_api/abc") {
		t.Errorf("source %q", rs[0].source)
	}
}

func TestCgroupNamespace(t *testing.T) {
	// In a container the process sees its own cgroup as "/", mounted at
	// /sys/fs/cgroup; a mount root the path is not under means the same.
	files := map[string]string{
		"/proc/self/mountinfo":          "30 20 0:26 /docker/x /sys/fs/cgroup ro - cgroup2 cgroup rw\n",
		"/sys/fs/cgroup/memory.max":     "1073741824\n",
		"/sys/fs/cgroup/memory.current": "73741824\n",
	}
	for _, self := range []string{"0::/\n", "0::/../other\n"} {
		files["/proc/self/cgroup"] = self
		rs := fakeFS(t, files).cgroupRooms()
		if len(rs) != 1 || rs[0].room != 1000000000 {
			t.Errorf("%q: rooms %+v, want 1000000000", self, rs)
		}
	}
}

func TestMeminfoAndStatus(t *testing.T) {
	p := fakeFS(t, map[string]string{
		"/proc/meminfo":     "MemTotal:       24684096 kB\nMemFree:        1 kB\nMemAvailable:   23988760 kB\n",
		"/proc/self/status": "Name:\thyperiso\nVmPeak:\t 2000 kB\nVmSize:\t 1048576 kB\n",
	})
	r, ok := p.memAvailable()
	if !ok || r.room != 23988760<<10 {
		t.Errorf("MemAvailable %+v %v", r, ok)
	}
	r, ok = p.addressSpace(4 << 30)
	if !ok || r.room != 3<<30 || !strings.Contains(r.source, "RLIMIT_AS") {
		t.Errorf("address space %+v %v", r, ok)
	}
	if _, ok := (procFS{root: t.TempDir()}).memAvailable(); ok {
		t.Error("no /proc/meminfo, yet a room")
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/a\040b\\`); got != `/mnt/a b\\` {
		t.Errorf("got %q", got)
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"4GiB": 4 << 30, "4gib": 4 << 30, "4G": 4 << 30, "4 GiB": 4 << 30, "4GB": 4e9,
		"512M": 512 << 20, "512MiB": 512 << 20, "512MB": 512e6, "1.5G": 3 << 29,
		"1000000": 1000000, "100B": 100, "64k": 64 << 10, "2T": 2 << 40, "0": 0,
	}
	for s, want := range good {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "4X", "-1G", "4 GiBs", "1e30T", "1..2G"} {
		if got, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", s, got)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1 << 10: "1.00 KiB", 1536 << 20: "1.50 GiB", 15 << 30: "15.0 GiB", 300 << 30: "300 GiB",
	} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFit(t *testing.T) {
	if err := (Budget{}).Fit(1<<60, "anything"); err != nil {
		t.Errorf("no limit refused: %v", err)
	}
	b := Budget{Limit: InUse() + 1<<30, Source: "test"}
	if err := b.Fit(1<<20, "a small slice"); err != nil {
		t.Errorf("1 MiB of 1 GiB left refused: %v", err)
	}
	err := b.Fit(8<<30, "the matrix")
	var e *Error
	if !errors.Is(err, ErrExceeded) || !errors.As(err, &e) || e.Need != 8<<30 {
		t.Fatalf("8 GiB of 1 GiB left: %v", err)
	}
	for _, s := range []string{"the matrix", "8.00 GiB", "(test)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
}

func TestMin(t *testing.T) {
	a, b := Budget{Limit: 5, Source: "a"}, Budget{Limit: 3, Source: "b"}
	if a.Min(b) != b || b.Min(a) != b || a.Min(Budget{}) != a || (Budget{}).Min(a) != a {
		t.Error("Min picks the wrong budget")
	}
}

// TestShare: the default budget takes a safe share of each room, not all
// of it (a check once took 19.7 GB of a 24 GB machine and was OOM-killed).
func TestShare(t *testing.T) {
	for _, c := range []struct {
		r    room
		want int64
	}{
		{room{room: 8 << 30, kind: roomCgroup}, 6 << 30},
		{room{room: 16 << 30, kind: roomAvailable}, 8 << 30},
		{room{room: 1 << 30, kind: roomAddress}, 576 << 20},
		{room{room: 100 << 20, kind: roomAddress}, 0},
		{room{room: -5, kind: roomCgroup}, 0},
	} {
		if got, how := c.r.share(); got != c.want || how == "" {
			t.Errorf("share of %+v = %d %q, want %d", c.r, got, how, c.want)
		}
	}
	if b := Detect(); b.Limit > 0 && !strings.Contains(b.Source, "of the") {
		t.Errorf("Detect's source %q names no share", b.Source)
	}
}

// TestWatch: the watchdog reports growth over the budget, with the stage
// and the figures, and stays quiet under it.
func TestWatch(t *testing.T) {
	b := Budget{Limit: InUse() + 64<<20, Source: "test"}
	got := make(chan *Error, 1)
	stop := Watch(b, time.Millisecond, func() string { return "the test, during solve" }, func(e *Error) { got <- e })
	defer stop()
	select {
	case e := <-got:
		t.Fatalf("fired under the budget: %v", e)
	case <-time.After(30 * time.Millisecond):
	}
	ballast := make([]byte, 128<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	select {
	case e := <-got:
		if !errors.Is(e, ErrExceeded) || e.InUse <= b.Limit || !strings.Contains(e.Error(), "the test, during solve reached ") || !strings.Contains(e.Error(), "(test)") {
			t.Errorf("overrun reported as %v", e)
		}
	case <-time.After(2 * time.Second):
		t.Error("no overrun reported")
	}
	runtime.KeepAlive(ballast)
	if (Budget{}).Limit == 0 {
		Watch(Budget{}, time.Millisecond, nil, nil)() // no limit: nothing to watch
	}
}
