// Package memlimit finds how much memory a check may use and tells the
// stages that allocate in proportion to more than the history's size
// (pruning's reachability matrix, the hyper-polygraph's version-order pairs,
// the CNF, CC's clocks) whether an allocation fits before they make it, so
// that a history too large for the machine ends with verdict unknown and
// the figures instead of the Go runtime's fatal "out of memory".
//
// A Budget is a total for the whole process, counted as the Go runtime
// counts the memory it holds (InUse) plus what it does not count (Other: the
// program's code and C libraries); Detect derives it from the limits the
// environment sets (cgroup v2 memory.max, cgroup v1 memory.limit_in_bytes,
// RLIMIT_AS, MemAvailable, GOMEMLIMIT), each turned into "what is in use now
// plus a safe share of the room that limit leaves".
//
// Estimates catch the large allocations before they are made; Watch, a
// watchdog sampling the runtime's figures, catches the growth no estimate
// foresaw (learnt clauses, many small allocations) and turns it into an
// error instead of the kernel's OOM kill.
package memlimit

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrExceeded is wrapped by every error Fit returns.
var ErrExceeded = errors.New("over the memory budget")

// Budget is the most memory the process may use and where that figure
// comes from.
type Budget struct {
	// Limit is in bytes as InUse counts them; 0 means no limit is known.
	Limit int64
	// Source names the limit, e.g. "--max-memory" or "cgroup v2 memory.max
	// of /sys/fs/cgroup/x".
	Source string
	// Other is the memory of the process the Go runtime does not count
	// (the program's code and data, C libraries' allocations), measured by
	// SetProcess; it is counted against Limit beside InUse.
	Other int64
}

// Error is Fit's refusal: an allocation of Need bytes for What, with InUse
// bytes in use, would exceed the budget.
type Error struct {
	What   string
	Need   int64
	InUse  int64
	Budget Budget
}

func (e *Error) Error() string {
	if e.Need == 0 {
		// The watchdog's: the process has grown over the budget.
		return fmt.Sprintf("not enough memory: %s reached %s in use, over the budget of %s (%s)",
			e.What, FormatBytes(e.InUse), FormatBytes(e.Budget.Limit), e.Budget.Source)
	}
	return fmt.Sprintf("not enough memory: %s needs %s more, with %s in use, over the budget of %s (%s)",
		e.What, FormatBytes(e.Need), FormatBytes(e.InUse), FormatBytes(e.Budget.Limit), e.Budget.Source)
}

func (e *Error) Unwrap() error { return ErrExceeded }

// Fit returns nil when need more bytes fit b with what the process holds
// now, else an *Error naming what. Called before a large allocation, it
// turns an allocation that would kill the process into an error.
func (b Budget) Fit(need int64, what string) error {
	if b.Limit <= 0 || need <= 0 {
		return nil
	}
	in := InUse() + b.Other
	if in+need <= b.Limit {
		return nil
	}
	// Garbage not yet collected counts in InUse; a full collection is
	// worth it before refusing.
	debug.FreeOSMemory()
	if in = InUse() + b.Other; in+need <= b.Limit {
		return nil
	}
	return &Error{What: what, Need: need, InUse: in, Budget: b}
}

// Min returns the smaller of two budgets (a zero Limit is no limit).
func (b Budget) Min(o Budget) Budget {
	switch {
	case o.Limit <= 0:
		return b
	case b.Limit <= 0 || o.Limit < b.Limit:
		return o
	}
	return b
}

func (b Budget) String() string {
	if b.Limit <= 0 {
		return "no memory limit known"
	}
	return fmt.Sprintf("%s (%s)", FormatBytes(b.Limit), b.Source)
}

var inUseSamples = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

var inUseMu sync.Mutex

// InUse returns the memory the Go runtime holds from the operating system
// and has not returned: what Go's own memory limit (GOMEMLIMIT) counts.
func InUse() int64 {
	inUseMu.Lock()
	defer inUseMu.Unlock()
	metrics.Read(inUseSamples)
	var v [2]int64
	for i, s := range inUseSamples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s.Value.Uint64())
		}
	}
	return v[0] - v[1]
}

var (
	processMu     sync.Mutex
	processBudget *Budget
)

// SetProcess makes b the budget Default returns, with Other measured now
// (what the process holds beyond what Go counts), and sets Go's soft memory
// limit to seven eighths of what b leaves Go (unless a lower one is set
// already, e.g. by GOMEMLIMIT), so that the collector works harder well
// before the process reaches the budget. The CLI calls it once per command,
// with --max-memory combined with Detect, and calls restore, which puts
// back the budget and limit it found, when the command ends.
func SetProcess(b Budget) (restore func()) {
	if b.Limit > 0 && b.Other == 0 {
		b.Other = other()
	}
	processMu.Lock()
	prev := processBudget
	processBudget = &b
	processMu.Unlock()
	prevLimit := debug.SetMemoryLimit(-1)
	if soft := SoftLimit(b); soft > 0 && soft < prevLimit {
		debug.SetMemoryLimit(soft)
	}
	return func() {
		processMu.Lock()
		processBudget = prev
		processMu.Unlock()
		debug.SetMemoryLimit(prevLimit)
	}
}

// SoftLimit is the soft memory limit SetProcess gives the Go runtime for
// b: seven eighths of what b leaves Go, at least 4 MiB; 0 without a limit.
func SoftLimit(b Budget) int64 {
	if b.Limit <= 0 {
		return 0
	}
	g := b.Limit - b.Other
	return max(g-g/8, 4<<20)
}

// other returns the memory of the process that InUse does not count: its
// resident size less InUse (0 where unknown or negative).
func other() int64 {
	rss, ok := residentSize()
	if !ok {
		return 0
	}
	return max(rss-InUse(), 0)
}

