package collect

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/history"
)

// Summary reports what a run did. Transactions = Committed + Aborted +
// Unknown; every transaction the sessions attempted is counted, and each
// abort or unknown outcome has a reason.
type Summary struct {
	Store string `json:"store"`
	// Isolation is the run's level, or "mixed" when Mix says the levels.
	Isolation string `json:"isolation"`
	Mix       string `json:"mix,omitempty"`
	Workload  string `json:"workload"`
	// Sessions counts session ids in the history: one per client, plus
	// one for each continuation after an unknown outcome.
	Sessions int `json:"sessions"`
	// Planned is sessions × transactions per session.
	Planned      int `json:"planned"`
	Transactions int `json:"transactions"`
	Committed    int `json:"committed"`
	Aborted      int `json:"aborted"`
	Unknown      int `json:"unknown"`
	// ClientRollbacks counts aborted transactions the workload rolled back.
	ClientRollbacks int `json:"client_rollbacks"`
	// Operations counts recorded reads and writes (failed ones excluded).
	Operations int `json:"operations"`
	// FailedOps counts reads and writes that returned an error (each
	// aborted its transaction).
	FailedOps  int `json:"failed_ops"`
	Reconnects int `json:"reconnects"`
	// Fences counts the fence rounds' transactions (fences, fence reads,
	// the seed), recorded in the history but counted apart from the
	// workload's above.
	Fences int `json:"fences,omitempty"`
	// Reasons counts aborts and unknown outcomes by reason.
	Reasons map[string]int `json:"reasons"`
	// Setup, Duration and Teardown time the table creation and seeding,
	// the workload, and the table's removal.
	Setup    time.Duration `json:"setup_ns"`
	Duration time.Duration `json:"duration_ns"`
	Teardown time.Duration `json:"teardown_ns"`
	// InDoubt counts the unknown transactions whose commit was sent and
	// whose answer was lost (an error, a timeout, the run stopping): the
	// store may or may not have committed them.
	InDoubt int `json:"in_doubt"`
	// Faults counts the faults injected (Options.Faults), FaultErrors
	// those that failed, and FaultLog says when each started and ended
	// and what it did, in time order (FaultLogDropped counts the events
	// beyond its bound).
	Faults          int          `json:"faults,omitempty"`
	FaultErrors     int          `json:"fault_errors,omitempty"`
	FaultLog        []FaultEvent `json:"fault_log,omitempty"`
	FaultLogDropped int          `json:"fault_log_dropped,omitempty"`
	// Stopped says why the run ended before all planned transactions.
	Stopped string `json:"stopped,omitempty"`
	// Swept says what the run removed (or failed to remove) of what
	// killed runs left behind, before it began (Sweeper).
	Swept []string `json:"swept,omitempty"`
	// ByLevel counts a mixed run's transactions per level of the mix, in
	// the mix's order.
	ByLevel []LevelCount `json:"by_level,omitempty"`
}

// LevelCount counts the transactions of one level of a mix.
type LevelCount struct {
	Level        string `json:"level"`
	Transactions int    `json:"transactions"`
	Committed    int    `json:"committed"`
}

func (s *Summary) add(r record) {
	s.Transactions++
	if r.mix >= 0 && r.mix < len(s.ByLevel) {
		s.ByLevel[r.mix].Transactions++
		if r.status == history.Committed {
			s.ByLevel[r.mix].Committed++
		}
	}
	s.Operations += len(r.ops)
	switch r.status {
	case history.Committed:
		s.Committed++
	case history.Aborted:
		s.Aborted++
	default:
		s.Unknown++
	}
}

func (s *Summary) addReason(r string) {
	if _, ok := s.Reasons[r]; !ok && len(s.Reasons) >= maxReasons {
		r = "other"
	}
	s.Reasons[r]++
}

// TxnsPerSec is the throughput of attempted transactions.
func (s *Summary) TxnsPerSec() float64 { return rate(s.Transactions, s.Duration) }

// OpsPerSec is the throughput of recorded operations.
func (s *Summary) OpsPerSec() float64 { return rate(s.Operations, s.Duration) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// String renders the summary in a few lines.
func (s *Summary) String() string {
	var b strings.Builder
	iso := s.Isolation
	if s.Mix != "" {
		iso += " (" + s.Mix + ")"
	}
	fmt.Fprintf(&b, "%s at %s, workload %s\n", s.Store, iso, s.Workload)
	fmt.Fprintf(&b, "%d transactions in %d sessions: %d committed, %d aborted, %d unknown",
		s.Transactions, s.Sessions, s.Committed, s.Aborted, s.Unknown)
	if s.ClientRollbacks > 0 {
		fmt.Fprintf(&b, " (%d aborted by the client)", s.ClientRollbacks)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "%d operations in %s: %.0f ops/s, %.0f txns/s (setup %s, teardown %s)\n",
		s.Operations, s.Duration.Round(time.Millisecond), s.OpsPerSec(), s.TxnsPerSec(),
		s.Setup.Round(time.Millisecond), s.Teardown.Round(time.Millisecond))
	if len(s.ByLevel) > 0 {
		b.WriteString("by level:")
		for i, l := range s.ByLevel {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s %d (%d committed)", l.Level, l.Transactions, l.Committed)
		}
		b.WriteByte('\n')
	}
	if s.Fences > 0 {
		fmt.Fprintf(&b, "%d fence transactions (not counted above)\n", s.Fences)
	}
	if s.FailedOps > 0 || s.Reconnects > 0 {
		fmt.Fprintf(&b, "%d failed operations, %d reconnects\n", s.FailedOps, s.Reconnects)
	}
	if s.InDoubt > 0 {
		fmt.Fprintf(&b, "%d in doubt (commit sent, answer lost: recorded as unknown)\n", s.InDoubt)
	}
	if s.Faults > 0 || s.FaultErrors > 0 {
		fmt.Fprintf(&b, "%d faults injected", s.Faults)
		if s.FaultErrors > 0 {
			fmt.Fprintf(&b, ", %d failed", s.FaultErrors)
		}
		b.WriteString(":\n")
		for _, e := range s.FaultLog {
			fmt.Fprintf(&b, "  %s\n", e)
		}
		if s.FaultLogDropped > 0 {
			fmt.Fprintf(&b, "  (%d more events not logged)\n", s.FaultLogDropped)
		}
	}
	keys := make([]string, 0, len(s.Reasons))
	for k := range s.Reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if s.Reasons[keys[i]] != s.Reasons[keys[j]] {
			return s.Reasons[keys[i]] > s.Reasons[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6d  %s\n", s.Reasons[k], k)
	}
	if s.Stopped != "" {
		fmt.Fprintf(&b, "%s\n", s.Stopped)
	}
	for _, l := range s.Swept {
		fmt.Fprintf(&b, "%s\n", l)
	}
	return b.String()
}
