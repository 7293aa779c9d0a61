package check

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong"
	"github.com/stretchr/testify/require"
)

// TestCountersDocumented: every counter a check reports on the testdata
// histories, at every level and with every strategy, is explained in the
// README's counter tables (the report's "counters" object is part of the
// documented schema).
func TestCountersDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	start := strings.Index(string(readme), "Every level, for a list-append history")
	end := strings.Index(string(readme), "\n## Formats")
	require.True(t, start > 0 && end > start, "README's counter tables not found")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(string(readme[start:end]), -1) {
		documented[m[1]] = true
	}
	seen := map[string]string{}
	for _, p := range historyPaths(t, filepath.Join("..", "testdata")) {
		h := readHistory(t, p)
		for _, row := range history.Levels {
			strategies := strong.StrategyNames(row.Level)
			if len(strategies) == 0 {
				strategies = []string{""}
			}
			for _, s := range strategies {
				res, err := Check(context.Background(), h, row.Level, Options{Strategy: s, DefaultLevel: history.SER})
				if err != nil {
					continue // refused: nothing reported
				}
				for c := range res.Counters {
					if _, ok := seen[c]; !ok {
						seen[c] = p + " at " + row.Name + " " + s
					}
				}
			}
		}
	}
	require.Greater(t, len(seen), 30, "too few counters seen for the test to mean anything")
	var missing []string
	for c, where := range seen {
		if !documented[c] {
			missing = append(missing, c+" (from "+where+")")
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing, "counters the README does not explain")
}
