package memlimit

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// procFS reads the kernel's files under root: "" for the real ones, a
// directory of fake files in tests. Parsing is the same on every system;
// only Linux has the files.
type procFS struct{ root string }

func (p procFS) read(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(name)))
	return string(b), err
}

// unlimitedV1 is where cgroup v1 puts "no limit": the largest multiple of
// the page size below 2⁶³; anything this large is no limit.
const unlimitedV1 = 1 << 62

// cgroupRooms returns, for each cgroup memory controller (v2 and v1) that
// governs this process, the room the tightest limit on the way from its
// cgroup up to the root leaves: limit minus usage, where usage does not
// count inactive file cache, which the kernel reclaims before failing.
func (p procFS) cgroupRooms() []room {
	self, err := p.read("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	mounts, err := p.read("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []room
	for _, cg := range parseProcCgroup(self) {
		mp, ok := findCgroupMount(mounts, cg.v2, cg.path)
		if !ok {
			continue
		}
		if r, ok := p.walkLimits(mp, cg.v2); ok {
			out = append(out, r)
		}
	}
	return out
}

// procCgroup is one line of /proc/self/cgroup that matters: the unified
// (v2) hierarchy, or the v1 hierarchy of the memory controller.
type procCgroup struct {
	v2   bool
	path string
}

// parseProcCgroup reads /proc/self/cgroup: "ID:controllers:path" per line,
// ID 0 with no controllers for cgroup v2.
func parseProcCgroup(s string) []procCgroup {
	var out []procCgroup
	for _, line := range strings.Split(s, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			out = append(out, procCgroup{v2: true, path: f[2]})
		case hasField(f[1], "memory"):
			out = append(out, procCgroup{path: f[2]})
		}
	}
	return out
}

func hasField(list, name string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == name {
			return true
		}
	}
	return false
}

// cgroupMount is where a cgroup lives on disk: dir, and the mount point
// above which its limits no longer apply to us (or are not visible).
type cgroupMount struct{ dir, top string }

// findCgroupMount finds in mountinfo the mount of the hierarchy (cgroup2,
// or a cgroup v1 mount with the memory controller) and maps the process's
// cgroup path to a directory under it. A path outside the mount's root (a
// cgroup namespace, a container) is the mount point itself.
func findCgroupMount(mountinfo string, v2 bool, cgPath string) (cgroupMount, bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		root, mp := unescapeMount(pf[3]), unescapeMount(pf[4])
		switch {
		case v2 && qf[0] == "cgroup2":
		case !v2 && qf[0] == "cgroup" && hasField(qf[2], "memory"):
		default:
			continue
		}
		rel, ok := strings.CutPrefix(cgPath, root)
		if root == "/" {
			rel, ok = cgPath, true
		}
		if !ok || strings.Contains(rel, "..") || (rel != "" && !strings.HasPrefix(rel, "/")) {
			rel = ""
		}
		return cgroupMount{dir: path.Join(mp, rel), top: mp}, true
	}
	return cgroupMount{}, false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// walkLimits reads the memory limit and usage of dir and each parent up to
// the mount point and returns the smallest room among those with a limit.
func (p procFS) walkLimits(m cgroupMount, v2 bool) (room, bool) {
	limitFile, usageFile, inactive, version := "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file", "v1"
	if v2 {
		limitFile, usageFile, inactive, version = "memory.max", "memory.current", "inactive_file", "v2"
	}
	var best room
	found := false
	for dir := m.dir; ; dir = path.Dir(dir) {
		if lim, ok := p.readInt(path.Join(dir, limitFile)); ok && lim < unlimitedV1 {
			if use, ok := p.readInt(path.Join(dir, usageFile)); ok {
				if st, err := p.read(path.Join(dir, "memory.stat")); err == nil {
					use -= min(statField(st, inactive), use)
				}
				if r := lim - use; !found || r < best.room {
					best = room{r, fmt.Sprintf("cgroup %s %s of %s: %s, %s in use", version, limitFile, dir, FormatBytes(lim), FormatBytes(use)), roomCgroup}
					found = true
				}
			}
		}
		if dir == m.top || dir == "/" || dir == "." {
			break
		}
	}
	return best, found
}

// readInt reads a file holding one integer ("max" is no limit).
func (p procFS) readInt(name string) (int64, bool) {
	s, err := p.read(name)
	if err != nil {
		return 0, false
	}
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// statField returns the value of "name value" in a memory.stat file.
func statField(stat, name string) int64 {
	for _, line := range strings.Split(stat, "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == name {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// kbField returns the value in bytes of a "Name:   123 kB" line of
// /proc/meminfo or /proc/self/status.
func (p procFS) kbField(file, name string) (int64, bool) {
	s, err := p.read(file)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != name {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			n <<= 10
		}
		return n, true
	}
	return 0, false
}

// memAvailable is the room the whole machine has: MemAvailable, the
// kernel's estimate of what can be allocated without swapping.
func (p procFS) memAvailable() (room, bool) {
	n, ok := p.kbField("/proc/meminfo", "MemAvailable")
	return room{n, "available memory (MemAvailable in /proc/meminfo: " + FormatBytes(n) + ")", roomAvailable}, ok
}

// addressSpace is the room RLIMIT_AS (ulimit -v) leaves: the limit minus
// the process's virtual size.
func (p procFS) addressSpace(limit int64) (room, bool) {
	vm, ok := p.kbField("/proc/self/status", "VmSize")
	return room{limit - vm, fmt.Sprintf("RLIMIT_AS (ulimit -v) of %s, %s mapped", FormatBytes(limit), FormatBytes(vm)), roomAddress}, ok
}