// WatchPeriod is how often Watch samples the runtime's figures.
const WatchPeriod = 10 * time.Millisecond

// Watch is the watchdog of budget b: until stop is called, it samples InUse
// every period (reading runtime/metrics, no system call) and calls over,
// once, from its own goroutine, when InUse plus b.Other exceeds b.Limit,
// or the figure it started from when that was higher already (the
// estimates' refusals tell that case better). what names, at the time of
// the overrun, what was running (e.g. "the check, during solve"); the
// *Error given to over carries it and the figures. No limit: no watchdog.
//
// The estimates stop a stage before its large allocations; the watchdog
// catches the growth no estimate foresaw (a solver's learnt clauses, many
// small allocations), so that the process ends with an error of its own
// instead of the kernel's OOM kill.
func Watch(b Budget, period time.Duration, what func() string, over func(*Error)) (stop func()) {
	if b.Limit <= 0 {
		return func() {}
	}
	line := max(b.Limit, InUse()+b.Other)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if in := InUse() + b.Other; in > line {
				over(&Error{What: what(), InUse: in, Budget: b})
				return
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

var (
	detected   Budget
	detectedAt time.Time
)

// detectTTL is how long Default reuses Detect's answer: reading the
// kernel's files costs a few hundred microseconds where system calls are
// slow, and a check, or a search re-checking many subsets, asks often.
const detectTTL = time.Second

// Default returns the budget given to SetProcess, or else Detect's (at most
// a second old).
func Default() Budget {
	processMu.Lock()
	defer processMu.Unlock()
	if processBudget != nil {
		return *processBudget
	}
	if detectedAt.IsZero() || time.Since(detectedAt) > detectTTL {
		detected, detectedAt = Detect(), time.Now()
	}
	return detected
}

// Detect returns the smallest of the limits the environment sets on this
// process, each turned into a total as InUse counts it: in use now plus a
// safe share of the room the limit leaves (share). Its Limit is 0 when no
// limit is found.
func Detect() Budget {
	in := InUse()
	var best Budget
	for _, r := range rooms() {
		n, how := r.share()
		best = best.Min(Budget{Limit: in + n, Source: how + r.source})
	}
	// GOMEMLIMIT is already a total in InUse's terms.
	if gl := debug.SetMemoryLimit(-1); gl > 0 && gl < math.MaxInt64 {
		best = best.Min(Budget{Limit: gl, Source: "Go's memory limit (GOMEMLIMIT)"})
	}
	return best
}

// The kinds of room, which take different shares.
const (
	roomCgroup    = iota // a cgroup's limit less its usage
	roomAvailable        // the machine's available memory
	roomAddress          // the address space RLIMIT_AS leaves
)

// asReserve is the address space a check needs beyond its heap: thread
// stacks, C allocators' arenas, the runtime's metadata, which grows with
// the heap in steps.
const asReserve = 256 << 20

// share returns how much of the room r a check takes, and the words that
// say so before its source. Another process may need the rest: a cgroup
// is shared by everything in it and what Go counts is not all the kernel
// counts (three quarters); the machine's available memory is shared with
// every other user (half); an address-space limit counts reservations,
// stacks and allocators' arenas as well as memory, and Go reserves its heap
// in 64 MiB steps (three quarters of what is left after asReserve).
func (r room) share() (int64, string) {
	n := max(r.room, 0)
	switch r.kind {
	case roomCgroup:
		return n - n/4, "three quarters of the room left by "
	case roomAvailable:
		return n / 2, "half of the "
	case roomAddress:
		n = max(n-asReserve, 0)
		return n - n/4, "three quarters of the room, less 256 MiB, left by "
	}
	return n, ""
}

// MinStartRoom is the least address space a check needs once the runtime
// has started: below that, CheckStart says so.
const MinStartRoom = asReserve + 64<<20

// CheckStart returns an error when an address-space limit (RLIMIT_AS,
// ulimit -v) leaves this process less than MinStartRoom beyond what it has
// mapped already (the Go runtime reserves about 1.1 GiB of address space at
// start, none of it memory): a check could not run, and the runtime would
// die of its first failed reservation instead of saying why.
func CheckStart() error {
	lim, vm, ok := addressSpaceNow()
	if !ok || lim-vm >= MinStartRoom {
		return nil
	}
	return fmt.Errorf("the address-space limit (RLIMIT_AS, ulimit -v) of %s leaves %s beyond the %s mapped at start (the Go runtime reserves about 1.1 GiB of address space, not memory); a check needs at least %s more: raise the limit to %s or more, or bound memory with --max-memory or a cgroup instead",
		FormatBytes(lim), FormatBytes(max(lim-vm, 0)), FormatBytes(vm), FormatBytes(MinStartRoom), FormatBytes(roundUp(vm+MinStartRoom, 256<<20)))
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// room is how much more memory one limit lets the process take.
type room struct {
	room   int64
	source string
	kind   int
}

// ParseSize parses a size such as 4GiB, 512M, 1.5G or 1000000. Binary
// units: K, Ki, KiB (and M, G, T alike); decimal units: KB, MB, GB, TB; B or
// no unit means bytes. Case and a space before the unit do not matter.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40, "tb": 1e12,
	}[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s, t[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want a number and a unit, e.g. 4GiB", s)
	}
	if v := f * mult; v < math.MaxInt64 {
		return int64(v), nil
	}
	return 0, fmt.Errorf("size %q is too large", s)
}

// FormatBytes renders n in binary units with three significant digits.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), -1
	for v >= unit && u < 4 {
		v /= unit
		u++
	}
	prec := 2
	switch {
	case v >= 100:
		prec = 0
	case v >= 10:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[u]
}
