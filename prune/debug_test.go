package prune_test

import (
	"context"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
	"github.com/hyperiso/hyperiso/prune"
)

func TestDebugPrune(t *testing.T) {
	for _, n := range []string{"BL-10k", "WH-10k", "HD-10k"} {
		h := loadBench(t, n)
		for _, lv := range []history.Level{history.SER, history.SI} {
			for range 3 {
				g, _ := hyperpolygraph.Build(h, lv, nil)
				prune.Prune(context.Background(), g, prune.Options{})
			}
		}
	}
}
