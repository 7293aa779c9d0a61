// Package verdict is the answer every engine, check, explain and report
// give, in one vocabulary: a history satisfies a level, violates it, or the
// check could not tell (and says why).
package verdict

import "fmt"

// Verdict is the answer of a check. The zero value is no answer yet.
type Verdict uint8

const (
	// Satisfied: the history satisfies the level; a witness shows how.
	Satisfied Verdict = iota + 1
	// Violated: the history violates the level; a counterexample shows
	// why.
	Violated
	// Unknown: the check could not decide (a time or memory bound, more
	// explanations than it may try, a search that gave up); its reason
	// says why.
	Unknown
)

var names = [...]string{"", "satisfied", "violated", "unknown"}

// String is the name reports use.
func (v Verdict) String() string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// MarshalText writes the name, so that JSON reports carry "satisfied",
// "violated" or "unknown" ("" for no answer yet).
func (v Verdict) MarshalText() ([]byte, error) {
	if int(v) >= len(names) {
		return nil, fmt.Errorf("verdict: no name for %d", v)
	}
	return []byte(names[v]), nil
}

// UnmarshalText reads a name MarshalText wrote.
func (v *Verdict) UnmarshalText(b []byte) error {
	for i, n := range names {
		if string(b) == n {
			*v = Verdict(i)
			return nil
		}
	}
	return fmt.Errorf("verdict: unknown verdict %q (want satisfied, violated or unknown)", b)
}
