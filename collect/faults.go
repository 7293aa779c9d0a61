package collect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is one entry of a fault schedule: KIND[:TARGET]@AT[+FOR][/EVERY].
type Fault struct {
	// Kind is what happens: "restart" (stop a member cleanly, start it
	// again after For), "kill" (stop a member without a goodbye: no
	// leadership transfer, no draining of requests), "pause" (cut a
	// member's traffic with its peers for For, inside etcd), "partition"
	// (hold the network traffic for For: a member's with its peers, or
	// the sessions' with an SQL server), "delay" (delay that traffic by
	// Delay plus up to Jitter, each way, for For), "drop" (reset the
	// sessions' connections, and hold new ones for For), "kill-conns"
	// (the server terminates the run's client connections).
	Kind string
	// Target names the member: "leader", "follower" or a number from 1
	// (partition: empty for the store's default); for delay, the amount
	// as written (DELAY[~JITTER]); empty for kinds without a target.
	Target string
	// At is when the fault starts, counted from the start of the workload.
	At time.Duration
	// For is how long the fault lasts.
	For time.Duration
	// Every repeats the fault at that period until the run ends (0: once).
	Every time.Duration
	// Delay and Jitter are a delay fault's amount, parsed from Target.
	Delay, Jitter time.Duration
}

// The kinds of fault, and which take a member as target.
var (
	FaultKinds   = []string{"restart", "kill", "pause", "partition", "delay", "drop", "kill-conns"}
	memberFaults = map[string]bool{"restart": true, "kill": true, "pause": true}
	// lasting are the kinds with a duration (+FOR), and its default.
	lasting = map[string]time.Duration{"restart": defaultFaultFor, "kill": defaultFaultFor, "pause": defaultFaultFor,
		"partition": defaultFaultFor, "delay": defaultFaultFor, "drop": 0}
)

// NetworkFaults are the kinds a store injects through a proxy (package
// collect/proxy) between the parties it cuts or slows.
var NetworkFaults = map[string]bool{"partition": true, "delay": true, "drop": true}

// defaultFaultFor is how long a fault lasts when the schedule does not
// say, and defaultDelay a delay fault's amount.
const (
	defaultFaultFor = time.Second
	defaultDelay    = 100 * time.Millisecond
)

func (f Fault) String() string {
	s := f.Kind
	if f.Target != "" {
		s += ":" + f.Target
	}
	s += "@" + f.At.String()
	if _, ok := lasting[f.Kind]; ok && (f.For > 0 || f.Kind != "drop") {
		s += "+" + f.For.String()
	}
	if f.Every > 0 {
		s += "/" + f.Every.String()
	}
	return s
}

