package check

import (
	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/internal/memlimit"
)

// enter records that the check has reached stage.
func (o Options) enter(res *Result, stage string) {
	res.Stage = stage
	if o.OnStage != nil {
		o.OnStage(stage)
	}
}

// fit returns the memory budget's Fit for the stages.
func (o Options) fit() func(need int64, what string) error {
	switch {
	case o.MaxBytes < 0:
		return func(int64, string) error { return nil }
	case o.MaxBytes > 0:
		return memlimit.Budget{Limit: o.MaxBytes, Source: "check.Options.MaxBytes"}.Fit
	}
	return memlimit.Default().Fit
}

// solverBytes estimates what a solver adds to enc: its clause arena (a
// three-word header and a word per literal, doubled as the arena grows) and
// some sixty bytes of state per variable. Learnt clauses come on top; Go's
// soft memory limit is what keeps them in check.
func solverBytes(enc *encode.Encoding) int64 {
	words := int64(0)
	for _, c := range enc.Clauses {
		words += 3 + int64(len(c))
	}
	return 8*words + 64*int64(enc.NumVars)
}
