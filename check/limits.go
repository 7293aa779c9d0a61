package check

import (
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