// ParseFaults parses a schedule: comma-separated entries
// KIND[:TARGET]@AT[+FOR][/EVERY], e.g. "restart:leader@2s+1s,pause:2@5s+500ms/4s".
// A member fault's target defaults to the leader; FOR to 1s (drop: 0, a
// cut and nothing more); a delay's amount, DELAY[~JITTER], to 100ms;
// durations are Go's (300ms, 2s, 1m30s).
func ParseFaults(s string) ([]Fault, error) {
	var fs []Fault
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for i, item := range strings.Split(s, ",") {
		f, err := parseFault(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("fault %d %q: %w", i+1, item, err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// FormatFaults is the schedule fs in ParseFaults' syntax.
func FormatFaults(fs []Fault) string {
	items := make([]string, len(fs))
	for i, f := range fs {
		items[i] = f.String()
	}
	return strings.Join(items, ",")
}

func parseFault(s string) (Fault, error) {
	var f Fault
	head, when, ok := strings.Cut(s, "@")
	if !ok {
		return f, fmt.Errorf("no @: want KIND[:TARGET]@AT[+FOR][/EVERY]")
	}
	f.Kind, f.Target, _ = strings.Cut(head, ":")
	switch {
	case memberFaults[f.Kind] || f.Kind == "partition":
		if f.Target == "" && f.Kind != "partition" {
			f.Target = "leader"
		}
		if f.Target != "" && f.Target != "leader" && f.Target != "follower" {
			if n, err := strconv.Atoi(f.Target); err != nil || n < 1 || strconv.Itoa(n) != f.Target {
				return f, fmt.Errorf("target %q: want leader, follower or a member number from 1", f.Target)
			}
		}
	case f.Kind == "delay":
		if f.Target == "" {
			f.Target = defaultDelay.String()
		}
		d, j, hasJitter := strings.Cut(f.Target, "~")
		var err error
		if f.Delay, err = duration("DELAY", d); err != nil {
			return f, err
		}
		if hasJitter {
			if f.Jitter, err = duration("JITTER", j); err != nil {
				return f, err
			}
		}
		if f.Delay+f.Jitter == 0 {
			return f, fmt.Errorf("a delay of 0 is no fault")
		}
		// Written back as parsed, so that String reads back the same.
		f.Target = f.Delay.String()
		if hasJitter {
			f.Target += "~" + f.Jitter.String()
		}
	case f.Kind == "kill-conns" || f.Kind == "drop":
		if f.Target != "" {
			return f, fmt.Errorf("%s takes no target", f.Kind)
		}
	default:
		return f, fmt.Errorf("unknown kind %q (want one of %s)", f.Kind, strings.Join(FaultKinds, ", "))
	}
	when, every, hasEvery := strings.Cut(when, "/")
	at, dur, hasFor := strings.Cut(when, "+")
	var err error
	if f.At, err = duration("AT", at); err != nil {
		return f, err
	}
	def, lasts := lasting[f.Kind]
	f.For = def
	if hasFor {
		if !lasts {
			return f, fmt.Errorf("%s has no duration (+FOR)", f.Kind)
		}
		if f.For, err = duration("FOR", dur); err != nil {
			return f, err
		}
	}
	if hasEvery {
		if f.Every, err = duration("EVERY", every); err != nil {
			return f, err
		}
		if f.Every <= f.For {
			return f, fmt.Errorf("EVERY (%s) must exceed FOR (%s): a fault would start before the last one ended", f.Every, f.For)
		}
	}
	return f, nil
}

func duration(what, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a duration such as 500ms or 2s", what, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s %s is negative", what, s)
	}
	return d, nil
}

// Faulter is a store that can inject faults during a run.
type Faulter interface {
	// CheckFault says why the store cannot inject f, or nil, and readies
	// the store for it: a store that injects network faults (NetworkFaults)
	// starts its proxy, through which its sessions then connect. Run calls
	// it for every fault before the store is set up.
	CheckFault(f Fault) error
	// Inject injects f and returns once it is over (the member is back,
	// For elapsed), with a short account of how it ended. A fault that
	// lasts calls began, once, when it has taken effect, with what it
	// did; one that is over at once need not. When ctx ends early it
	// cuts the fault short but still restores the store.
	Inject(ctx context.Context, f Fault, began func(what string)) (string, error)
}

// FaultEvent is one entry of a run's fault log (Summary.FaultLog).
type FaultEvent struct {
	// At is when it happened, since the start of the workload.
	At time.Duration `json:"at_ns"`
	// Fault is the schedule entry (Fault.String).
	Fault string `json:"fault"`
	// Event is "start" and "end" for a fault that lasts, "done" for one
	// over at once, "failed" for one that failed (after its start, if it
	// had one).
	Event string `json:"event"`
	// What says what the store did, or why it failed.
	What string `json:"what"`
}

func (e FaultEvent) String() string {
	return fmt.Sprintf("%s %s %s: %s", e.At.Round(time.Millisecond), e.Event, e.Fault, e.What)
}

// maxFaultLog bounds the entries of Summary.FaultLog; the summary counts
// those left out.
const maxFaultLog = 512

// logFault appends an event to the fault log, timed under the lock so that
// the log is in time order.
func (r *runner) logFault(f Fault, event, what string) {
	r.count(func(s *Summary) {
		if len(s.FaultLog) >= maxFaultLog {
			s.FaultLogDropped++
			return
		}
		s.FaultLog = append(s.FaultLog, FaultEvent{At: time.Since(r.start), Fault: f.String(), Event: event, What: what})
	})
}

// faultLog is the fault log as the history's metadata holds it: one
// event a line, in time order.
func (r *runner) faultLog() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	lines := make([]string, len(r.sum.FaultLog))
	for i, e := range r.sum.FaultLog {
		lines[i] = e.String()
	}
	if r.sum.FaultLogDropped > 0 {
		lines = append(lines, fmt.Sprintf("(%d more events not logged)", r.sum.FaultLogDropped))
	}
	return strings.Join(lines, "\n")
}

// injectFaults runs the schedule from start until ctx ends; the returned
// function waits for the faults in progress to be over.
func (r *runner) injectFaults(ctx context.Context, fr Faulter, start time.Time) (wait func()) {
	var wg sync.WaitGroup
	for _, f := range r.opt.Faults {
		wg.Go(func() {
			next := f.At
			for {
				Sleep(ctx, time.Until(start.Add(next)))
				if ctx.Err() != nil {
					return
				}
				var started atomic.Bool
				what, err := fr.Inject(ctx, f, func(what string) {
					if started.CompareAndSwap(false, true) {
						r.logFault(f, "start", what)
					}
				})
				if err != nil && ctx.Err() != nil {
					// The workload ended under the fault: whatever
					// failed then says nothing about the store.
					what, err = "cut short when the workload ended", nil
				}
				switch {
				case err != nil:
					r.logFault(f, "failed", err.Error())
				case started.Load():
					r.logFault(f, "end", what)
				default:
					r.logFault(f, "done", what)
				}
				r.count(func(s *Summary) {
					if err != nil {
						s.FaultErrors++
					} else {
						s.Faults++
					}
				})
				if f.Every <= 0 {
					return
				}
				for next += f.Every; next < time.Since(start); next += f.Every {
				}
			}
		})
	}
	return wg.Wait
}
