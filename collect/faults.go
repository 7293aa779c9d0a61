package collect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault is one entry of a fault schedule: KIND[:TARGET]@AT[+FOR][/EVERY].
type Fault struct {
	// Kind is what happens: "restart" (stop a member cleanly, start it
	// again after For), "kill" (stop a member without a goodbye: no
	// leadership transfer, no draining of requests), "pause" (cut a
	// member's traffic with its peers for For), "kill-conns" (the server
	// terminates the run's client connections).
	Kind string
	// Target names the member: "leader", "follower" or a number from 1;
	// empty for kinds without a target.
	Target string
	// At is when the fault starts, counted from the start of the workload.
	At time.Duration
	// For is how long the member stays down or paused.
	For time.Duration
	// Every repeats the fault at that period until the run ends (0: once).
	Every time.Duration
}

// FaultKinds lists the fault kinds; memberFaults take a member as target.
var (
	FaultKinds   = []string{"restart", "kill", "pause", "kill-conns"}
	memberFaults = map[string]bool{"restart": true, "kill": true, "pause": true}
)

// defaultFaultFor is how long a member stays down when the schedule does
// not say.
const defaultFaultFor = time.Second

func (f Fault) String() string {
	s := f.Kind
	if f.Target != "" {
		s += ":" + f.Target
	}
	s += "@" + f.At.String()
	if memberFaults[f.Kind] {
		s += "+" + f.For.String()
	}
	if f.Every > 0 {
		s += "/" + f.Every.String()
	}
	return s
}

// ParseFaults parses a schedule: comma-separated entries
// KIND[:TARGET]@AT[+FOR][/EVERY], e.g. "restart:leader@2s+1s,pause:2@5s+500ms/4s".
// A member fault's target defaults to the leader and FOR to 1s; durations
// are Go's (300ms, 2s, 1m30s).
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

func parseFault(s string) (Fault, error) {
	var f Fault
	head, when, ok := strings.Cut(s, "@")
	if !ok {
		return f, fmt.Errorf("no @: want KIND[:TARGET]@AT[+FOR][/EVERY]")
	}
	f.Kind, f.Target, _ = strings.Cut(head, ":")
	switch {
	case memberFaults[f.Kind]:
		if f.Target == "" {
			f.Target = "leader"
		}
		if f.Target != "leader" && f.Target != "follower" {
			if n, err := strconv.Atoi(f.Target); err != nil || n < 1 {
				return f, fmt.Errorf("target %q: want leader, follower or a member number from 1", f.Target)
			}
		}
	case f.Kind == "kill-conns":
		if f.Target != "" {
			return f, fmt.Errorf("kill-conns takes no target")
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
	f.For = defaultFaultFor
	if hasFor {
		if !memberFaults[f.Kind] {
			return f, fmt.Errorf("%s has no duration (+FOR)", f.Kind)
		}
		if f.For, err = duration("FOR", dur); err != nil {
			return f, err
		}
	}
	if !memberFaults[f.Kind] {
		f.For = 0
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
	// CheckFault says why the store cannot inject f, or nil. Run calls it
	// for every fault before the run starts.
	CheckFault(f Fault) error
	// Inject injects f and returns once it is over (the member is back,
	// For elapsed), with a short account of what it did. When ctx ends
	// early it cuts the fault short but still restores the store.
	Inject(ctx context.Context, f Fault) (string, error)
}

// maxFaultLog bounds the entries of Summary.FaultLog.
const maxFaultLog = 64

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
				at := time.Since(start)
				what, err := fr.Inject(ctx, f)
				if err != nil && ctx.Err() != nil {
					// The workload ended under the fault: whatever
					// failed then says nothing about the store.
					what, err = "cut short when the workload ended", nil
				}
				r.count(func(s *Summary) {
					entry := fmt.Sprintf("%s %s: %s", at.Round(time.Millisecond), f, what)
					if err != nil {
						s.FaultErrors++
						entry = fmt.Sprintf("%s %s: failed: %v", at.Round(time.Millisecond), f, err)
					} else {
						s.Faults++
					}
					if len(s.FaultLog) < maxFaultLog {
						s.FaultLog = append(s.FaultLog, entry)
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
