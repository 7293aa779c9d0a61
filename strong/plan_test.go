package strong

import (
	"testing"

	"github.com/hyperiso/hyperiso/history"
)

// TestPlansCoverStrongLevels holds the plan table to the level table: a
// plan for every level whose row names this engine, and for no other.
func TestPlansCoverStrongLevels(t *testing.T) {
	for _, row := range history.Levels {
		_, ok := planFor(row.Level)
		if ok != (row.Engine == history.Strong) {
			t.Errorf("level %s: engine %v, has a plan: %v", row.Name, row.Engine, ok)
		}
	}
	for l, p := range plans {
		if p.order == nil {
			t.Errorf("level %s: plan without a witness order", l)
		}
		if _, ok := plans[p.graph]; !ok {
			t.Errorf("level %s: builds the graph of %s, which has no plan", l, p.graph)
		}
	}
}

// TestStrategyTablesNamed: every strategy table a level's row names exists.
func TestStrategyTablesNamed(t *testing.T) {
	for _, row := range history.Levels {
		if row.Engine == history.Strong && row.Strategies != "" && strategyTables[row.Strategies] == nil {
			t.Errorf("level %s names strategy table %q, which does not exist", row.Name, row.Strategies)
		}
	}
}
