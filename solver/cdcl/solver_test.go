package cdcl

import "testing"

// Adding variables one at a time costs amortised constant allocations: the
// trail grows by doubling, not to the exact count.
func TestNewVarAmortised(t *testing.T) {
	s := New(0, Options{})
	for range 1000 {
		s.NewVar()
	}
	if a := testing.AllocsPerRun(5000, func() { s.NewVar() }); a > 0.5 {
		t.Fatalf("%.2f allocations per NewVar, want amortised O(1)", a)
	}
}
